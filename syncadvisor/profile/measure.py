"""Measuring a pattern under each synchronization/aggregation choice, with real TensorFlow.

The only module of syncadvisor that imports TensorFlow (at import time: import it only
from `cli.run`). What is recorded per choice:

- `step_time_ms`: median, p10 and p90 of the wall time of each of the K timed calls of the
  step (a `tf.function` around `strategy.run`), after the warm-up calls (the first one traces).
- `reductions_per_step`: cross-device reductions in the traced step graph: `AddN` ops whose
  inputs come from more than one device (what `ReductionToOneDevice` does on CPUs), `NcclReduce`
  ops, and `CollectiveReduce*` / `NcclAllReduce` ops divided by the number of local replicas
  (each local device runs one per all-reduce).
- `bytes_per_step`: one copy of each tensor those reductions and collective moves carry.
- `transfers_per_step`: graph edges between two devices of this worker (each becomes a copy),
  plus collective broadcast/gather ops divided by the local replicas.
- `reductions_per_read`: the same count for one cross-replica read (`v.read_value()` in a
  `tf.function`, traced, never run), where ON_READ variables do their aggregation.
- `copies_agree`: after warm-up + K steps, every replica's copy (on every worker) holds one
  value; None for ON_READ, whose copies are local by design.
- `values_agree`: the value a cross-replica read would give (what `.numpy()`, a checkpoint
  or a metric result gets), computed from the copies as `compare.observed` does, equals the
  reference choice's; None for ON_READ + NONE, which has no such value. The copies are
  read where they live, never through the aggregation: the replay makes no read the
  pattern does not.
- `error`: the exception TensorFlow raised, with the stage (`create`, `step` or `read`).
"""
from __future__ import annotations

import gc
import math
import os
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from ..model.tfapi import SYNC_ON_READ  # noqa: E402
from .cluster import tf_config_cluster  # noqa: E402
from .compare import TOLERANCE_FLOOR, distance, observed  # noqa: E402
from .plan import (ADDITIVE, GRADIENT, PER_REPLICA, PYTHON_NUMBER, SCATTERS,  # noqa: E402
                   Pattern, Update, normalized)

MIRRORED = "mirrored"
MULTIWORKER = "multiworker"
COLLECTIVE_TIMEOUT_S = 300.0
LEARNING_RATE = 0.1

_COLLECTIVE_REDUCE = frozenset({"CollectiveReduce", "CollectiveReduceV2", "CollectiveReduceV3",
                                "CollectiveReduceScatterV2", "NcclAllReduce"})
_COLLECTIVE_MOVE = frozenset({"CollectiveBcastSend", "CollectiveBcastRecv", "CollectiveBcastSendV2",
                              "CollectiveBcastRecvV2", "CollectiveGather", "CollectiveGatherV2",
                              "CollectiveAllToAllV2", "CollectiveAllToAllV3", "NcclBroadcast"})


class ProfileError(Exception):
    """A setup problem worth one line to the user (exit 2)."""


class Environment:
    """The strategy and the devices it runs on."""

    def __init__(self, strategy, kind: str, devices: List[str], note: str, workers: int,
                 chief: bool, task: Optional[Dict[str, Any]]):
        self.strategy = strategy
        self.kind = kind
        self.devices = devices
        self.note = note
        self.workers = workers
        self.chief = chief
        self.task = task

    @property
    def replicas(self) -> int:
        return int(self.strategy.num_replicas_in_sync)

    @property
    def local_replicas(self) -> int:
        return max(1, len(self.strategy.extended.worker_devices))

    @property
    def strategy_name(self) -> str:
        # MultiWorkerMirroredStrategy's class is named CollectiveAllReduceStrategy
        if self.kind == MULTIWORKER:
            return "MultiWorkerMirroredStrategy"
        return type(self.strategy).__name__


