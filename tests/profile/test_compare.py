"""Judging runs against the program's own run on one replica (`profile/compare.py`), on
plain data: numpy, no TensorFlow."""
from __future__ import annotations

import pytest

from syncadvisor.profile import compare

np = pytest.importorskip("numpy")

ON_READ, MIRRORED = compare.ON_READ, compare.MIRRORED


def _result(tmp_path, run_id, variables):
    """A child's result: `variables` is [(name, site, kind, aggregation, copies)], each
    copy a list of floats."""
    records, arrays = [], {}
    for index, (name, site, kind, aggregation, copies) in enumerate(variables):
        rows = np.asarray(copies, dtype=np.float64)
        records.append({"name": name, "site": site, "kind": kind, "aggregation": aggregation,
                        "shape": [rows.shape[1]], "dtype": "float32", "stored": "values"})
        arrays[f"v{index}"] = rows
    path = tmp_path / f"{run_id}.npz"
    np.savez(path, **arrays)
    return {"id": run_id, "variables": records, "values_file": str(path)}


def _loader():
    cache = {}

    def load(result):
        if result["id"] not in cache:
            cache[result["id"]] = compare.Values(result)
        return cache[result["id"]]
    return load


def test_what_the_program_can_read_of_each_kind():
    copies = np.array([[1.0, 2.0], [3.0, 4.0]])
    on_read = {"kind": ON_READ, "aggregation": "SUM"}
    assert compare.observed(on_read, copies).tolist() == [[4.0, 6.0]]
    assert compare.observed(dict(on_read, aggregation="MEAN"), copies).tolist() == [[2.0, 3.0]]
    assert compare.observed(dict(on_read, aggregation="ONLY_FIRST_REPLICA"),
                            copies).tolist() == [[1.0, 2.0]]
    # ON_READ + NONE has no cross-replica value: nothing the program reads to compare
    assert compare.observed(dict(on_read, aggregation="NONE"), copies) is None
    # every copy of a mirrored variable is what some replica reads
    assert compare.observed({"kind": MIRRORED, "aggregation": "NONE"}, copies) is copies


def test_distance_is_relative_with_a_rounding_floor():
    assert compare.distance([1.0, 2.0], [1.0, 2.0002]) == pytest.approx(1e-4, rel=1e-3)
    assert compare.distance([3e-9], [8e-9]) > 0.5  # relative to itself: all noise
    assert compare.distance([3e-9], [8e-9], floor=1.0) < 1e-8  # below the program's rounding
    assert compare.distance([1.0, 2.0], [1.0]) == float("inf")
    assert compare.tolerance_from(None) == compare.TOLERANCE_FLOOR
    assert compare.tolerance_from(0.0) == compare.TOLERANCE_FLOOR
    assert compare.tolerance_from(1e-3) == pytest.approx(1e-2)


def test_a_choice_that_changes_the_weights_differs(tmp_path):
    # the accumulator's buffers (site s0, ON_READ + SUM) and the weight they train
    reference = _result(tmp_path, "one", [("w", None, MIRRORED, "NONE", [[1.0]]),
                                          ("buf", "s0", ON_READ, "SUM", [[0.5]])])
    written = _result(tmp_path, "written", [("w", None, MIRRORED, "NONE", [[1.0], [1.0]]),
                                            ("buf", "s0", ON_READ, "SUM", [[0.2], [0.3]])])
    summed = _result(tmp_path, "sum", [("w", None, MIRRORED, "NONE", [[2.0], [2.0]]),
                                       ("buf", "s0", MIRRORED, "SUM", [[0.5], [0.5]])])
    none = _result(tmp_path, "none", [("w", None, MIRRORED, "NONE", [[1.0], [1.0]]),
                                      ("buf", "s0", MIRRORED, "NONE", [[0.2], [0.3]])])
    load = _loader()
    judged = compare.judge_site("s0", [("ON_READ", written), ("SUM", summed), ("NONE", none)],
                                written, load(reference), 1e-4, load)
    runs = judged["runs"]
    assert runs[id(written)] == {"copies_agree": None, "values_agree": True, "differ": []}
    assert runs[id(summed)]["values_agree"] is False and runs[id(summed)]["differ"] == ["w"]
    assert runs[id(summed)]["copies_agree"] is True
    assert runs[id(none)]["copies_agree"] is False and runs[id(none)]["differ"] == ["buf"]
    assert judged["judged"] and judged["unaffected"] == []


