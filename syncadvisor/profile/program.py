"""Running the user's own program under one choice per site (the child process of `--run`).

`python -m syncadvisor.profile.program SPEC.json` runs the program named in the spec once
per run read from the spec's `commands_fd` (a JSON line each), in this one process, and
answers each with a JSON line on `results_fd` (values read go to an `.npz` beside the
spec). The parent (`runs.py`) reads them; a run that kills this process is told apart by
its missing line.

What a run changes and what it watches, all without editing the user's files:

- Choice: a `tf.variable_creator_scope` creator is entered inside every
  `strategy.scope()` (so it sees the arguments before the strategy's own creator does).
  It matches a creation to a site by its innermost frame in the project's files, and for
  the one site the run overrides, replaces `synchronization` and `aggregation`.
- Steps: a step is one outermost call of a `tf.function` whose trace ran `strategy.run`
  (a custom loop's step, Keras' train function under `fit`), or one eager `strategy.run`;
  not while Keras' `evaluate` or `predict` runs (`fit`'s validation included).
  After `warmup + steps` steps, `StopProgram` (a BaseException, so `except Exception`
  and Keras' loops let it through) ends the program.
- Costs: calls of `CrossDeviceOps` reductions, broadcasts and replica-context all-reduces
  are counted with their tensors' bytes while a function traces (the last trace, where a
  call traces twice), and charged to every later call of that function, and eager calls
  are charged as they run. Traffic between steps joins the window when the next step
  ends, so what follows the last step (the program's final reads) never counts. A
  per-step cost is the window's total over its steps, so an optimizer update every other
  step counts one half.
- Values: when the program stops, each site's variables are read in cross-replica context
  (what `.numpy()`, a checkpoint or a metric result get) and each replica's copy is read;
  every other variable made in a strategy's scope (the model's weights, the optimizer's
  slots) is read as a fingerprint, so that a choice that changes them is seen.
"""
from __future__ import annotations

import json
import os
import random
import runpy
import sys
import time
import traceback
from typing import Any, Dict, List, Optional

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from ..model.tfapi import (KERAS3_MODULE, KERAS_EVALUATION_METHODS,  # noqa: E402
                           KERAS_MODULES)


class StopProgram(BaseException):
    """Raised after the last measured step to end the user's program."""


class _Costs:
    __slots__ = ("reductions", "broadcasts", "bytes", "unknown_bytes")

    def __init__(self) -> None:
        self.reductions = 0
        self.broadcasts = 0
        self.bytes = 0
        self.unknown_bytes = 0

    def become(self, other: "_Costs") -> None:
        self.reductions, self.broadcasts = other.reductions, other.broadcasts
        self.bytes, self.unknown_bytes = other.bytes, other.unknown_bytes

    def add(self, other: "_Costs") -> None:
        self.reductions += other.reductions
        self.broadcasts += other.broadcasts
        self.bytes += other.bytes
        self.unknown_bytes += other.unknown_bytes


class _State:
    """What one run has seen (module-wide: TensorFlow may call back from its own threads)."""

    def __init__(self, spec: Dict[str, Any], run: Dict[str, Any]):
        self.warmup = int(spec["warmup"])
        self.steps = int(spec["steps"])
        self.override = run.get("override")  # {"site", "synchronization", "aggregation"} or None
        self.active: Optional[_Costs] = None  # the outermost function call being traced
        self.saw_run = False
        self.depth = 0  # nesting of counted cross-device calls (count the outermost only)
        self.trace_depth = 0  # nesting of traces (a function traced inside another's trace)
        self.done = 0  # steps finished
        self.window = _Costs()
        self.pending = _Costs()  # traffic since the last measured step, not yet charged
        self.times: List[float] = []
        self.traces: Dict[int, _Costs] = {}
        self.step_functions: set = set()
        self.created: Dict[str, list] = {}
        self.every: list = []  # (site or None, variable): all made in a strategy's scope
        self.strategies: list = []
        self.error_stage: Optional[str] = None

    @property
    def measuring(self) -> bool:
        return self.done >= self.warmup


