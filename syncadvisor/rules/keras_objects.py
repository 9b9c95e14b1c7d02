"""What Keras objects a rule meets are: a class's Keras family and kind, a Keras 3
optimizer's slot variables from its constructor's options. Shared by the rules about
optimizers and models (TFS108, TFS109); the names they match on are tfapi's."""
from __future__ import annotations

from typing import Optional, Tuple

from ..model import tfapi
from ..model.facts import BOOL, FLOAT, INT, NONE, Construction
from .base import RuleContext


def model_family(qname: str, ctx: RuleContext) -> Optional[str]:
    """The Keras family of a model class (library or project), or None."""
    for name in ctx.class_bases(qname):
        for prefix, family in tfapi.KERAS_FAMILY_PREFIXES:
            if not name.startswith(prefix):
                continue
            segments = name.split(".")
            if segments[-1] in tfapi.MODEL_CLASS_NAMES or \
                    tfapi.MODEL_MODULE_SEGMENTS & set(segments):
                return family
    return None


def object_kind(qname: str, ctx: RuleContext) -> Tuple[Optional[str], Optional[str], str]:
    """(family, OPTIMIZER or METRIC, the Keras class's last name) of a class, or Nones."""
    for name in ctx.class_bases(qname):
        for prefix, family in tfapi.KERAS_FAMILY_PREFIXES:
            segments = name.split(".")
            if not name.startswith(prefix) or tfapi.NOT_STATEFUL_OBJECT_SEGMENTS & set(segments):
                continue
            for segment, kind in tfapi.KERAS_KIND_SEGMENTS:
                if segment in segments:
                    return family, kind, segments[-1]
    return None, None, ""


def literal(value) -> Tuple[bool, object]:
    """(True, the Python value) of a number, bool or None written out; (False, None)."""
    if value.kind in (INT, BOOL):
        return value.literal is not None, value.literal
    if value.kind == NONE:
        return True, None
    if value.kind == FLOAT:
        try:
            return True, float(value.text.replace("_", ""))
        except ValueError:
            return False, None
    return False, None


def makes_slots(construction: Optional[Construction], cls: str) -> Optional[bool]:
    """For a Keras 3 optimizer that may have no slot variables (`tfapi.KERAS3_SLOT_OPTIONS`):
    True when its construction gives an option that makes some (a value other than the
    ones that make none, or one not written out as a literal); False when every such
    option is left out or written as a value that makes none; None when `*args` or
    `**kwargs` may carry one, or the class always has slots (not in the table)."""
    options = tfapi.KERAS3_SLOT_OPTIONS.get(cls)
    if options is None:
        return None
    if construction is None:
        return False  # made as `SGD` by a call the model does not record: no options
    if any(a.star for a in construction.args):
        return None
    positions = {position: name for name, (position, _) in options.items()}
    for i, argument in enumerate(construction.args):
        name = argument.keyword if argument.keyword is not None else positions.get(i)
        if name not in options:
            continue
        known, value = literal(argument.value)
        if not known or value not in options[name][1]:
            return True
    return False