def test_what_no_choice_of_a_site_changes_is_left_out(tmp_path):
    # `w` differs from the one-replica run under every choice of the counter, the same
    # way: another part of the program's doing; the counter is judged on its own value
    reference = _result(tmp_path, "one", [("w", None, MIRRORED, "NONE", [[1.0]]),
                                          ("count", "s1", MIRRORED, "ONLY_FIRST_REPLICA",
                                           [[4.0]])])
    written = _result(tmp_path, "written", [("w", None, MIRRORED, "NONE", [[3.0], [3.0]]),
                                            ("count", "s1", MIRRORED, "ONLY_FIRST_REPLICA",
                                             [[4.0], [4.0]])])
    doubled = _result(tmp_path, "sum", [("w", None, MIRRORED, "NONE", [[3.0], [3.0]]),
                                        ("count", "s1", MIRRORED, "SUM", [[8.0], [8.0]])])
    load = _loader()
    judged = compare.judge_site("s1", [("FIRST", written), ("SUM", doubled)], written,
                                load(reference), 1e-4, load)
    assert judged["unaffected"] == ["w"]
    assert judged["runs"][id(written)]["values_agree"] is True
    assert judged["runs"][id(doubled)]["differ"] == ["count"]
    assert judged["judged"]


def test_a_site_no_choice_of_which_matches_cannot_be_judged(tmp_path):
    # the rest of the program differs too (a batch computed from the replica count):
    # the one-replica run is not this program, so the site's difference says nothing
    reference = _result(tmp_path, "one", [("w", None, MIRRORED, "NONE", [[1.0]]),
                                          ("total", "s2", MIRRORED, "SUM", [[4.0]])])
    written = _result(tmp_path, "written", [("w", None, MIRRORED, "NONE", [[3.0], [3.0]]),
                                            ("total", "s2", MIRRORED, "SUM", [[8.0], [8.0]])])
    local = _result(tmp_path, "read", [("w", None, MIRRORED, "NONE", [[3.0], [3.0]]),
                                       ("total", "s2", ON_READ, "SUM", [[4.0], [4.0]])])
    load = _loader()
    judged = compare.judge_site("s2", [("SUM", written), ("ON_READ", local)], written,
                                load(reference), 1e-4, load)
    assert not judged["judged"] and judged["unaffected"] == ["w"]
    # where the rest matches, the site's own difference is the site's: it is judged
    reference = _result(tmp_path, "one-b", [("w", None, MIRRORED, "NONE", [[3.0]]),
                                            ("total", "s2", MIRRORED, "SUM", [[4.0]])])
    load = _loader()
    judged = compare.judge_site("s2", [("SUM", written)], written, load(reference), 1e-4,
                                load)
    assert judged["judged"] and judged["runs"][id(written)]["values_agree"] is False


def test_calibration_from_two_runs_of_the_same_choice(tmp_path):
    first = _result(tmp_path, "a", [("w", None, MIRRORED, "NONE", [[1.0, 2.0], [1.0, 2.0]])])
    second = _result(tmp_path, "b", [("w", None, MIRRORED, "NONE", [[1.0, 2.002], [1.0, 2.002]])])
    drift, unsteady = compare.calibrate(compare.Values(first), compare.Values(second))
    assert drift == pytest.approx(1e-3, rel=1e-3) and unsteady == []
    assert compare.tolerance_from(drift) == pytest.approx(1e-2, rel=1e-3)