def _quiet() -> None:
    tf.get_logger().setLevel("ERROR")
    try:
        from absl import logging as absl_logging

        absl_logging.set_verbosity(absl_logging.ERROR)
    except Exception:  # pragma: no cover - absl is a TensorFlow dependency
        pass


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def setup(kind: str, devices: Optional[int]) -> Environment:
    """Configure the devices (before TensorFlow initialises them) and build the strategy."""
    _quiet()
    gpus = tf.config.list_physical_devices("GPU")
    for gpu in gpus:
        try:
            tf.config.experimental.set_memory_growth(gpu, True)
        except (RuntimeError, ValueError):
            pass  # already initialised: keep TensorFlow's setting
    if kind == MULTIWORKER:
        return _setup_multiworker(gpus, devices)
    if len(gpus) >= 2:
        chosen = gpus[:devices] if devices else gpus
        if devices and devices > len(gpus):
            raise ProfileError(f"--devices {devices}: only {len(gpus)} GPUs are visible")
        names = [f"/gpu:{i}" for i in range(len(chosen))]
        strategy = tf.distribute.MirroredStrategy(names)
        note = f"{len(chosen)} of {len(gpus)} GPUs"
    else:
        n = devices or 2
        cpu = tf.config.list_physical_devices("CPU")[0]
        try:
            tf.config.set_logical_device_configuration(
                cpu, [tf.config.LogicalDeviceConfiguration() for _ in range(n)])
        except RuntimeError:
            pass  # TensorFlow already initialised in this process: use what it has
        logical = tf.config.list_logical_devices("CPU")
        if len(logical) < n:
            raise ProfileError(
                f"TensorFlow was initialised in this process with {len(logical)} CPU device(s) "
                f"before the profiler could split the CPU into {n}: run it in a fresh process")
        names = [d.name for d in logical[:n]]
        strategy = tf.distribute.MirroredStrategy(names)
        why = "no GPU found" if not gpus else "only one GPU found"
        note = f"the CPU split into {_plural(n, 'logical device')}: {why}"
    return Environment(strategy, MIRRORED, list(strategy.extended.worker_devices), note, 1,
                       True, None)


def _setup_multiworker(gpus, devices: Optional[int]) -> Environment:
    config = os.environ.get("TF_CONFIG")
    task = None
    workers = 1
    chief = True
    if config:
        try:
            workers, task, chief = tf_config_cluster(config)
        except (ValueError, AttributeError, TypeError) as exc:
            raise ProfileError(f"TF_CONFIG is not valid JSON for a cluster: {exc}") from None
    options = tf.distribute.experimental.CommunicationOptions(timeout_seconds=COLLECTIVE_TIMEOUT_S)
    strategy = tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)
    local = list(strategy.extended.worker_devices)
    where = "the GPUs" if gpus else "one CPU device"
    note = (f"{_plural(workers, 'worker')} from TF_CONFIG, each with {where} "
            f"({_plural(len(local), 'local replica')})")
    if not config:
        note = f"no TF_CONFIG: one local worker with {where}"
    if devices and not gpus:
        note += ("; --devices does not apply: MultiWorkerMirroredStrategy uses one CPU device "
                 "per worker")
    return Environment(strategy, MULTIWORKER, local, note, workers, chief, task)


# --- the traced graph ----------------------------------------------------------------------

def _graphs(graph, seen=None) -> List[Any]:
    """A traced graph and the function graphs nested in it."""
    seen = set() if seen is None else seen
    if id(graph) in seen:
        return []
    seen.add(id(graph))
    found = [graph]
    for function in getattr(graph, "_functions", {}).values():
        nested = getattr(function, "graph", None)
        if nested is not None:
            found.extend(_graphs(nested, seen))
    return found


_DEVICE_CACHE: Dict[str, str] = {}


def _device(name: str) -> str:
    if not name:
        return ""
    cached = _DEVICE_CACHE.get(name)
    if cached is None:
        try:
            spec = tf.DeviceSpec.from_string(name)
            cached = f"{spec.job}/{spec.replica}/{spec.task}/{spec.device_type}/{spec.device_index}"
        except Exception:
            cached = name
        _DEVICE_CACHE[name] = cached
    return cached