_STATE: Optional[_State] = None
_SITES: Dict[str, List[tuple]] = {}  # realpath -> [(first, last, site id)]
_PROJECT = ""
_PREFIXES: tuple = ()


# --- matching a creation to a site ------------------------------------------------------------

def _in_project(path: str) -> bool:
    return path.startswith(_PROJECT) and not path.startswith(_PREFIXES)


_REAL: Dict[str, str] = {}


def _real(filename: str) -> str:
    real = _REAL.get(filename)
    if real is None:
        real = _REAL[filename] = os.path.realpath(filename) if not filename.startswith("<") \
            else filename
    return real


_GENERATED: Dict[str, Dict[int, tuple]] = {}  # AutoGraph's file -> its line -> origin


def _source_map(code, filename: str) -> Dict[int, tuple]:
    import gc
    import types

    for holder in gc.get_referrers(code):
        source_map = getattr(holder, "ag_source_map", None)
        if isinstance(holder, types.FunctionType) and source_map:
            return {where.lineno: (origin.loc.filename, origin.loc.lineno)
                    for where, origin in source_map.items() if where.filename == filename}
    return {}


def _origin(frame) -> Optional[tuple]:
    """(file, line) in the user's source of a frame in AutoGraph's generated code (the body
    of a `tf.function` that creates a variable on its first call runs there). The converted
    function carries the file's `ag_source_map`; a nested branch function (`if_body`) does
    not, so the frames outward in the same file are tried too."""
    filename = frame.f_code.co_filename
    lines = _GENERATED.get(filename)
    if lines is None:
        lines = {}
        probe = frame
        while probe is not None and not lines:
            if probe.f_code.co_filename == filename:
                lines = _source_map(probe.f_code, filename)
            probe = probe.f_back
        _GENERATED[filename] = lines
    return lines.get(frame.f_lineno)


def _site_of_caller() -> Optional[str]:
    """The site whose call is running in the innermost frame in the project's files."""
    frame: Optional[Any] = sys._getframe(2)
    while frame is not None:
        path = _real(frame.f_code.co_filename)
        line = frame.f_lineno
        if "__autograph_generated_file" in path:
            origin = _origin(frame)
            if origin is not None:
                path, line = _real(origin[0]), origin[1]
        if path in _SITES or _in_project(path):
            for first, last, site in _SITES.get(path, ()):
                if first <= line <= last:
                    return site
            return None
        frame = frame.f_back
    return None


def _creator(next_creator, **kwargs):
    state = _STATE
    site = _site_of_caller()
    override = state.override if state is not None else None
    mine = override is not None and site == override["site"]
    if mine:
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
    if site is not None and state is not None:
        state.created.setdefault(site, []).append(variable)
    if state is not None:
        state.every.append((site, variable))
    return variable


class _WithCreator:
    """The strategy's creator scope, then ours inside it (so ours is called first)."""

    def __init__(self, outer):
        self.outer = outer
        self.inner = None

    def __enter__(self):
        import tensorflow as tf

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


# --- counting cross-device traffic ------------------------------------------------------------

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
    state = _STATE
    if state is None:
        return
    costs = _Costs()
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
        state = _STATE
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


# --- steps ------------------------------------------------------------------------------------

def _finish_step(state: _State, seconds: float, costs: _Costs) -> None:
    """A step ended: it and the traffic since the previous step (logging, an optimizer
    update every N steps) join the window; what comes after the last step (the program's
    final reads) never does."""
    if state.measuring:
        state.window.add(state.pending)
        state.window.add(costs)
        state.times.append(seconds * 1000.0)
    state.pending = _Costs()
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

        state = _STATE
        if state is None or not tf.executing_eagerly():
            return original(self, *args, **kwargs)
        if state.active is not None:
            if not tf.distribute.in_cross_replica_context():
                return original(self, *args, **kwargs)  # a replica's thread: charged below
            # Called eagerly inside an eager `strategy.run` (which runs a tf.function `fn`
            # as a clone of it, once for all replicas): its trace's traffic recurs on every
            # call, so charge it to the enclosing step each time, not only while it traces.
            outer, traced = state.active, _Costs()
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
        traced = _Costs()
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
        costs = state.traces.get(id(self), _Costs())
        if id(self) in state.step_functions and not _keras_evaluating():
            _finish_step(state, seconds, costs)
        elif state.measuring:
            state.pending.add(costs)
        return result

    __call__.__wrapped__ = original
    return __call__


