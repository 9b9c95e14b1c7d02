"""The field benchmark (``python -m benchmarks field``) without the network.

The label matching and the arithmetic on hand-made findings; then the whole command on a tiny
wheel built here, checked by this checkout's syncadvisor, with ``--offline``.
"""

from __future__ import annotations

import argparse
import importlib
import zipfile
from pathlib import Path

import pytest

field = importlib.import_module("benchmarks.field")
cli = importlib.import_module("benchmarks.cli")
tomllib = field.tomllib

Finding, Label, Package = field.Finding, field.Label, field.Package


def _label(path="p/m.py", code="TFS201", source="x = 1", occurrence=0, verdict=True, actionable=False,
           package="pkg", line=None):
    return Label(package=package, path=path, code=code, source=source, occurrence=occurrence,
                 verdict=verdict, actionable=actionable, reason="because", line=line)


def _finding(line, column=0, code="TFS201", severity="warning", path="p/m.py", package="pkg"):
    return Finding(package=package, path=path, line=line, column=column, code=code, severity=severity,
                   message=f"{code} at {line}")


# --- site keys and matching ----------------------------------------------------------------

def test_a_label_follows_its_line_when_lines_shift_above_it(tmp_path):
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "m.py").write_text("import tf\n\n\n    v.assign(x)  \n")
    f = _finding(4)
    field.site_keys([f], tmp_path)
    assert (f.source, f.occurrence) == ("v.assign(x)", 0)
    lab = _label(source="v.assign(x)", line=1)  # written when the line was line 1
    assert field.match([f], [lab]) == []
    assert f.label is lab


def test_findings_on_lines_of_the_same_text_are_told_apart_by_position(tmp_path):
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "m.py").write_text("a = f(); b = f()\nz = 0\na = f(); b = f()\n")
    # Given out of order: occurrence follows the position in the file, not the report's order.
    fs = [_finding(3, 9), _finding(1, 9), _finding(1, 0), _finding(3, 9, code="TFS001", severity="error")]
    field.site_keys(fs, tmp_path)
    assert [(f.line, f.column, f.occurrence) for f in fs] == [(3, 9, 2), (1, 9, 1), (1, 0, 0), (3, 9, 0)]
    labels = [_label(source="a = f(); b = f()", occurrence=i, verdict=i != 1) for i in range(3)]
    assert field.match(fs, labels) == []
    assert [f.label.occurrence for f in fs[:3]] == [2, 1, 0]
    assert fs[3].label is None  # another code on the same line is another site


def test_labels_no_finding_matches_are_stale():
    f = _finding(1)
    f.source = "x = 1"
    gone = _label(source="y = 2", verdict=True)
    other_pkg = _label(package="other")
    assert field.match([f], [gone, _label(), other_pkg]) == [gone, other_pkg]


def test_package_names_match_however_they_are_spelled():
    f = _finding(1, package="tf_keras")
    f.source = "x = 1"
    assert field.match([f], [_label(package="TF-Keras")]) == []


# --- the labels file -----------------------------------------------------------------------

ENTRY = """
[[finding]]
package = "pkg"
path = "p/m.py"
line = 3
code = "TFS201"
source = "v.assign(x)"
occurrence = 0
verdict = "TRUE"
actionable = true
reason = "the value is per replica"
"""


def test_the_labels_file_loads(tmp_path):
    p = tmp_path / "labels.toml"
    p.write_text(ENTRY + ENTRY.replace("occurrence = 0", "occurrence = 1").replace('"TRUE"', '"false"'))
    a, b = field.load_labels(p)
    assert (a.verdict, a.actionable, a.line, b.verdict, b.occurrence) == (True, True, 3, False, 1)
    assert field.load_labels(tmp_path / "missing.toml") == []


@pytest.mark.parametrize("edit, says", [
    (('"TRUE"', '"maybe"'), "verdict"),
    (('"the value is per replica"', '"  "'), "reason"),
    (("actionable = true", 'actionable = "yes"'), "actionable"),
    (("occurrence = 0", "occurrence = -1"), "occurrence"),
    (("code = ", "kode = "), "code"),
])
def test_a_malformed_label_is_refused(tmp_path, edit, says):
    p = tmp_path / "labels.toml"
    p.write_text(ENTRY.replace(*edit))
    with pytest.raises(field.FieldError, match=says):
        field.load_labels(p)


def test_two_labels_for_one_site_are_refused(tmp_path):
    p = tmp_path / "labels.toml"
    p.write_text(ENTRY + ENTRY.replace("line = 3", "line = 9"))
    with pytest.raises(field.FieldError, match="same site as entry #1"):
        field.load_labels(p)


