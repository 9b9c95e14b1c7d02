"""The second pass (`Run._model_reached`): a module the prefilter drops is modelled when a
modelled file's names lead into it (an alias module, a re-exported base class), and only
then; the findings are the same with and without the cache, and a run that does not reach
it never finds it modelled."""
from __future__ import annotations

import ast
import os
import shutil
from collections import defaultdict
from pathlib import Path

import pytest

import syncadvisor.engine.run as run_module
from syncadvisor.cache import Cache
from syncadvisor.config import Settings
from syncadvisor.engine import Run
from syncadvisor.files import discover
from syncadvisor.flake8_plugin import SyncAdvisorChecker
from tests import paths

PROJECTS = paths.FIXTURES / "projects"
FOLDERS = sorted(p for p in PROJECTS.iterdir() if p.is_dir())
FILES = sorted(p for p in PROJECTS.rglob("*.py") if p.name != "__init__.py")


def _run(folder: Path, cache=None, files=None) -> Run:
    settings = Settings(root=str(folder))
    run = Run(settings, cache=cache)
    for path in files or discover([str(folder)], settings):
        run.add_file(str(path))
    return run


def _lines(findings):
    grouped = defaultdict(list)
    for f in findings:
        grouped[Path(f.path).resolve()].append(f"{f.line}:{f.column} {f.code} {f.severity}")
    return grouped


@pytest.fixture(scope="module")
def findings_by_file():
    grouped = {}
    for folder in FOLDERS:
        grouped.update(_lines(_run(folder).check().findings))
    return grouped


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PROJECTS)))
def test_project_fixture_findings(path, findings_by_file):
    got = findings_by_file.get(path.resolve(), [])
    expected_file = path.with_suffix(".expected")
    if os.environ.get("SYNCADVISOR_REGENERATE") == "1":
        expected_file.write_text("".join(line + "\n" for line in got))
    expected = [line for line in expected_file.read_text().splitlines() if line.strip()]
    assert got == expected


@pytest.fixture
def spied(monkeypatch):
    """Names of the files the second pass models, in order."""
    seen = []
    original = run_module.analyze_text

    def spy(text, path, settings, module=None, **options):
        if options.get("prefilter") is False:
            seen.append(Path(path).name)
        return original(text, path, settings, module, **options)

    monkeypatch.setattr(run_module, "analyze_text", spy)
    return seen


@pytest.mark.parametrize("folder, modelled", [
    ("alias_module", ["compat.py"]),  # not helpers.py: only a function is called from it
    ("alias_module_clean", ["compat.py"]),
    ("reexported_base", ["api.py", "base.py"]),  # api.py leads into base.py: two rounds
])
def test_only_the_modules_names_lead_into_are_modelled(folder, modelled, spied):
    _run(PROJECTS / folder).check()
    assert sorted(spied) == modelled


def test_a_run_nothing_leads_out_of_models_nothing_more(tmp_path, spied):
    shutil.copytree(PROJECTS / "alias_module", tmp_path, dirs_exist_ok=True)
    shop = tmp_path / "shop"
    (shop / "layers.py").write_text((shop / "layers.py").read_text()
                                    .replace("tfk.layers.Layer", "object"))
    run = _run(tmp_path)
    assert run.check().findings == [] and spied == []
    assert [Path(r.path).name for r in run.analyze() if r.model is not None] == ["layers.py"]


def test_cached_runs_agree_and_a_run_that_does_not_reach_a_module_leaves_it_unmodelled(
        tmp_path, spied):
    shutil.copytree(PROJECTS / "alias_module", tmp_path / "src")
    shop = tmp_path / "src" / "shop"
    cache = Cache(str(tmp_path / "cache"))
    uncached = _run(tmp_path / "src").check().findings
    assert [f.code for f in uncached] == ["TFS201"]
    cold = _run(tmp_path / "src", cache=cache).check().findings
    spied.clear()
    warm = _run(tmp_path / "src", cache=cache).check().findings
    assert uncached == cold == warm and spied == []  # the second pass's model, from the cache
    # compat.py without the layer that leads into it: its stage 1 result, never the
    # second pass's, though that is in the cache for the same bytes.
    alone = _run(tmp_path / "src", cache=cache, files=[shop / "compat.py", shop / "helpers.py"])
    assert all(r.model is None for r in alone.analyze())


def test_flake8_one_file_at_a_time_cannot_see_the_alias_module(monkeypatch):
    """A run of one file has no other module to follow: the layer's base is unknown, so
    `call` is not known to run per replica and nothing is reported. The same as a whole
    run would give where compat.py was not one of its files."""
    monkeypatch.setenv("SYNCADVISOR_NO_CACHE", "1")
    path = PROJECTS / "alias_module" / "shop" / "layers.py"
    text = path.read_text()
    checker = SyncAdvisorChecker(ast.parse(text), text.splitlines(True), str(path))
    assert list(checker.run()) == []
    assert [f.code for f in _run(PROJECTS / "alias_module").check().findings] == ["TFS201"]
