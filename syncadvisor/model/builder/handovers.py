"""What an argument hands over to the function it calls (`Bound`s of names, attributes
and items), resolved once every binding of the module is known.
"""
from __future__ import annotations

import ast
from sys import intern
from typing import List, Optional, Sequence, Tuple

from .. import tfapi
from ..facts import (
    BOUND_ATTR, BOUND_CALL, BOUND_CONTAINER, BOUND_LOCAL, BOUND_NAMES, BOUND_QNAME,
    BOUND_SELF_ATTR, Bound, Construction,
)
from ..names import Binding, PendingRef
from .syntax import ATTRIBUTE, CURRENT_STRATEGY_NAMES, NAME, PASSABLE, argument_slot, dotted_parts
from .state import Function, Walk
from .bindings import bound_for, ref_bound


def handover(w: Walk, callee: Bound, items: Sequence[Tuple[Optional[str], Optional[ast.AST],
                                                           str]],
             node: ast.Call, fn: Function, always: bool = False) -> None:
    """Record a call of `callee` with arguments (keyword, value, star), if one hands an
    object over (or `always`)."""
    passed = tuple(handed_bound(w, value) if value is not None and not star and
                   value.__class__ in PASSABLE else None for _, value, star in items)
    if always or any(passed):
        w.model.constructions.append(Construction(
            callee, tuple(argument_slot(keyword, star) for keyword, _, star in items),
            passed, w.span(node), fn.id, tuple(fn.scopes)))


def inert(w: Walk, bound: Bound) -> bool:
    """Whether a resolved binding can denote no object linking follows (`usage.objects`):
    a local computed in place (`x = a + b`), what a library function returns
    (`x = tf.reduce_sum(y)`) -- not a construction, a variable's creation, a wrapped
    function or the current strategy."""
    if bound.creation is not None:
        return False
    if bound.kind == BOUND_LOCAL:
        return True
    qname = bound.qname
    if bound.kind != BOUND_CALL or not qname:
        return False
    top, _, rest = qname.partition(".")
    return top in tfapi.LIBRARY_MODULES and top != w.package and \
        not rest.rpartition(".")[2][:1].isupper() and \
        qname not in tfapi.FUNCTION_WRAPPERS and qname not in tfapi.CURRENT_STRATEGY_CALLS


def handed_attribute(w: Walk, node: ast.Attribute) -> Optional[Bound]:
    """`self.x` or `a.b` as an argument: one Bound per scope, as `handed_bound` makes for
    names (without a span: nothing reports where an argument is)."""
    value = node.value
    if w.is_self(value):
        key: Tuple[object, str] = (w.fn.klass, node.attr)
        bound = w.handed_names.get(key)
        if bound is None:
            bound = w.handed_names[key] = Bound(
                BOUND_SELF_ATTR, w.fn.klass, intern(f"self.{node.attr}"), None,
                node.attr)
        return bound
    parts = dotted_parts(node)
    if parts is None:
        return ref_bound(w, node)
    key = (id(w.scope), ".".join(parts))
    if key in w.handed_names:
        return w.handed_names[key]
    inner = handed_bound(w, value)
    bound = w.handed_names[key] = None if inner is None else Bound(
        BOUND_ATTR, None, intern(key[1]), None, node.attr, (inner,))
    if bound is not None:
        w.pending_bounds.append((bound, w.ref(parts)))
    return bound


def handed_bound(w: Walk, value: ast.AST) -> Optional[Bound]:
    """What an argument hands over: a name, an attribute or item, what a call returns,
    the elements of a list, tuple, set or dict's values; None for anything else."""
    kind = value.__class__
    if kind is NAME:
        name = value.id  # type: ignore[attr-defined]
        key = (id(w.scope), name)
        handed = w.handed_names
        if key in handed:
            return handed[key]
        if name == w.fn.self_name and w.fn.klass is not None:
            return None  # (`self`)
        if not w.finishing:
            bound: Optional[Bound] = Bound(BOUND_NAMES, None, intern(name))
            w.pending_names.append((w.ref((name,)), bound))  # type: ignore[arg-type]
        else:  # every binding is known: the one it may denote, or a choice of them
            live = [b for b in bounds_of_name(w, PendingRef(w.scope, w.seq + 1,
                                                            (name,)))
                    if not inert(w, b)]
            bound = None if not live else live[0] if len(live) == 1 else \
                Bound(BOUND_NAMES, None, intern(name), None, None, tuple(live))
        w.handed_names[key] = bound
        return bound
    if kind is ATTRIBUTE:
        return handed_attribute(w, value)  # type: ignore[arg-type]
    if kind is ast.Subscript:
        return ref_bound(w, value)
    if kind is ast.Call:
        # What is made here (`MirroredStrategy()`, `Adam()`, `tf.Variable(...)`), or the
        # current strategy; not what a function computes (`ops.cast(x)`).
        func = value.func  # type: ignore[attr-defined]
        last = func.attr if func.__class__ is ATTRIBUTE else \
            func.id if func.__class__ is NAME else ""
        if not last[:1].isupper() and id(value) not in w.creation_of_node and \
                last not in CURRENT_STRATEGY_NAMES:
            return None
        bound = bound_for(w, value, w.code(value))
        return None if bound.kind == BOUND_LOCAL and bound.creation is None else bound
    elements: List[ast.AST] = getattr(value, "values" if kind is ast.Dict else "elts", [])
    options = tuple(b for b in (handed_bound(w, e) for e in elements
                                if e is not None and e.__class__ in PASSABLE) if b)
    if not options:
        return None
    return Bound(BOUND_CONTAINER, text=w.code(value), span=w.span(value),
                 options=options)


# A use of a name that may have more bindings than this where it is used denotes what
# cannot be told (none of them), not each: every use listing every binding would take
# work and memory that grow with the square of the bindings (a name assigned thousands
# of times in one scope, as generated code does).
MAX_NAME_BINDINGS = 256


def bounds_of_name(w: Walk, ref: PendingRef) -> List[Bound]:
    """Every binding a plain name may have where it is used: in the scope that binds it,
    those that reach the use (if/else branches, a loop's later iterations); from
    another scope (a function body reading a module's name), every binding there. None
    past MAX_NAME_BINDINGS."""
    # The scope `NameResolver.lookup` finds the name in.
    own, entries = w.resolver.visible(ref.scope, ref.parts[0])
    if own and ref.reach:
        entries = ref.reach  # type: ignore[assignment]
    if len(entries) > MAX_NAME_BINDINGS:
        return []
    return [b.bound if b.alias_parts is None else resolved_bound(w, b) for b in entries]


def resolved_bound(w: Walk, binding: Binding) -> Bound:
    bound = binding.bound
    if binding.alias_parts is not None:
        qname = w.resolver.resolve_binding(binding)
        return Bound(BOUND_QNAME, qname, text=bound.text, span=bound.span) if qname else \
            Bound(BOUND_LOCAL, text=bound.text, span=bound.span)
    return bound