def test_the_skeleton_is_a_labels_file_once_filled_in(tmp_path):
    f = _finding(2)
    f.source, f.occurrence = 'v = tf.Variable("a \\\\ b")', 1
    text = field.skeleton([f])
    filled = text.replace('verdict = ""', 'verdict = "FALSE"').replace('reason = ""', 'reason = "no"')
    p = tmp_path / "labels.toml"
    p.write_text(filled)
    (lab,) = field.load_labels(p)
    assert lab.key == f.key
    p.write_text(text)
    with pytest.raises(field.FieldError, match="verdict"):
        field.load_labels(p)


# --- the arithmetic ------------------------------------------------------------------------

def _pkg(findings, dist="pkg"):
    return Package(dist=dist, version="1.0", root=Path("."), findings=findings)


def _labelled(f, verdict, actionable=False):
    f.label = _label(verdict=verdict, actionable=actionable)
    return f


def test_precision_per_severity_and_the_actionable_share():
    fs = [_labelled(_finding(1, code="TFS003", severity="error"), True, True),
          _labelled(_finding(2, code="TFS003", severity="error"), False),
          *[_labelled(_finding(10 + i), True, i < 3) for i in range(9)],
          _labelled(_finding(30), False),
          _finding(40, code="TFS301", severity="info")]
    s = field.summarize([_pkg(fs)], [])
    assert "errors    50% (1/2)" in s.text and "target >= 100%: FAIL" in s.text
    assert "warnings  90% (9/10)" in s.text and "target >= 90%: PASS" in s.text
    assert "actionable 33% (4/12)" in s.text
    assert (s.unlabelled, s.targets_met) == (1, False)
    assert "TFS301 (info)" in s.text
    row = next(line for line in s.text.splitlines() if line.startswith("TFS201"))
    assert row.split()[:7] == ["TFS201", "warning", "10", "9", "1", "0", "3"]


def test_nothing_labelled_of_a_severity_is_no_miss():
    s = field.summarize([_pkg([_labelled(_finding(1), True)])], [])
    assert "errors    n/a (0 labelled)" in s.text
    assert s.targets_met and s.unlabelled == 0 and "Every finding is labelled." in s.text


def test_a_lost_true_finding_is_loud_and_a_gone_false_one_is_not():
    lost = _label(source="u.assign(x)", verdict=True, actionable=True)
    gone = _label(source="w.assign(y)", verdict=False)
    s = field.summarize([_pkg([])], [lost, gone])
    assert "!!! LOST TRUE FINDING (actionable): pkg" in s.text
    assert "gone (was FALSE): pkg" in s.text
    assert s.stale_true == 1 and s.targets_met and s.unlabelled == 0


def test_stale_labels_do_not_fail_the_benchmark(capsys):
    args = argparse.Namespace(write_unlabelled=None, json=None)
    assert field.report([_pkg([])], [_label(verdict=True)], args) == 0
    assert "LOST TRUE FINDING" in capsys.readouterr().out


# --- the command on a fake wheel -----------------------------------------------------------

MODEL = """\
import tensorflow as tf

a = tf.Variable(1.0, synchronization=tf.VariableSynchronization.DEFAULT); b = tf.Variable(2.0, synchronization=tf.VariableSynchronization.DEFAULT)


class Last(tf.keras.layers.Layer):
    def build(self, input_shape):
        self.last = self.add_weight(shape=(), initializer="zeros", trainable=False)

    def call(self, x):
        self.last.assign(tf.reduce_sum(x))
        return x
"""
METADATA = "Metadata-Version: 2.1\nName: fakepkg\nVersion: 1.0\nRequires-Dist: tensorflow>=2.16\n" \
           "Requires-Dist: numpy\n"


def _wheel(wheels: Path, model: str) -> None:
    wheels.mkdir(exist_ok=True)
    with zipfile.ZipFile(wheels / "fakepkg-1.0-py3-none-any.whl", "w") as zf:
        zf.writestr("fakepkg/__init__.py", "")
        zf.writestr("fakepkg/model.py", model)
        zf.writestr("fakepkg-1.0.dist-info/METADATA", METADATA)
        zf.writestr("fakepkg-1.0.dist-info/RECORD", "")


def _run(tmp_path, monkeypatch, capsys, *extra):
    monkeypatch.setattr(field, "FIELD_PINS", [("fakepkg", "1.0")])
    rc = cli.main(["field", "--offline", "--wheels-dir", str(tmp_path / "wheels"), "--work-dir",
                   str(tmp_path / "work"), "--labels", str(tmp_path / "labels.toml"), *extra])
    return rc, capsys.readouterr()