def _tracing(original):
    """Each trace's traffic on its own: a call may trace more than once (a first call that
    creates variables is traced again once they are lifted out), and what then runs is the
    last trace, so it replaces what the call's earlier traces counted; a function traced
    inside another's trace is part of that graph, so its traffic adds to it."""
    def create(*args, **kwargs):
        state = _STATE
        if state is None or state.active is None:
            return original(*args, **kwargs)
        outer, mine = state.active, _Costs()
        state.active = mine
        state.trace_depth += 1
        try:
            return original(*args, **kwargs)
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
        state = _STATE
        if state is None:
            return original(self, fn, args, kwargs, options)
        if self not in state.strategies:
            state.strategies.append(self)
        if state.active is not None:  # tracing a function: it is a step function
            state.saw_run = True
            return original(self, fn, args, kwargs, options)
        if _keras_evaluating():  # Keras' eager test or predict step (run_eagerly=True)
            return original(self, fn, args, kwargs, options)
        eager = _Costs()
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


def _install_hooks() -> None:
    from tensorflow.python.distribute import cross_device_ops, distribute_lib
    from tensorflow.python.eager.polymorphic_function import (polymorphic_function,
                                                              tracing_compilation)

    context = distribute_lib._CurrentDistributionContext
    original_init = context.__init__

    def __init__(self, strategy, var_creator_scope, *args, **kwargs):
        original_init(self, strategy, _WithCreator(var_creator_scope), *args, **kwargs)

    context.__init__ = __init__
    function = polymorphic_function.Function
    function.__call__ = _function_call(function.__call__)
    tracing_compilation._create_concrete_function = _tracing(
        tracing_compilation._create_concrete_function)
    for cls in (distribute_lib.StrategyBase, distribute_lib.Strategy):
        if "run" in vars(cls):
            cls.run = _strategy_run(vars(cls)["run"])
    names = {"reduce_implementation": "reduce", "batch_reduce_implementation": "batch_reduce",
             "broadcast_implementation": "broadcast", "_all_reduce": "all_reduce"}
    for cls in list(vars(cross_device_ops).values()):
        if isinstance(cls, type) and issubclass(cls, cross_device_ops.CrossDeviceOps):
            for name, kind in names.items():
                if name in vars(cls):
                    setattr(cls, name, _counted(vars(cls)[name], kind))


# --- devices ----------------------------------------------------------------------------------

def _setup_devices(count: Optional[int]) -> Dict[str, Any]:
    import tensorflow as tf

    tf.get_logger().setLevel("ERROR")
    try:
        from absl import logging as absl_logging

        absl_logging.set_verbosity(absl_logging.ERROR)
    except ImportError:  # pragma: no cover - absl comes with TensorFlow
        pass
    gpus = tf.config.list_physical_devices("GPU")
    if os.environ.get("TF_CONFIG"):
        return {"note": "the program's own strategy over the cluster in TF_CONFIG"}
    if len(gpus) >= 2:
        chosen = gpus[:count] if count else gpus
        tf.config.set_visible_devices(chosen, "GPU")
        return {"note": f"{len(chosen)} of {len(gpus)} GPUs"}
    if gpus:
        tf.config.set_visible_devices([], "GPU")
    n = count or 2
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(
        cpu, [tf.config.LogicalDeviceConfiguration() for _ in range(n)])
    why = "only one GPU found" if gpus else "no GPU found"
    return {"note": f"the CPU split into {n} logical devices ({why}); a MirroredStrategy() "
                    f"with no devices given spans them"}


# --- one run ----------------------------------------------------------------------------------

def _purge_project_modules() -> None:
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if path and _in_project(_real(path)) and not name.startswith("syncadvisor"):
            del sys.modules[name]


