"""The blind benchmark (``python -m benchmarks blind``) without the network.

The pins and their parts, the arithmetic per project and per part against the issue's goals,
the labels file in the repository, the installer's layout of a wheel's ``.data`` folder; then
the whole command on a tiny wheel built here, with ``--offline``.
"""

from __future__ import annotations

import importlib
import zipfile
from pathlib import Path

import pytest

blind = importlib.import_module("benchmarks.blind")
field = importlib.import_module("benchmarks.field")
cli = importlib.import_module("benchmarks.cli")

Finding, Label, Package = field.Finding, field.Label, field.Package


def _finding(line, severity="warning", verdict=None, actionable=False, package="larq",
             code="TFS201"):
    f = Finding(package=package, path="p/m.py", line=line, column=0, code=code, severity=severity,
                message=f"{code} at {line}", source=f"x{line}")
    if verdict is not None:
        f.label = Label(package=package, path=f.path, code=code, source=f.source, occurrence=0,
                        verdict=verdict, actionable=actionable, reason="read")
    return f


def _pkg(dist, findings):
    return Package(dist=dist, version="1", root=Path("."), findings=findings)


# --- the pins -------------------------------------------------------------------------------

def test_the_parts_split_the_pins_and_hold_no_field_package():
    dev, held = blind.pins_for("dev"), blind.pins_for("held-out")
    assert len(dev) >= 5 and len(held) >= 5
    assert not {d for d, _ in dev} & {d for d, _ in held}
    assert sorted(dev + held) == sorted(blind.pins_for("all"))
    field_names = ({field.norm_dist(d) for d, _ in field.FIELD_PINS}
                   | {"tensorflow", "tensorflow-cpu"})
    assert not {field.norm_dist(d) for d, _, _ in blind.BLIND_PINS} & field_names
    with pytest.raises(field.FieldError, match="unknown part"):
        blind.pins_for("test")


def test_the_labels_in_the_repository_load_and_name_pinned_packages():
    labels = field.load_labels(blind.LABELS_FILE)
    pinned = {field.norm_dist(d) for d, _, _ in blind.BLIND_PINS}
    assert labels and all(field.norm_dist(lab.package) in pinned for lab in labels)


# --- the arithmetic -------------------------------------------------------------------------

def test_the_tally_counts_verdicts_and_only_true_actionable_warnings():
    t = blind.tally([
        _finding(1, "error", True), _finding(2, "error", False), _finding(3, "error"),
        _finding(4, verdict=True, actionable=True), _finding(5, verdict=True),
        _finding(6, verdict=False, actionable=True),
        _finding(7, "info", True),
    ])
    assert (t.errors, t.errors_true, t.errors_false, t.errors_labelled) == (3, 1, 1, 2)
    assert (t.warnings, t.warnings_true, t.warnings_false, t.warnings_actionable) == (3, 2, 1, 1)
    assert (t.infos, t.unlabelled) == (1, 1)
    assert [ok for _, ok in t.goals()] == [False, False, False]


def test_the_goals_at_their_thresholds():
    # 9 of 10 true, 5 of 10 actionable
    ten = [_finding(i, verdict=i < 9, actionable=i < 5) for i in range(10)]
    assert [ok for _, ok in blind.tally(ten).goals()] == [True, True, True]
    ten[4].label.actionable = False  # 4/10 actionable
    assert [ok for _, ok in blind.tally(ten).goals()] == [True, True, False]
    # nothing labelled: nothing missed
    assert [ok for _, ok in blind.tally([]).goals()] == [True, True, True]


def test_each_part_is_reported_and_judged_on_its_own():
    dev = _pkg("larq", [_finding(1, "error", True), _finding(2, verdict=True, actionable=True)])
    held = _pkg("ray", [_finding(1, "error", False, package="ray")])
    text, met = blind.blind_table([dev, held])
    assert not met
    rows = {line.split()[0] + " " + line.split()[1]: line.split() for line in text.splitlines()
            if line.startswith(("dev total", "held-out total", "all parts"))}
    assert rows["dev total"][2:7] == ["1", "1", "0", "100%", "1"]
    assert rows["held-out total"][2:6] == ["1", "0", "1", "0%"]
    assert rows["all parts"][2:6] == ["2", "1", "1", "50%"]
    assert "dev       errors true >= 100%: PASS" in text
    assert "held-out  errors true >= 100%: FAIL" in text
    assert "FALSE findings by code: TFS201 (error) 1" in text
    text, met = blind.blind_table([dev])
    assert met and "held-out" not in text and "all parts" not in text


# --- unpacking ------------------------------------------------------------------------------

def test_a_wheels_data_purelib_is_unpacked_where_an_installer_puts_it(tmp_path):
    wheel = tmp_path / "x-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("x-1.0.data/purelib/x/m.py", "a = 1\n")
        zf.writestr("x-1.0.data/scripts/run", "#!/bin/sh\n")
        zf.writestr("x-1.0.dist-info/METADATA", "Name: x\n")
    root = field.unpack(wheel, tmp_path / "work" / "x-1.0")
    assert (root / "x" / "m.py").read_text() == "a = 1\n"
    assert (root / "x-1.0.data" / "scripts" / "run").is_file()
    assert (root / "x-1.0.dist-info" / "METADATA").is_file()


# --- the command on a fake wheel ------------------------------------------------------------

MODEL = """\
import tensorflow as tf

a = tf.Variable(1.0, synchronization=tf.VariableSynchronization.DEFAULT)
"""


def _run(tmp_path, monkeypatch, capsys, *extra):
    monkeypatch.setattr(blind, "BLIND_PINS",
                        [("fakepkg", "1.0", "dev"), ("otherpkg", "2.0", "held-out")])
    rc = cli.main(["blind", "--offline", "--wheels-dir", str(tmp_path / "wheels"), "--work-dir",
                   str(tmp_path / "work"), "--labels", str(tmp_path / "labels.toml"), *extra])
    return rc, capsys.readouterr()


def test_the_command_on_a_fake_wheel(tmp_path, monkeypatch, capsys):
    (tmp_path / "wheels").mkdir()
    with zipfile.ZipFile(tmp_path / "wheels" / "fakepkg-1.0-py3-none-any.whl", "w") as zf:
        zf.writestr("fakepkg/__init__.py", "")
        zf.writestr("fakepkg/model.py", MODEL)
        zf.writestr("fakepkg-1.0.dist-info/METADATA",
                    "Metadata-Version: 2.1\nName: fakepkg\nVersion: 1.0\n"
                    "Requires-Dist: tensorflow>=2.16\n")
    skel = tmp_path / "skel.toml"
    rc, out = _run(tmp_path, monkeypatch, capsys, "--write-unlabelled", str(skel))
    assert rc == 1 and "UNLABELLED: 1 finding(s)" in out.out and "(1 unlabelled)" in out.out
    # the held-out part is not run
    assert "[blind] part dev: fakepkg==1.0" in out.err and "otherpkg" not in out.err
    filled = skel.read_text().replace('verdict = ""', 'verdict = "TRUE"')
    (tmp_path / "labels.toml").write_text(filled.replace('reason = ""', 'reason = "read"'))
    rc, out = _run(tmp_path, monkeypatch, capsys)
    assert rc == 0, out.out
    assert "dev       errors true >= 100%: PASS" in out.out and "held-out" not in out.out

    # The held-out part is only run on purpose: naming one of its packages under the default
    # part fails.
    rc, out = _run(tmp_path, monkeypatch, capsys, "--packages", "otherpkg")
    assert rc == 2 and "unknown package" in out.err
