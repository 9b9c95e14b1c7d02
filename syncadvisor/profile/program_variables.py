"""Which line of the program made each variable, and the choice a run changes there (the
child process of `--run`).

- A `tf.variable_creator_scope` creator is entered inside every `strategy.scope()` (so it
  sees the arguments before the strategy's own creator does). It finds the innermost
  frame in the program's files: a static site whose call spans that line is the site;
  otherwise the variable was made by library code on the program's behalf, and its site
  is the program's line: the line that constructed the Keras layer that made it (where
  `synchronized=True` or another argument goes), else the line running when it was made
  (a metric's constructor, the `apply_gradients` that made an optimizer's slots).
- A site a run overrides gets its `synchronization` and `aggregation` replaced, or, for a
  Keras BatchNormalization layer's line, `synchronized=True`: what the user can change at
  that line.
"""
from __future__ import annotations

import functools
import inspect
import sys
from typing import Any, Dict, List, Optional, Tuple

from ..model.tfapi import KERAS_MODULES
from . import program_state
from .plan import SYNCHRONIZED
from .program_state import Made, runtime_key, static_site, user_line


LAYER, METRIC, OPTIMIZER = "layer", "metric", "optimizer"


class _Keras:
    """The Keras classes of the packages the program imported, and which are patched."""

    def __init__(self) -> None:
        self.kinds: List[Tuple[type, str]] = []  # (base class, LAYER | METRIC | OPTIMIZER)
        self.norms: Tuple[type, ...] = ()  # BatchNormalization classes
        self.seen: set = set()

    def classes(self) -> Tuple[type, ...]:
        return tuple(cls for cls, _ in self.kinds)


_KERAS = _Keras()


def _bases(module) -> Tuple[List[Tuple[type, str]], List[type]]:
    kinds: List[Tuple[type, str]] = []
    norms: List[type] = []
    # Metrics and optimizers first: a tf_keras metric is a layer too, and is told as a metric.
    for path, kind in ((("metrics", "Metric"), METRIC), (("optimizers", "Optimizer"), OPTIMIZER),
                       (("optimizers", "legacy", "Optimizer"), OPTIMIZER),
                       (("layers", "Layer"), LAYER)):
        obj: Any = module
        try:
            for name in path:
                obj = getattr(obj, name)
        except Exception:  # a Keras without that class (or a lazy module that fails)
            continue
        if isinstance(obj, type):
            kinds.append((obj, kind))
    try:
        norms.append(module.layers.BatchNormalization)
    except Exception:
        pass
    return kinds, norms


def prepare_keras() -> None:
    """Patch the Keras packages imported so far, once each: layers note the line of the
    program that constructs them; BatchNormalization takes `synchronized=True` where a
    run asks for it. Called before the program runs and on every scope entry, so a Keras
    the program imports lazily (`tf.keras` on first use) is patched before it builds."""
    for name in KERAS_MODULES:
        module = sys.modules.get(name)
        if module is None or name in _KERAS.seen:
            continue
        kinds, norms = _bases(module)
        if not kinds:
            continue
        _KERAS.seen.add(name)
        _KERAS.kinds.extend(kinds)
        _KERAS.norms = _KERAS.norms + tuple(norms)
        for cls, kind in kinds:
            if kind == LAYER and "__init__" in vars(cls):
                _wrap_init(cls, _noting_construction)
        for cls in norms:
            if "__init__" in vars(cls):
                _wrap_init(cls, _synchronized_on_request)


def _wrap_init(cls: Any, wrapper) -> None:
    """Replace `cls.__init__` by `wrapper(it)`, which keeps its signature: Keras reads a
    layer's constructor arguments from `__init__`'s signature (`getfullargspec`, which does
    not follow `__wrapped__`, but does read `__signature__`)."""
    original = vars(cls)["__init__"]
    wrapped = wrapper(original)
    if wrapped is not original:
        functools.update_wrapper(wrapped, original)
        wrapped.__signature__ = inspect.signature(original)
    cls.__init__ = wrapped