def _reseed(seed: int) -> None:
    import numpy as np
    import tensorflow as tf

    for name in KERAS_MODULES:
        module = sys.modules.get(name)
        if module is not None:
            try:
                module.backend.clear_session()
            except Exception:  # a program's Keras may be half-imported; seeds still follow
                pass
    random.seed(seed)
    np.random.seed(seed)
    tf.random.set_seed(seed)
    keras = sys.modules.get(KERAS3_MODULE)
    if keras is not None and hasattr(getattr(keras, "utils", None), "set_random_seed"):
        keras.utils.set_random_seed(seed)


def _read(variable, strategy) -> Dict[str, Any]:
    """The cross-replica value and every replica's copy."""
    import numpy as np

    out: Dict[str, Any] = {}
    try:
        with strategy.scope():
            out["value"] = np.asarray(variable.read_value())
    except Exception as exc:
        out["error"] = f"{type(exc).__name__}: {exc}".splitlines()[0]
    try:
        out["copies"] = [np.asarray(c.read_value() if hasattr(c, "read_value") else c)
                         for c in strategy.experimental_local_results(variable)]
    except Exception:
        out["copies"] = []
    return out


def _fingerprint(variable, strategy) -> Optional[List[float]]:
    """[sum, a weighted sum, sum of |x|, sum of x**2] of the value read in cross-replica
    context: enough to tell whether a run changed a variable it did not override."""
    import numpy as np

    try:
        with strategy.scope():
            value = np.asarray(variable.read_value(), dtype=np.float64).ravel()
    except Exception:
        return None
    weights = np.cos(np.arange(value.size, dtype=np.float64))
    return [float(value.sum()), float(value @ weights), float(np.abs(value).sum()),
            float(value @ value)]


def error_text(exc: BaseException) -> str:
    """`Type: message` in a line or two: TensorFlow's graph errors carry a "Detected at
    node ... (most recent call last)" stack of the trace (the profiler's frames among
    them), which says nothing the message does not; tf.function's "in user code:" too."""
    kept = []
    for line in str(exc).splitlines():
        text = line.strip()
        if not text or text.startswith(("File ", "Detected at node", "in user code:")) or \
                "(most recent call last)" in text:
            continue
        kept.append(text)
    name = type(exc).__name__
    for index in range(len(kept) - 1, -1, -1):  # "in user code:" ends with the real error
        if kept[index].startswith(f"{name}: "):
            kept = [kept[index][len(name) + 2:]] + kept[index + 1:]
            break
    message = " ".join(kept)
    if len(message) > 400:
        message = message[:397] + "..."
    return f"{name}: {message}" if message else name


def _target(spec: Dict[str, Any]):
    target = spec["target"]
    argv = list(spec.get("args", []))
    if "module" in target:
        sys.argv = [target["module"]] + argv

        def go():
            runpy.run_module(target["module"], run_name="__main__", alter_sys=True)
    else:
        script = target["script"]
        sys.argv = [script] + argv
        folder = os.path.dirname(os.path.abspath(script))
        if not sys.path or sys.path[0] != folder:
            sys.path.insert(0, folder)

        def go():
            runpy.run_path(script, run_name="__main__")
    return go