def test_the_command_on_a_fake_wheel(tmp_path, monkeypatch, capsys):
    _wheel(tmp_path / "wheels", MODEL)
    skel = tmp_path / "skel.toml"
    rc, out = _run(tmp_path, monkeypatch, capsys, "--write-unlabelled", str(skel))
    assert rc == 1
    assert "UNLABELLED: 3 finding(s)" in out.out
    assert "fakepkg/model.py:3  TFS001 (error)" in out.out
    assert "declared: tensorflow>=2.16" in out.out and "numpy" not in out.out
    assert (tmp_path / "work" / "fakepkg-1.0" / "fakepkg-1.0.dist-info" / "METADATA").is_file()
    entries = tomllib.loads(skel.read_text())["finding"]
    assert sorted((e["line"], e["code"], e["occurrence"]) for e in entries)[:2] == [
        (3, "TFS001", 0), (3, "TFS001", 1)]

    # Every finding read and found true: all labelled, targets met.
    skel_text = skel.read_text()
    (tmp_path / "labels.toml").write_text(
        skel_text.replace('verdict = ""', 'verdict = "TRUE"').replace('reason = ""', 'reason = "read"'))
    rc, out = _run(tmp_path, monkeypatch, capsys)
    assert rc == 0, out.out
    assert "Every finding is labelled." in out.out and "FAIL" not in out.out

    # Lines shift above every finding in a new build of the wheel: the labels still match.
    _wheel(tmp_path / "wheels", "# a new header\n# over two lines\n" + MODEL)
    rc, out = _run(tmp_path, monkeypatch, capsys)
    assert rc == 0, out.out
    assert "STALE" not in out.out

    # The second of the two errors on one line was wrong: the error target is missed.
    text = skel_text.replace('verdict = ""', 'verdict = "TRUE"').replace('reason = ""', 'reason = "read"')
    marker = 'code = "TFS001"\nsource = "a = tf.Variable(1.0, synchronization=tf.VariableSynchronization.' \
             'DEFAULT); b = tf.Variable(2.0, synchronization=tf.VariableSynchronization.DEFAULT)"\n' \
             'occurrence = 1\nverdict = "TRUE"'
    assert text.count(marker) == 1
    marker_false = marker.replace('"TRUE"', '"FALSE"')
    (tmp_path / "labels.toml").write_text(text.replace(marker, marker_false))
    rc, out = _run(tmp_path, monkeypatch, capsys)
    assert rc == 1
    assert "errors    50% (1/2)" in out.out and "target >= 100%: FAIL" in out.out


def test_offline_without_a_cached_wheel_exits_2(tmp_path, monkeypatch, capsys):
    rc, out = _run(tmp_path, monkeypatch, capsys)
    assert rc == 2
    assert "no fakepkg==1.0 wheel in" in out.err


def test_an_invalid_labels_file_exits_2(tmp_path, monkeypatch, capsys):
    _wheel(tmp_path / "wheels", MODEL)
    (tmp_path / "labels.toml").write_text(ENTRY.replace('"TRUE"', '"yes"'))
    rc, out = _run(tmp_path, monkeypatch, capsys)
    assert rc == 2 and "verdict" in out.err


def test_an_unknown_package_exits_2(tmp_path, monkeypatch, capsys):
    rc, out = _run(tmp_path, monkeypatch, capsys, "--packages", "nosuch")
    assert rc == 2 and "unknown package" in out.err


def test_the_pins_are_the_issues_list():
    names = {field.norm_dist(d) for d, _ in field.FIELD_PINS}
    assert names == {"tensorflow-addons", "tensorflow-probability", "tensorflow-model-optimization",
                     "opennmt-tf", "dm-sonnet", "tf-agents", "keras-hub", "keras", "tf-keras"}


def test_the_labels_in_the_repository_load_and_name_pinned_packages():
    labels = field.load_labels(field.LABELS_FILE)
    pinned = {field.norm_dist(d) for d, _ in field.FIELD_PINS}
    assert labels and all(field.norm_dist(lab.package) in pinned for lab in labels)


def test_a_declaring_file_outside_the_wheel_is_named(tmp_path):
    root = tmp_path / "work" / "pkg-1.0"
    (root / "sub").mkdir(parents=True)
    text = (f"Config file: {tmp_path}/pyproject.toml\n"
            "target-tensorflow = \"2.15\"  # from pkg-1.0.dist-info/METADATA\n"
            "keras = \"2\"  # from sub/requirements-dev.txt, ../../setup.cfg\n")
    assert field.outside_sources(text, root) == [str(tmp_path / "pyproject.toml"),
                                                 str((tmp_path / "setup.cfg").resolve())]
