"""The second pass (`Run._model_reached`): a module the prefilter drops is modelled when a
modelled file's names lead into it (an alias module, a re-exported base class), and only
then; the findings are the same with and without the cache, and a run that does not reach
it never finds it modelled."""
from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

import syncadvisor.engine.run as run_module
from syncadvisor.cache import Cache
from syncadvisor.flake8_plugin import SyncAdvisorChecker
from tests import paths
from tests.golden import assert_expected, lines_by_file, run_folder

PROJECTS = paths.FIXTURES / "projects"
FOLDERS = sorted(p for p in PROJECTS.iterdir() if p.is_dir())
FILES = sorted(p for p in PROJECTS.rglob("*.py") if p.name != "__init__.py")




@pytest.fixture(scope="module")
def findings_by_file():
    grouped = {}
    for folder in FOLDERS:
        grouped.update(lines_by_file(run_folder(folder).check().findings))
    return grouped


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PROJECTS)))
def test_project_fixture_findings(path, findings_by_file):
    assert_expected(path, findings_by_file.get(path.resolve(), []))


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
    run_folder(PROJECTS / folder).check()
    assert sorted(spied) == modelled


def test_a_run_nothing_leads_out_of_models_nothing_more(tmp_path, spied):
    shutil.copytree(PROJECTS / "alias_module", tmp_path, dirs_exist_ok=True)
    shop = tmp_path / "shop"
    (shop / "layers.py").write_text((shop / "layers.py").read_text()
                                    .replace("tfk.layers.Layer", "object"))
    run = run_folder(tmp_path)
    assert run.check().findings == [] and spied == []
    assert [Path(r.path).name for r in run.analyze() if r.model is not None] == ["layers.py"]


def test_cached_runs_agree_and_a_run_that_does_not_reach_a_module_leaves_it_unmodelled(
        tmp_path, spied):
    shutil.copytree(PROJECTS / "alias_module", tmp_path / "src")
    shop = tmp_path / "src" / "shop"
    cache = Cache(str(tmp_path / "cache"))
    uncached = run_folder(tmp_path / "src").check().findings
    assert [f.code for f in uncached] == ["TFS201"]
    cold = run_folder(tmp_path / "src", cache=cache).check().findings
    spied.clear()
    warm = run_folder(tmp_path / "src", cache=cache).check().findings
    assert uncached == cold == warm and spied == []  # the second pass's model, from the cache
    # compat.py without the layer that leads into it: its stage 1 result, never the
    # second pass's, though that is in the cache for the same bytes.
    alone = run_folder(tmp_path / "src", cache=cache,
                       files=[shop / "compat.py", shop / "helpers.py"])
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
    assert [f.code for f in run_folder(PROJECTS / "alias_module").check().findings] == ["TFS201"]
