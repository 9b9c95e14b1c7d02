"""Judging a run's values against the program's own run on one replica (numpy, no
TensorFlow).

What the program computes is what it computes on one replica, with the same global batch
and seed: a choice is right where the program, run under it on N replicas, leaves the
values the one-replica run leaves. Values are read per copy (`program_values.py`):

- a mirrored (ON_WRITE) or plain variable: every copy is compared with the one-replica
  value, so copies that diverge also differ;
- an ON_READ variable: the value a cross-replica read gives (`.numpy()`, a checkpoint, a
  metric's result), computed here from its copies as its aggregation says (their sum,
  their mean, the first); one with aggregation NONE has no such value, so only what it
  does to the program's other variables counts.

Two values agree when they differ by at most the tolerance times the larger's largest
magnitude, or by no more than float rounding (`ROUNDING` of the largest magnitude of any
of the run's variables: a bias that only rounding moves, before a BatchNormalization, is
all noise); integers exactly. The tolerance is `TOLERANCE_FLOOR`, or `NOISE_FACTOR` times
how far two runs of the program as written drift apart where that is more: a program
that is not reproducible run to run cannot be held to a tighter bound than itself.

Of a site's runs, a variable outside the site that differs from the one-replica run in
every run, the same way in all (the same values as under the code's choice), is not
that site's doing (a layer elsewhere, randomness in the step): it is named and left out
of that site's judgement. Where no choice of a site leaves the one-replica values even so,
and the rest of the program does not match the one-replica run either, the site cannot
be judged: the difference may be the program's, not the site's.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from ..model.tfapi import AGG_MEAN, AGG_ONLY_FIRST_REPLICA, AGG_SUM

TOLERANCE_FLOOR = 1e-4
ROUNDING = 1e-6
NOISE_FACTOR = 10.0
# Two runs of the program as written further apart than this: values are not judged.
UNSTEADY = 1e-2
_EXACT = ("int", "uint", "bool")
MIRRORED, ON_READ, PLAIN = "mirrored", "on_read", "plain"
_LINEAR_STATS = 2  # of a large variable's four sums, those that add up over copies


class Values:
    """A run's variables: the child's records, and their copies loaded on first use."""

    def __init__(self, result: Dict[str, Any]):
        self.result = result
        self.records: List[Dict[str, Any]] = list(result.get("variables") or [])
        self._arrays: Optional[Dict[str, Any]] = None
        self.keys = _keys(self.records)
        self._magnitude: Optional[float] = None

    def rows(self, index: int):
        if self._arrays is None:
            self._arrays = {}
            path = self.result.get("values_file")
            if path:
                import numpy as np

                with np.load(path) as data:
                    self._arrays = {name: data[name] for name in data.files}
        return self._arrays.get(f"v{index}")

    def floor(self) -> float:
        """The magnitude below which a difference is float rounding, as a scale for
        `distance`: `ROUNDING` of the largest value of any float variable, over the
        tolerance floor (so that `distance <= TOLERANCE_FLOOR` means within rounding)."""
        if self._magnitude is None:
            import numpy as np

            largest = 0.0
            for index, record in enumerate(self.records):
                rows = self.rows(index)
                if rows is not None and rows.size and not _exact(record) and \
                        record.get("stored") != "stats":
                    largest = max(largest, float(np.max(np.abs(rows))))
            self._magnitude = largest
        return ROUNDING / TOLERANCE_FLOOR * self._magnitude


def _keys(records: Sequence[Dict[str, Any]]) -> Dict[tuple, int]:
    """(name, shape, occurrence) -> index: how two runs' variables are paired."""
    seen: Dict[tuple, int] = {}
    keys: Dict[tuple, int] = {}
    for index, record in enumerate(records):
        base = (record.get("name"), tuple(record.get("shape") or ()))
        occurrence = seen.get(base, 0)
        seen[base] = occurrence + 1
        keys[base + (occurrence,)] = index
    return keys


def _exact(record: Dict[str, Any]) -> bool:
    return str(record.get("dtype", "")).startswith(_EXACT)


def observed(record: Dict[str, Any], rows):
    """The rows the program can read of a variable: every copy of a mirrored or plain one;
    an ON_READ one's cross-replica value; None where there is none (ON_READ + NONE)."""
    import numpy as np

    if rows is None:
        return None
    if record.get("kind") != ON_READ:
        return rows
    aggregation = record.get("aggregation")
    linear = rows[:, :_LINEAR_STATS] if record.get("stored") == "stats" else rows
    if aggregation == AGG_SUM:
        return np.sum(linear, axis=0, keepdims=True)
    if aggregation == AGG_MEAN:
        return np.mean(linear, axis=0, keepdims=True)
    if aggregation == AGG_ONLY_FIRST_REPLICA:
        return linear[:1]
    return None


def distance(a, b, floor: float = 0.0) -> float:
    """How far apart two arrays are, relative to the larger's largest magnitude (or to
    `floor`, where that is more); every row of `a` against every row of `b` (one row
    broadcasts). Infinite where shapes differ."""
    import numpy as np

    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape[-1:] != b.shape[-1:] or a.size == 0 and b.size == 0:
        return 0.0 if a.shape[-1:] == b.shape[-1:] else float("inf")
    scale = max(float(np.max(np.abs(a))) if a.size else 0.0,
                float(np.max(np.abs(b))) if b.size else 0.0, floor)
    gap = float(np.max(np.abs(a - b)))
    if gap == 0.0:
        return 0.0
    return gap / scale if scale > 0 else float("inf")


def _agree(record: Dict[str, Any], a, b, tolerance: float, floor: float = 0.0) -> bool:
    import numpy as np

    if _exact(record):
        return a.shape[-1:] == b.shape[-1:] and bool(np.all(np.asarray(a) == np.asarray(b)))
    return distance(a, b, floor) <= tolerance


