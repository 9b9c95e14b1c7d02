"""The cache: same findings as without it, and an edit re-parses only the edited file."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import syncadvisor.engine.parallel as parallel
from syncadvisor.cli import main
from tests import paths

FIXTURES = paths.FIXTURES / "check"


@pytest.fixture
def tree(tmp_path, monkeypatch):
    shutil.copytree(FIXTURES, tmp_path / "src")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SYNCADVISOR_CACHE_DIR", raising=False)
    return tmp_path / "src"


def _json(capsys, *args):
    code = main(["check", "--format", "json", "--exit-zero", "--jobs", "1", *args])
    assert code == 0
    return json.loads(capsys.readouterr().out)


def test_cached_and_uncached_runs_agree(tree, capsys, parsed):
    uncached = _json(capsys, "--no-cache", str(tree))
    assert not (tree.parent / ".syncadvisor_cache").exists()
    cold = _json(capsys, str(tree))
    assert (tree.parent / ".syncadvisor_cache" / ".gitignore").is_file()
    parsed.clear()
    warm = _json(capsys, str(tree))
    assert uncached == cold == warm
    assert parsed == []  # nothing changed: nothing parsed, findings from the run record


def test_an_edit_reparses_only_that_file(tree, capsys, parsed):
    _json(capsys, str(tree))
    model = tree / "crossmodule" / "model.py"
    model.write_text(model.read_text().replace("NONE)", "AUTO)"))
    parsed.clear()
    after_edit = _json(capsys, str(tree))
    assert set(parsed) == {"model.py"}
    assert after_edit == _json(capsys, "--no-cache", str(tree))
    # train.py did not change, yet its facts still make model.py's TFS103 an error.
    codes = {(Path(d["path"]).name, d["code"], d["severity"]) for d in after_edit}
    assert ("model.py", "TFS103", "error") in codes and ("model.py", "TFS101", "error") not in codes


def test_settings_change_the_run_record(tree, capsys):
    everything = _json(capsys, str(tree))
    (tree.parent / "pyproject.toml").write_text('[tool.syncadvisor]\nignore = ["TFS1"]\n')
    fewer = _json(capsys, str(tree))
    assert len(fewer) < len(everything) and not any(d["code"].startswith("TFS1") for d in fewer)


def test_a_corrupt_cache_is_ignored_and_rebuilt(tree, capsys):
    expected = _json(capsys, "--no-cache", str(tree))
    _json(capsys, str(tree))
    for path in (tree.parent / ".syncadvisor_cache").rglob("*.pickle"):
        path.write_bytes(b"\x80\x04 not a pickle")
    assert _json(capsys, str(tree)) == expected
    assert _json(capsys, str(tree)) == expected


def test_parallel_workers_give_the_same_findings(tree, capsys, monkeypatch):
    monkeypatch.setattr(parallel, "POOL_THRESHOLD", 0)
    serial = _json(capsys, "--no-cache", str(tree))
    code = main(["check", "--format", "json", "--exit-zero", "--no-cache", "--jobs", "2", str(tree)])
    assert code == 0 and json.loads(capsys.readouterr().out) == serial


def test_two_projects_with_the_same_module_names_are_linked_apart(tmp_path, capsys):
    """`check a b` where both have model.py/train.py: a's scope must not reach b's model."""
    for name, strategy in (("a", "MirroredStrategy()"), ("b", "OneDeviceStrategy('/cpu:0')")):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "model.py").write_text(
            "import tensorflow as tf\ndef build():\n"
            "    return tf.Variable(1., synchronization=tf.VariableSynchronization.NONE)\n")
        (folder / "train.py").write_text(
            f"import tensorflow as tf\nfrom model import build\nstrategy = tf.distribute.{strategy}\n"
            "with strategy.scope():\n    v = build()\n")
    data = _json(capsys, "--no-cache", str(tmp_path / "a"), str(tmp_path / "b"))
    assert [(Path(d["path"]).parent.name, d["code"], d["severity"]) for d in data] == [
        ("a", "TFS101", "error")]
