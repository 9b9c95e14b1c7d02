"""Steps and cross-device traffic of the program being run (the child process of `--run`).

- Steps: a step is one outermost call of a `tf.function` whose trace ran `strategy.run`
  (a custom loop's step, Keras' train function under `fit`), or one eager `strategy.run`;
  not while Keras' `evaluate` or `predict` runs (`fit`'s validation included). After
  `warmup + steps` steps, `StopProgram` (a BaseException, so `except Exception` and
  Keras' loops let it through) ends the program.
- Costs: calls of `CrossDeviceOps` reductions, broadcasts and replica-context all-reduces
  are counted with their tensors' bytes while a function traces (the last trace, where a
  call traces twice), and charged to every later call of that function, and eager calls
  are charged as they run. Traffic between steps joins the window when the next step
  ends, so what follows the last step (the program's final reads) never counts. A
  per-step cost is the window's total over its steps, so an optimizer update every other
  step counts one half.
- What a step depends on besides its inputs, which a run on one replica does not
  reproduce: the random ops its trace holds, and where the program reads
  `num_replicas_in_sync` (a global batch computed from it).
"""
from __future__ import annotations

import os
import sys
import time
from typing import Any, Optional

from ..model.tfapi import KERAS_EVALUATION_METHODS, KERAS_MODULES
from . import program_state
from .program_state import Costs, State


class StopProgram(BaseException):
    """Raised after the last measured step to end the user's program."""


def _nbytes(value) -> Optional[int]:
    """Bytes of one copy of `value` (a tensor, a distributed value, IndexedSlices, a nest)."""
    import tensorflow as tf

    total = 0
    for item in tf.nest.flatten(value, expand_composites=False):
        values = getattr(item, "values", None)
        if isinstance(values, (tuple, list)) and values:  # a DistributedValues
            item = values[0]
        if isinstance(item, tf.IndexedSlices):
            item = item.values
        shape = getattr(item, "shape", None)
        dtype = getattr(item, "dtype", None)
        if shape is None or dtype is None:
            return None
        count = tf.TensorShape(shape).num_elements()
        if count is None:
            return None
        total += count * tf.as_dtype(dtype).size
    return total


def _charge(reductions: int, broadcasts: int, nbytes: Optional[int]) -> None:
    state = program_state.current
    if state is None:
        return
    costs = Costs()
    costs.reductions, costs.broadcasts = reductions, broadcasts
    if nbytes is None:
        costs.unknown_bytes = 1
    else:
        costs.bytes = nbytes
    if state.active is not None:
        state.active.add(costs)
    elif state.measuring:
        state.pending.add(costs)


def _counted(method, kind: str):
    def wrapper(self, *args, **kwargs):
        state = program_state.current
        if state is None or state.depth:
            return method(self, *args, **kwargs)
        state.depth += 1
        try:
            if kind == "reduce":  # (reduce_op, per_replica_value, destinations, options)
                _charge(1, 0, _nbytes(args[1] if len(args) > 1 else kwargs["per_replica_value"]))
            elif kind == "batch_reduce":  # (reduce_op, value_destination_pairs, options)
                pairs = list(args[1] if len(args) > 1 else kwargs["value_destination_pairs"])
                sizes = [_nbytes(v) for v, _ in pairs]
                _charge(len(pairs), 0, None if None in sizes else sum(sizes))
            elif kind == "broadcast":  # (tensor, destinations)
                _charge(0, 1, _nbytes(args[0] if args else kwargs["tensor"]))
            elif kind == "all_reduce":  # (reduce_op, value, replica_id, options): per replica
                replica_id = args[2] if len(args) > 2 else kwargs.get("replica_id", 0)
                if replica_id == 0:
                    import tensorflow as tf

                    value = args[1] if len(args) > 1 else kwargs["value"]
                    _charge(len(tf.nest.flatten(value)), 0, _nbytes(value))
            return method(self, *args, **kwargs)
        finally:
            state.depth -= 1

    wrapper.__wrapped__ = method  # type: ignore[attr-defined]
    return wrapper