def calibrate(first: Values, second: Values) -> Tuple[float, List[str]]:
    """(the largest relative drift of a float variable between two runs of the same
    choice, the integer variables whose values differ between them)."""
    drift, unsteady = 0.0, []
    for key, i in first.keys.items():
        j = second.keys.get(key)
        if j is None:
            continue
        a, b = first.rows(i), second.rows(j)
        if a is None or b is None:
            continue
        record = first.records[i]
        if _exact(record):
            if a.shape != b.shape or not (a == b).all():
                unsteady.append(record.get("name", ""))
        else:
            drift = max(drift, distance(a, b, first.floor()) if a.shape == b.shape
                        else float("inf"))
    return drift, unsteady


def tolerance_from(drift: Optional[float]) -> float:
    if drift is None:
        return TOLERANCE_FLOOR
    return max(TOLERANCE_FLOOR, NOISE_FACTOR * drift)


def copies_agree(values: Values, site: str, tolerance: float) -> Optional[bool]:
    """Whether the site's mirrored variables hold one value in every copy (on every
    worker); None where the site has none (ON_READ copies are local by design)."""
    judged = None
    for index, record in enumerate(values.records):
        if record.get("site") != site or record.get("kind") == ON_READ:
            continue
        rows = values.rows(index)
        if rows is None or len(rows) < 2:
            continue
        judged = True
        if not _agree(record, rows, rows[:1], tolerance, values.floor()):
            return False
    return judged


def _differences(values: Values, reference: Values, tolerance: float) -> Tuple[Set[tuple],
                                                                               Set[tuple]]:
    """(the keys of the variables compared, those whose values differ from the one-replica
    run's)."""
    compared, differ = set(), set()
    for key, i in values.keys.items():
        j = reference.keys.get(key)
        if j is None:
            continue
        record = values.records[i]
        mine = observed(record, values.rows(i))
        theirs = reference.rows(j)
        if mine is None or theirs is None or not len(theirs):
            continue
        if record.get("kind") == ON_READ and record.get("stored") == "stats":
            theirs = theirs[:, :_LINEAR_STATS]
        compared.add(key)
        if not _agree(record, mine, theirs[:1], tolerance, reference.floor()):
            differ.add(key)
    return compared, differ


def _same(values: Values, anchor: Values, key: tuple, tolerance: float) -> bool:
    i, j = values.keys.get(key), anchor.keys.get(key)
    if i is None or j is None:
        return False
    a, b = values.rows(i), anchor.rows(j)
    if a is None or b is None or a.shape != b.shape:
        return False
    return _agree(values.records[i], a, b, tolerance, anchor.floor())


def judge_site(site: str, runs: Sequence[Tuple[Any, Dict[str, Any]]], written: Dict[str, Any],
               reference: Optional[Values], tolerance: float, loader,
               label=None) -> Dict[str, Any]:
    """Per run of the site (`runs`: (choice, result), the code's first): copies, values and
    the names that differ; for the site: the variables no choice of it changes that differ
    anyway (`unaffected`), and whether any choice leaves the one-replica values.

    `loader(result)` gives a result's `Values` (shared, so each file is read once);
    `label(record)` the name a variable is reported by."""
    label = label or (lambda record: short_name(record.get("name", "")))
    ran = [(choice, result) for choice, result in runs
           if not result.get("error") and result.get("variables") is not None]
    per: Dict[int, Dict[str, Any]] = {}
    if reference is None:
        for _, result in ran:
            per[id(result)] = {"copies_agree": copies_agree(loader(result), site, tolerance)}
        return {"runs": per, "unaffected": [], "judged": False}
    diffs: Dict[int, Tuple[Set[tuple], Set[tuple]]] = {}
    for _, result in ran:
        diffs[id(result)] = _differences(loader(result), reference, tolerance)
    anchor = loader(written) if any(r is written for _, r in ran) else \
        (loader(ran[0][1]) if ran else None)
    unaffected: Set[tuple] = set()
    if ran and anchor is not None:
        common = set.intersection(*(diffs[id(r)][1] for _, r in ran))
        for key in common:
            i = anchor.keys.get(key)
            if i is None or anchor.records[i].get("site") == site:
                continue
            if all(_same(loader(r), anchor, key, tolerance) for _, r in ran):
                unaffected.add(key)
    for _, result in ran:
        values = loader(result)
        compared, differ = diffs[id(result)]
        left = differ - unaffected
        names = list(dict.fromkeys(label(values.records[values.keys[k]]) for k in sorted(
            left, key=lambda k: values.keys[k])))
        per[id(result)] = {
            "copies_agree": copies_agree(values, site, tolerance),
            "values_agree": (not left) if compared - unaffected else None,
            "differ": names,
        }
    names = []
    if anchor is not None:
        names = list(dict.fromkeys(label(anchor.records[anchor.keys[k]])
                                   for k in sorted(unaffected, key=lambda k: anchor.keys[k])))
    # The one-replica run judges the site where some choice leaves its values, or where,
    # the rest of the program matching it, only the site's own variables differ (a metric
    # counting each replica's update is then wrong, and the reference says so).
    agrees = any(p.get("values_agree") is True for p in per.values())
    own_only = not unaffected and any(
        diffs[id(r)][1] and all(loader(r).records[loader(r).keys[k]].get("site") == site
                                for k in diffs[id(r)][1]) for _, r in ran)
    return {"runs": per, "unaffected": names, "judged": agrees or own_only}


def short_name(name: str) -> str:
    """A variable's name as a report shows it: no `:0`."""
    return name[:-2] if name.endswith(":0") else name