def _run_once(spec: Dict[str, Any], run: Dict[str, Any], out_dir: str) -> Dict[str, Any]:
    global _STATE
    _purge_project_modules()
    _reseed(int(spec["seed"]))
    state = _State(spec, run)
    _STATE = state
    result: Dict[str, Any] = {"id": run["id"]}
    error = None
    try:
        _target(spec)()
        result["ended"] = "finished"
    except StopProgram:
        result["ended"] = "stopped"
    except SystemExit as exc:
        code = exc.code
        result["ended"] = "exited"
        if code not in (None, 0):
            error = f"SystemExit: the program exited with {code!r}"
    except BaseException as exc:  # the user's program raised: the run's error
        if isinstance(exc, KeyboardInterrupt):
            raise
        error = error_text(exc)
        result["traceback"] = "".join(traceback.format_exception(exc))[-4000:]
        result["ended"] = "raised"
    finally:
        _STATE = None
    if error:
        result["error"] = error
        # After a step has run, the program's own code raised (a final read of the variable).
        result["error_stage"] = state.error_stage or ("after" if state.done else "program")
    measured = max(0, state.done - state.warmup)
    result["steps"] = measured
    result["steps_total"] = state.done
    result["step_times_ms"] = state.times
    result["costs"] = {"reductions": state.window.reductions,
                       "broadcasts": state.window.broadcasts,
                       "bytes": state.window.bytes,
                       "unknown_bytes": state.window.unknown_bytes}
    if state.strategies:
        strategy = state.strategies[0]
        name = type(strategy).__name__
        # MultiWorkerMirroredStrategy's class is CollectiveAllReduceStrategy.
        result["strategy"] = ("MultiWorkerMirroredStrategy"
                              if name == "CollectiveAllReduceStrategy" else name)
        result["replicas"] = int(strategy.num_replicas_in_sync)
        result["devices"] = list(strategy.extended.worker_devices)
    arrays: Dict[str, Any] = {}
    reads: Dict[str, List[Dict[str, Any]]] = {}
    for site, variables in state.created.items():
        reads[site] = []
        for index, variable in enumerate(variables):
            strategy = getattr(variable, "_distribute_strategy", None)
            if strategy is None:
                reads[site].append({"distributed": False})
                continue
            got = _read(variable, strategy)
            entry: Dict[str, Any] = {"distributed": True,
                                     "class": type(variable).__name__,
                                     "copies": len(got["copies"])}
            if "error" in got:
                entry["error"] = got["error"]
            else:
                arrays[f"{site}|{index}|value"] = got["value"]
            for replica, copy in enumerate(got["copies"]):
                arrays[f"{site}|{index}|copy{replica}"] = copy
            reads[site].append(entry)
    result["created"] = reads
    # A run is compared with others only on the variables it did not override (`runs.
    # others_differ` skips the judged site), and its own site was read whole above.
    overridden = (state.override or {}).get("site")
    result["fingerprints"] = [
        {"site": site, "name": getattr(v, "name", ""), "shape": str(getattr(v, "shape", "")),
         "stats": None if site is not None and site == overridden
         else _fingerprint(v, v._distribute_strategy)}
        for site, v in state.every if getattr(v, "_distribute_strategy", None) is not None]
    loaded = {_real(getattr(m, "__file__", None) or "") for m in list(sys.modules.values())}
    if "script" in spec["target"]:
        loaded.add(_real(spec["target"]["script"]))
    result["project_files"] = sorted(p for p in loaded if p and _in_project(p))
    if arrays:
        import numpy as np

        path = os.path.join(out_dir, f"values-{run['id']}.npz")
        np.savez(path, **arrays)
        result["values_file"] = path
    return result


def main(argv: List[str]) -> int:
    global _PROJECT, _PREFIXES
    with open(argv[0], encoding="utf-8") as handle:
        spec = json.load(handle)
    _PROJECT = os.path.join(os.path.realpath(spec["project"]), "")
    prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    prefixes.add(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
    _PREFIXES = tuple(os.path.join(p, "") for p in prefixes)
    for site in spec["sites"]:
        _SITES.setdefault(os.path.realpath(site["path"]), []).append(
            (site["first"], site["last"], site["id"]))
    commands = os.fdopen(spec["commands_fd"], "r", encoding="utf-8")
    results = os.fdopen(spec["results_fd"], "w", encoding="utf-8")
    device = _setup_devices(spec.get("devices"))
    _install_hooks()
    import tensorflow as tf

    out_dir = os.path.dirname(os.path.abspath(argv[0]))
    for line in commands:  # one run per line until the parent closes the pipe
        run = json.loads(line)
        result = _run_once(spec, run, out_dir)
        result["device_note"] = device["note"]
        result["tf_version"] = tf.__version__
        results.write(json.dumps(result) + "\n")
        results.flush()
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    # Not sys.exit: Python would wait for the program's non-daemon threads (a logger thread
    # the stopped program never got to join), and the parent would wait for this process.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