class _Placement:
    """Where each op runs: its requested device, or, for ops TensorFlow colocates with a
    resource (ReadVariableOp, AssignVariableOp, ...), the device of the variable handle,
    which a function graph receives as a captured placeholder."""

    def __init__(self, graphs):
        self._captured: Dict[int, str] = {}
        self._memo: Dict[int, str] = {}
        for graph in graphs:
            captures = getattr(graph, "captures", None) or []
            for pair in captures:
                try:
                    external, internal = pair
                    device = external.device
                except (TypeError, ValueError, AttributeError):
                    continue
                if device:
                    self._captured[id(internal.op)] = _device(device)

    def of(self, op, depth: int = 0) -> str:
        key = id(op)
        if key in self._memo:
            return self._memo[key]
        device = _device(op.device)
        if not device:
            device = self._captured.get(key, "")
        if not device and depth < 20:
            for t in op.inputs:
                if t.dtype == tf.resource:
                    device = self.of(t.op, depth + 1)
                    if device:
                        break
        self._memo[key] = device
        return device


def _tensor_bytes(tensor) -> int:
    count = tensor.shape.num_elements()
    return 0 if count is None else count * tensor.dtype.size


def count_ops(graph, local_replicas: int) -> Tuple[int, int, int]:
    """(cross-device reductions, cross-device transfers, bytes reduced or broadcast) in a
    traced graph; the bytes are one copy of each reduced or broadcast tensor."""
    graphs = _graphs(graph)
    place = _Placement(graphs)
    reductions = 0
    collective_reduce = 0
    collective_move = 0
    transfers = 0
    nbytes = 0
    collective_bytes = 0
    for g in graphs:
        for op in g.get_operations():
            here = place.of(op)
            sources = [place.of(t.op) for t in op.inputs if t.dtype != tf.resource]
            if op.type == "AddN" and len({s for s in sources if s}) > 1:
                reductions += 1
                nbytes += _tensor_bytes(op.outputs[0])
            elif op.type == "NcclReduce":
                reductions += 1
                nbytes += _tensor_bytes(op.outputs[0])
            elif op.type in _COLLECTIVE_REDUCE or op.type in _COLLECTIVE_MOVE:
                if op.type in _COLLECTIVE_REDUCE:
                    collective_reduce += 1
                else:
                    collective_move += 1
                if op.outputs:
                    collective_bytes += _tensor_bytes(op.outputs[0])
            if here:
                transfers += sum(1 for s in sources if s and s != here)
    reductions += math.ceil(collective_reduce / local_replicas)
    transfers += math.ceil(collective_move / local_replicas)
    nbytes += math.ceil(collective_bytes / local_replicas)
    return reductions, transfers, nbytes


# --- one pattern under one choice --------------------------------------------------------------

def _percentile(sorted_values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(sorted_values), q))


def _error_text(exc: BaseException) -> str:
    """`ValueError: <message>`; tf.function's "in user code:" traceback is cut off."""
    name = type(exc).__name__
    message = str(exc).strip()
    if message.startswith("in user code:"):
        lines = message.splitlines()
        for index in range(len(lines) - 1, -1, -1):
            if lines[index].strip().startswith(f"{name}: "):
                message = " ".join(line.strip() for line in lines[index:]).strip()[len(name) + 2:]
                break
    return f"{name}: {message}" if message else name


