"""`--statistics`: the counts per code instead of the findings (a JSON array with --format json)."""
from __future__ import annotations

import contextlib
import io
import json
from collections import Counter

from hypothesis import given, settings, strategies as st

from syncadvisor.cli import main
from tests import paths

CHECK = paths.FIXTURES / "check"
FIXTURES = sorted(str(p) for p in CHECK.rglob("*.py") if p.name != "__init__.py")
BAD = (
    "import tensorflow as tf\n"
    "strategy = tf.distribute.MirroredStrategy()\n"
    "with strategy.scope():\n"
    "    v = tf.Variable(1., synchronization=tf.VariableSynchronization.NONE)\n"
    "    w = tf.Variable(1., synchronization=tf.VariableSynchronization.DEFAULT)\n"
    "    u = tf.Variable(1., synchronization=tf.VariableSynchronization.DEFAULT)\n"
)


def _check(*args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["check", "--no-cache", "--jobs", "1", *args])
    return code, out.getvalue()


def test_the_table_is_all_that_is_printed_before_the_summary(tmp_path):
    (tmp_path / "bad.py").write_text(BAD)
    for fmt in ("full", "concise"):
        code, out = _check("--statistics", "--format", fmt, str(tmp_path))
        assert code == 1
        assert out == (
            "     2  TFS001  [*] unknown-enum-member\n"
            "     1  TFS101      none-under-strategy\n"
            "3 findings (3 errors), 2 fixable with --fix, 1 more with --unsafe-fixes.\n")
    _, out = _check("--statistics", "--unsafe-fixes", str(tmp_path))
    assert out.splitlines()[1] == "     1  TFS101  [*] none-under-strategy"


def test_json_statistics_are_rufs_shape(tmp_path):
    (tmp_path / "bad.py").write_text(BAD)
    code, out = _check("--statistics", "--format", "json", str(tmp_path))
    assert code == 1
    assert json.loads(out) == [
        {"code": "TFS001", "name": "unknown-enum-member", "count": 2, "fixable": True},
        {"code": "TFS101", "name": "none-under-strategy", "count": 1, "fixable": False},
    ]
    _, out = _check("--statistics", "--format", "json", "--unsafe-fixes", str(tmp_path))
    assert json.loads(out)[1]["fixable"] is True


def test_nothing_found(tmp_path):
    (tmp_path / "good.py").write_text("import tensorflow as tf\nv = tf.Variable(1.)\n")
    assert _check("--statistics", str(tmp_path)) == (0, "All checks passed.\n")
    assert _check("--statistics", "--format", "json", str(tmp_path)) == (0, "[]\n")


@settings(max_examples=12, deadline=None)
@given(files=st.lists(st.sampled_from(FIXTURES), min_size=1, max_size=6, unique=True),
       unsafe=st.booleans())
def test_statistics_count_exactly_the_findings(files, unsafe):
    flags = ["--exit-zero"] + (["--unsafe-fixes"] if unsafe else [])
    _, findings = _check("--format", "json", *flags, *files)
    _, stats = _check("--format", "json", "--statistics", *flags, *files)
    findings, stats = json.loads(findings), json.loads(stats)
    assert {row["code"]: row["count"] for row in stats} == Counter(f["code"] for f in findings)
    assert {row["code"]: row["name"] for row in stats} == {f["code"]: f["name"] for f in findings}
    fixable = {f["code"] for f in findings
               if f["fix"] and (unsafe or f["fix"]["applicability"] == "safe")}
    assert {row["code"] for row in stats if row["fixable"]} == fixable
    counts = [row["count"] for row in stats]
    assert counts == sorted(counts, reverse=True)


def test_statistics_over_every_fixture_at_once():
    _, findings = _check("--format", "json", "--exit-zero", str(CHECK))
    _, stats = _check("--format", "json", "--exit-zero", "--statistics", str(CHECK))
    assert {row["code"]: row["count"] for row in json.loads(stats)} == \
        Counter(f["code"] for f in json.loads(findings))