def _finish_step(state: State, seconds: float, costs: Costs) -> None:
    """A step ended: it and the traffic since the previous step (logging, an optimizer
    update every N steps) join the window; what comes after the last step (the program's
    final reads) never does."""
    state.random |= costs.random
    if state.measuring:
        state.window.add(state.pending)
        state.window.add(costs)
        state.times.append(seconds * 1000.0)
    state.pending = Costs()
    state.done += 1
    if state.done >= state.warmup + state.steps:
        raise StopProgram()


_KERAS_DIRS = tuple(f"{os.sep}{name}{os.sep}" for name in KERAS_MODULES)


def _keras_evaluating() -> bool:
    """Whether Keras' `evaluate` or `predict` is running (also `fit`'s validation, which
    calls `evaluate`): their test and predict functions run `strategy.run` too, but they
    are not training steps, so their traffic is charged to the next step as other traffic
    between steps is, and their times are not step times."""
    frame: Optional[Any] = sys._getframe(2)
    while frame is not None:
        code = frame.f_code
        if code.co_name in KERAS_EVALUATION_METHODS and any(d in code.co_filename
                                                     for d in _KERAS_DIRS):
            return True
        frame = frame.f_back
    return False


def _function_call(original):
    def __call__(self, *args, **kwargs):
        import tensorflow as tf

        state = program_state.current
        if state is None or not tf.executing_eagerly():
            return original(self, *args, **kwargs)
        if state.active is not None:
            if not tf.distribute.in_cross_replica_context():
                return original(self, *args, **kwargs)  # a replica's thread: charged below
            # Called eagerly inside an eager `strategy.run` (which runs a tf.function `fn`
            # as a clone of it, once for all replicas): its trace's traffic recurs on every
            # call, so charge it to the enclosing step each time, not only while it traces.
            outer, traced = state.active, Costs()
            state.active = traced
            before = self.experimental_get_tracing_count()
            try:
                result = original(self, *args, **kwargs)
            finally:
                state.active = outer
            if self.experimental_get_tracing_count() != before:
                state.traces[id(self)] = traced
            outer.add(state.traces.get(id(self), traced))
            return result
        traced = Costs()
        state.active, state.saw_run = traced, False
        before = self.experimental_get_tracing_count()
        start = time.perf_counter()
        try:
            result = original(self, *args, **kwargs)
        except BaseException:
            if id(self) in state.step_functions or state.saw_run:
                state.error_stage = state.error_stage or "step"
            raise
        finally:
            state.active = None
        seconds = time.perf_counter() - start
        if self.experimental_get_tracing_count() != before:
            state.traces[id(self)] = traced
            if state.saw_run:
                state.step_functions.add(id(self))
        costs = state.traces.get(id(self), Costs())
        if id(self) in state.step_functions and not _keras_evaluating():
            _finish_step(state, seconds, costs)
        elif state.measuring:
            state.pending.add(costs)
        return result

    __call__.__wrapped__ = original
    return __call__


# Random number ops that are not dataset ops: a step that runs one on each replica draws
# numbers a run on one replica draws differently (dropout, noise, augmentation in the step).
_RANDOM_OTHER = frozenset({"TruncatedNormal", "Multinomial", "RngSkip", "RngReadAndSkip",
                           "ParameterizedTruncatedNormal"})
_RANDOM_PREFIXES = ("StatefulUniform", "StatefulStandardNormal", "StatefulTruncatedNormal",
                    "StatelessTruncated", "StatelessMultinomial", "StatelessShuffle")


def _is_random(op_type: str) -> bool:
    if op_type.endswith("Dataset"):
        return False
    return "Random" in op_type or op_type.startswith(_RANDOM_PREFIXES) \
        or op_type in _RANDOM_OTHER