class Profiler:
    def __init__(self, env: Environment, steps: int, warmup: int,
                 on_choice: Optional[Callable[[Tuple[str, str]], None]] = None):
        self.env = env
        self.steps = steps
        self.warmup = max(1, warmup)
        self.on_choice = on_choice
        self._serial = 0

    # The pattern's step, for one variable ------------------------------------------------
    def _values(self, pattern: Pattern, dtype):
        shape = list(pattern.shape)

        def per_replica(i, replica):
            scale = (replica + 1.0) * (1.0 + tf.math.floormod(i, 3.0))
            return tf.cast(tf.fill(shape, scale), dtype)

        def constant(i):
            return tf.cast(tf.fill(shape, 1.0 + tf.math.floormod(i, 3.0)), dtype)

        def python_number():
            one = 1 if dtype.is_integer or dtype == tf.bool else 1.0
            if not shape:
                return one
            return np.full(shape, one, dtype=dtype.as_numpy_dtype)

        return per_replica, constant, python_number

    def _apply(self, v, update: Update, value, dtype):
        method = update.method
        if method in ADDITIVE:
            return getattr(v, method)(value)
        if method == "assign":
            if update.decay is not None:
                blended = tf.cast(v.read_value(), tf.float32) * update.decay + \
                    tf.cast(value, tf.float32) * (1.0 - update.decay)
                return v.assign(tf.cast(blended, dtype))
            return v.assign(value)
        if method in SCATTERS:
            rows = min(2, int(v.shape[0])) if v.shape.rank else 0
            value = tf.convert_to_tensor(value, dtype=dtype)
            if value.shape.rank == 0:
                value = tf.fill(v.shape, value)
            slices = tf.IndexedSlices(values=value[:rows], indices=tf.range(rows))
            return getattr(v, method)(slices)
        raise ValueError(f"cannot replay update method {method!r}")  # pragma: no cover

    def _build_step(self, v, pattern: Pattern, dtype):
        strategy = self.env.strategy
        per_replica, constant, python_number = self._values(pattern, dtype)
        replica_updates = [u for u in pattern.updates if u.replica_context]
        before = [u for u in pattern.updates if not u.replica_context and u.value != PER_REPLICA]
        after = [u for u in pattern.updates if not u.replica_context and u.value == PER_REPLICA]
        shape = list(pattern.shape)

        def value_of(update, i, replica):
            if update.value == PER_REPLICA:
                return per_replica(i, replica)
            if update.value == PYTHON_NUMBER:
                return python_number()
            return constant(i)

        def gradient_step(i, replica):
            ctx = tf.distribute.get_replica_context()
            x = tf.cast(per_replica(i, replica), tf.float32)
            with tf.GradientTape() as tape:
                tape.watch(v)
                loss = tf.reduce_mean(tf.square(tf.cast(v, tf.float32) - x))
            grad = tape.gradient(loss, v)

            def apply(distribution, g):
                reduced = distribution.extended.reduce_to(tf.distribute.ReduceOp.SUM, g, v)
                distribution.extended.update(
                    v, lambda var, gg: var.assign_sub(tf.cast(gg * LEARNING_RATE, var.dtype)),
                    args=(reduced,), group=False)

            ctx.merge_call(apply, args=(grad,))

        def replica_fn(i):
            replica = tf.cast(tf.distribute.get_replica_context().replica_id_in_sync_group,
                              tf.float32)
            for update in replica_updates:
                if update.method == GRADIENT:
                    gradient_step(i, replica)
                else:
                    self._apply(v, update, value_of(update, i, replica), dtype)
            return tf.cast(tf.fill(shape, 1.0), tf.float32) * (replica + 1.0) * \
                (1.0 + tf.math.floormod(i, 3.0))

        @tf.function(autograph=False)
        def step(i):
            for update in before:
                self._apply(v, update, value_of(update, i, 0.0), dtype)
            out = strategy.run(replica_fn, args=(i,))
            for update in after:
                total = strategy.reduce(tf.distribute.ReduceOp.SUM, out, axis=None)
                self._apply(v, update, tf.cast(total, dtype), dtype)
            return tf.constant(0)

        return step

    # Reading the values --------------------------------------------------------------------
    def _gather(self, fn, *args):
        strategy = self.env.strategy
        per_replica = strategy.run(fn, args=args)
        return strategy.gather(per_replica, axis=0).numpy()

    def _copies(self, v) -> np.ndarray:
        """[replicas, n]: every replica's copy on every worker, each read where it lives."""
        strategy = self.env.strategy
        if self.env.workers <= 1:
            return np.stack([np.asarray(c.numpy(), dtype=np.float64).reshape(-1)
                             for c in strategy.experimental_local_results(v)])

        @tf.function(autograph=False)
        def local_copies():
            def local():  # in replica context a read is this replica's own copy
                return tf.reshape(tf.cast(tf.identity(v), tf.float64), [1, -1])
            return strategy.run(local)

        return strategy.gather(local_copies(), axis=0).numpy()

    def _reductions_per_read(self, v) -> int:
        @tf.function(autograph=False)
        def read():
            return tf.identity(v.read_value())

        graph = read.get_concrete_function().graph
        return count_ops(graph, self.env.local_replicas)[0]

    # One choice ----------------------------------------------------------------------------
    def measure(self, pattern: Pattern, sync: str, agg: str) -> Dict[str, Any]:
        result: Dict[str, Any] = {
            "synchronization": sync, "aggregation": agg, "step_time_ms": None,
            "reductions_per_step": None, "transfers_per_step": None, "bytes_per_step": None,
            "reductions_per_read": None, "copies_agree": None, "values_agree": None,
            "error": None, "error_stage": None,
        }
        dtype = tf.as_dtype(pattern.dtype)
        self._serial += 1
        stage = "create"
        v = step = None
        try:
            initial = tf.cast(tf.fill(list(pattern.shape), pattern.initial), dtype)
            with self.env.strategy.scope():
                v = tf.Variable(
                    initial, trainable=pattern.trainable,
                    synchronization=getattr(tf.VariableSynchronization, sync),
                    aggregation=getattr(tf.VariableAggregation, agg),
                    name=f"syncadvisor_profile_{self._serial}")
            stage = "step"
            step = self._build_step(v, pattern, dtype)
            indices = [tf.constant(float(i)) for i in range(self.warmup + self.steps)]
            for i in indices[: self.warmup]:
                step(i)
            graph = step.get_concrete_function(indices[0]).graph
            reductions, transfers, nbytes = count_ops(graph, self.env.local_replicas)
            result["reductions_per_step"] = reductions
            result["transfers_per_step"] = transfers
            result["bytes_per_step"] = nbytes
            times = []
            for i in indices[self.warmup:]:
                start = time.perf_counter()
                step(i)
                times.append((time.perf_counter() - start) * 1000.0)
            times.sort()
            result["step_time_ms"] = {
                "median": round(_percentile(times, 50), 4),
                "p10": round(_percentile(times, 10), 4),
                "p90": round(_percentile(times, 90), 4),
            }
            stage = "read"
            result["_copies"] = self._copies(v)
            try:  # traced only: the replay makes no read; ON_READ + NONE cannot be read
                result["reductions_per_read"] = self._reductions_per_read(v)
            except Exception:
                result["reductions_per_read"] = None
        except Exception as exc:  # every exception is a result: an illegal choice is reported
            result["error"] = _error_text(exc)
            result["error_stage"] = stage
        finally:
            del v, step
        return result

    def measure_all(self, pattern: Pattern,
                    choices: List[Tuple[str, str]]) -> List[Dict[str, Any]]:
        results = []
        for choice in choices:
            if self.on_choice:
                self.on_choice(choice)
            results.append(self.measure(pattern, *choice))
        gc.collect()
        _compare(results, pattern)
        return results


def _compare(results: List[Dict[str, Any]], pattern: Pattern) -> None:
    """Fill `copies_agree` and `values_agree` against the implied choice's run."""
    def record(r):
        return {"kind": "on_read" if r["synchronization"] == SYNC_ON_READ else "mirrored",
                "aggregation": r["aggregation"], "dtype": pattern.dtype}

    by = {(r["synchronization"], r["aggregation"]): r for r in results}
    ref = by.get(normalized(pattern.reference))
    ref_copies = ref.get("_copies") if ref is not None else None
    ref_value = observed(record(ref), ref_copies) if ref_copies is not None else None
    for r in results:
        copies = r.pop("_copies", None)
        if copies is None:
            continue
        if r["synchronization"] != SYNC_ON_READ and len(copies) > 1:
            r["copies_agree"] = distance(copies, copies[:1]) <= TOLERANCE_FLOOR
        value = observed(record(r), copies)
        if value is not None and ref_value is not None:
            r["values_agree"] = distance(value, ref_value[:1]) <= TOLERANCE_FLOOR


def tensorflow_version() -> str:
    return tf.__version__