def construction_line(obj, frame) -> Optional[Tuple[str, int]]:
    """The program's line that constructs `obj`: outward from `frame`, past the chain of
    `__init__` calls on `obj` (a subclass's, the program's own among them)."""
    while frame is not None and frame.f_code.co_name == "__init__" and \
            "self" in frame.f_code.co_varnames and frame.f_locals.get("self") is obj:
        frame = frame.f_back
    while frame is not None:
        where = user_line(frame)
        if where is not None:
            return where
        frame = frame.f_back
    return None


def _noting_construction(original):
    def __init__(self, *args, **kwargs):
        state = program_state.current
        if state is not None and id(self) not in state.constructed:
            where = construction_line(self, sys._getframe(1))
            if where is not None:
                state.constructed[id(self)] = (self, runtime_key(*where))
        return original(self, *args, **kwargs)

    return __init__


def _synchronized_on_request(original):
    try:
        position = list(inspect.signature(original).parameters).index("synchronized") - 1
    except ValueError:
        return original  # a BatchNormalization with no `synchronized`: nothing to change

    def __init__(self, *args, **kwargs):
        state = program_state.current
        wanted = [o for o in (state.overrides.values() if state is not None else ())
                  if o.get("setting") == SYNCHRONIZED]
        if wanted and len(args) <= position:
            where = construction_line(self, sys._getframe(1))
            if where is not None and any(runtime_key(*where) == o["site"] for o in wanted):
                kwargs["synchronized"] = True
        return original(self, *args, **kwargs)

    return __init__


def _attribute(state) -> Tuple[Optional[str], Any]:
    """(the site, the Keras object that made the variable) for a creation in progress."""
    frame: Optional[Any] = sys._getframe(2)
    owner = None
    classes = _KERAS.classes()
    while frame is not None:
        where = user_line(frame)
        if where is not None:
            site = static_site(*where)
            if site is not None:
                return site, owner
            if owner is not None and id(owner) in state.constructed:
                return state.constructed[id(owner)][1], owner
            return runtime_key(*where), owner
        if owner is None and classes and "self" in frame.f_code.co_varnames:
            candidate = frame.f_locals.get("self")
            if isinstance(candidate, classes):
                owner = candidate
        frame = frame.f_back
    return None, owner


def _creator(next_creator, **kwargs):
    state = program_state.current
    site, owner = _attribute(state) if state is not None else (None, None)
    override = state.overrides.get(site or "") if state is not None else None
    mine = override is not None and override.get("synchronization") is not None
    if override is not None and mine:
        import tensorflow as tf

        kwargs["synchronization"] = getattr(tf.VariableSynchronization,
                                            override["synchronization"])
        kwargs["aggregation"] = getattr(tf.VariableAggregation, override["aggregation"])
    try:
        variable = next_creator(**kwargs)
    except BaseException:
        if mine and state is not None and state.error_stage is None:
            state.error_stage = "create"
        raise
    if state is not None:
        state.made.append(Made(variable, site, owner))
    return variable


def owner_of(made: Made) -> Optional[Dict[str, Any]]:
    """What the report says of the Keras object that made a variable."""
    if made.owner is None:
        return None
    kind = next((k for cls, k in _KERAS.kinds if isinstance(made.owner, cls)), None)
    found: Dict[str, Any] = {"class": type(made.owner).__name__, "kind": kind}
    if _KERAS.norms and isinstance(made.owner, _KERAS.norms):
        found["synchronized"] = bool(getattr(made.owner, "synchronized", False))
    return found


class _WithCreator:
    """The strategy's creator scope, then ours inside it (so ours is called first)."""

    def __init__(self, outer):
        self.outer = outer
        self.inner = None

    def __enter__(self):
        import tensorflow as tf

        prepare_keras()
        result = self.outer.__enter__()
        self.inner = tf.variable_creator_scope(_creator)
        self.inner.__enter__()
        return result

    def __exit__(self, *exc):
        try:
            self.inner.__exit__(*exc)
        except BaseException:
            self.outer.__exit__(*exc)
            raise
        return self.outer.__exit__(*exc)


def install() -> None:
    from tensorflow.python.distribute import distribute_lib

    context = distribute_lib._CurrentDistributionContext
    original_init = context.__init__

    def __init__(self, strategy, var_creator_scope, *args, **kwargs):
        original_init(self, strategy, _WithCreator(var_creator_scope), *args, **kwargs)

    context.__init__ = __init__
