"""Reading what a run left in the program's variables (the child process of `--run`).

Every copy is read where it lives (`experimental_local_results`), never through the
variable's aggregation: a cross-replica read of an ON_READ variable with aggregation NONE
raises, and a read the program does not make must not make a choice fail. Under
MultiWorkerMirroredStrategy with more than one worker, each replica's copy is gathered
from every worker (one all-gather, replica-local reads inside), so copies are compared
across workers too; every worker takes part, as the program's own collectives do.

A variable of up to `FULL_ELEMENTS` elements is kept whole; a larger one as four sums
per copy (`STATS`), enough to tell that two runs left different values.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from .program_state import Made
from .program_variables import owner_of

FULL_ELEMENTS = 1 << 16
# Per copy of a large variable: sum, a cosine-weighted sum, sum of |x|, sum of x**2.
STATS = ("sum", "weighted", "abs", "squares")
MIRRORED, ON_READ, PLAIN = "mirrored", "on_read", "plain"


def _kind(variable) -> str:
    from tensorflow.python.distribute import values as tf_values

    if isinstance(variable, tf_values.SyncOnReadVariable):
        return ON_READ
    if isinstance(variable, tf_values.DistributedVariable):
        return MIRRORED
    return PLAIN


def _member(value) -> Optional[str]:
    return getattr(value, "name", None)


def _stats(flat):
    import numpy as np

    weights = np.cos(np.arange(flat.size, dtype=np.float64))
    return np.asarray([flat.sum(), flat @ weights, np.abs(flat).sum(), flat @ flat])


def _local_copies(variable, big: bool):
    """[copies, n] float64: each copy on this worker, read on its own device."""
    import numpy as np

    strategy = getattr(variable, "_distribute_strategy", None)
    parts = strategy.experimental_local_results(variable) if strategy is not None \
        else [variable]
    rows = []
    for part in parts:
        flat = np.asarray(part.numpy(), dtype=np.float64).ravel()
        rows.append(_stats(flat) if big else flat)
    return np.stack(rows) if rows else np.zeros((0, 0))


def _workers(strategy) -> int:
    local = len(getattr(strategy.extended, "worker_devices", ()) or ()) or 1
    return max(1, int(strategy.num_replicas_in_sync) // local)


def _gathered(strategy, variables: List[Any], big: List[bool]):
    """[replicas, total] float64 over every worker: each replica's copies, concatenated."""
    import tensorflow as tf

    def summary(x):
        weights = tf.cos(tf.range(tf.size(x), dtype=tf.float64))
        return tf.stack([tf.reduce_sum(x), tf.reduce_sum(x * weights),
                         tf.reduce_sum(tf.abs(x)), tf.reduce_sum(x * x)])

    def replica():
        parts = []
        for variable, large in zip(variables, big):
            # In replica context a read gives this replica's own copy, whatever the kind.
            flat = tf.reshape(tf.cast(variable.read_value(), tf.float64), [-1])
            parts.append(summary(flat) if large else flat)
        return tf.reshape(tf.concat(parts, 0), [1, -1])

    @tf.function(autograph=False)
    def gather():
        return strategy.gather(strategy.run(replica), axis=0)

    return gather().numpy()


def read_all(made: List[Made]) -> Tuple[List[Dict[str, Any]], Dict[str, Any]]:
    """(a record per variable, in the order the program made them; the arrays by key
    `v<index>`, one row per copy) for every distributed variable the program made."""
    records: List[Dict[str, Any]] = []
    arrays: Dict[str, Any] = {}
    kept = [m for m in made if getattr(m.variable, "_distribute_strategy", None) is not None]
    by_strategy: Dict[int, List[int]] = {}
    for index, m in enumerate(kept):
        v = m.variable
        shape = [int(d) if d is not None else -1 for d in getattr(v, "shape", ())]
        big = _size(shape) > FULL_ELEMENTS
        record: Dict[str, Any] = {
            "site": m.site, "name": getattr(v, "name", ""), "shape": shape,
            "dtype": getattr(getattr(v, "dtype", None), "name", ""), "kind": _kind(v),
            "synchronization": _member(getattr(v, "synchronization", None)),
            "aggregation": _member(getattr(v, "aggregation", None)),
            "trainable": bool(getattr(v, "trainable", False)),
            "stored": "stats" if big else "values",
        }
        owner = owner_of(m)
        if owner is not None:
            record["owner"] = owner
        try:
            arrays[f"v{index}"] = _local_copies(v, big)
            record["copies"] = int(arrays[f"v{index}"].shape[0])
        except Exception as exc:  # the profiler's own read failed: nothing is compared
            record["unread"] = f"{type(exc).__name__}: {exc}".splitlines()[0]
        records.append(record)
        by_strategy.setdefault(id(v._distribute_strategy), []).append(index)
    for indices in by_strategy.values():
        strategy = kept[indices[0]].variable._distribute_strategy
        if _workers(strategy) < 2:
            continue
        large = [records[i]["stored"] == "stats" for i in indices]
        try:
            rows = _gathered(strategy, [kept[i].variable for i in indices], large)
        except Exception as exc:
            for i in indices:
                records[i]["unread"] = f"{type(exc).__name__}: {exc}".splitlines()[0]
            continue
        start = 0
        for i, stats in zip(indices, large):
            width = len(STATS) if stats else _size(records[i]["shape"])
            arrays[f"v{i}"] = rows[:, start:start + width]
            records[i]["copies"] = int(rows.shape[0])
            records[i]["across_workers"] = True
            start += width
    return records, arrays


def _size(shape: List[int]) -> int:
    size = 1
    for d in shape:
        size *= max(d, 0)
    return size