def random_ops(graph, seen=None) -> set:
    """The random op types in a traced graph and the function graphs nested in it."""
    seen = set() if seen is None else seen
    if id(graph) in seen:
        return set()
    seen.add(id(graph))
    found = {op.type for op in graph.get_operations() if _is_random(op.type)}
    for function in list(getattr(graph, "_functions", {}).values()):
        nested = getattr(function, "graph", None)
        if nested is not None:
            found |= random_ops(nested, seen)
    return found


def _tracing(original):
    """Each trace's traffic on its own: a call may trace more than once (a first call that
    creates variables is traced again once they are lifted out), and what then runs is the
    last trace, so it replaces what the call's earlier traces counted; a function traced
    inside another's trace is part of that graph, so its traffic adds to it."""
    def create(*args, **kwargs):
        state = program_state.current
        if state is None or state.active is None:
            return original(*args, **kwargs)
        outer, mine = state.active, Costs()
        state.active = mine
        state.trace_depth += 1
        try:
            result = original(*args, **kwargs)
            graph = getattr(result, "graph", None)
            if graph is not None:
                mine.random |= random_ops(graph)
            return result
        finally:
            state.trace_depth -= 1
            state.active = outer
            if state.trace_depth:
                outer.add(mine)
            else:
                outer.become(mine)

    return create


def _strategy_run(original):
    def run(self, fn, args=(), kwargs=None, options=None):
        state = program_state.current
        if state is None:
            return original(self, fn, args, kwargs, options)
        if self not in state.strategies:
            state.strategies.append(self)
        if state.active is not None:  # tracing a function: it is a step function
            state.saw_run = True
            return original(self, fn, args, kwargs, options)
        if _keras_evaluating():  # Keras' eager test or predict step (run_eagerly=True)
            return original(self, fn, args, kwargs, options)
        eager = Costs()
        state.active = eager
        start = time.perf_counter()
        try:
            result = original(self, fn, args, kwargs, options)
        except BaseException:
            state.error_stage = state.error_stage or "step"
            raise
        finally:
            state.active = None
        _finish_step(state, time.perf_counter() - start, eager)
        return result

    run.__wrapped__ = original
    return run


def _replica_count(prop: property) -> property:
    """`num_replicas_in_sync`, noting where the program's own code reads it (its direct
    caller, not a library that reads it on the program's behalf)."""
    def getter(self):
        state = program_state.current
        if state is not None:
            where = program_state.user_line(sys._getframe(1))
            if where is not None:
                text = f"{where[0]}:{where[1]}"
                if text not in state.replica_reads:
                    state.replica_reads.append(text)
        return prop.fget(self)

    return property(getter)


def install() -> None:
    from tensorflow.python.distribute import cross_device_ops, distribute_lib
    from tensorflow.python.eager.polymorphic_function import (polymorphic_function,
                                                              tracing_compilation)

    function = polymorphic_function.Function
    function.__call__ = _function_call(function.__call__)
    tracing_compilation._create_concrete_function = _tracing(
        tracing_compilation._create_concrete_function)
    for cls in (distribute_lib.StrategyBase, distribute_lib.Strategy):
        if "run" in vars(cls):
            cls.run = _strategy_run(vars(cls)["run"])
        if isinstance(vars(cls).get("num_replicas_in_sync"), property):
            cls.num_replicas_in_sync = _replica_count(vars(cls)["num_replicas_in_sync"])
    names = {"reduce_implementation": "reduce", "batch_reduce_implementation": "batch_reduce",
             "broadcast_implementation": "broadcast", "_all_reduce": "all_reduce"}
    for cls in list(vars(cross_device_ops).values()):
        if isinstance(cls, type) and issubclass(cls, cross_device_ops.CrossDeviceOps):
            for name, kind in names.items():
                if name in vars(cls):
                    setattr(cls, name, _counted(vars(cls)[name], kind))
