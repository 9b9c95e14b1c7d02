"""Linked projects kept across changes (`engine.check.Linked`): the language server keeps
one for its workspace and `--fix` one for its rounds. Whatever files are replaced, in
whatever order, every file's findings are those of the same files linked afresh."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from syncadvisor.config import Settings
from syncadvisor.engine.analyze import analyze_text
from syncadvisor.engine.check import Linked, check
from tests import paths

SETTINGS = Settings(root=str(paths.FIXTURES))


def _result(path: str, text: str, module: str):
    return analyze_text(text, path, SETTINGS, module=module, prefilter=False)


def _shown(findings):
    return [(f.path, f.line, f.column, f.code, f.message) for f in findings]


def _kept_and_fresh(linked: Linked, results):
    for result in results:
        if linked.model(result.path) is not result.model:
            assert linked.replace(result.path, result.model)
    kept = check(results, SETTINGS, lambda path: None, linked=linked.projects).findings
    fresh = check(results, SETTINGS, lambda path: None).findings
    return _shown(kept), _shown(fresh)


# --- any sequence of replacements ------------------------------------------------------

FIX = paths.FIXTURES / "fix"
VERSIONS = {p: [p.read_text()] + [p.with_name(p.stem + suffix).read_text()
                                  for suffix in (".fixed.py", ".unsafe-fixed.py")]
            for p in sorted(FIX.glob("*.py")) if not p.name.endswith("fixed.py")}
CROSS = sorted((paths.FIXTURES / "check" / "crossmodule").glob("*.py"))


def _versions(path: Path):
    """A file's texts to replace it with: as the user wrote it, fixed and unsafe-fixed
    (the edits `--fix` makes: synchronization and aggregation changed), and the fix
    fixtures' texts under its name (everything changed)."""
    own = VERSIONS.get(path, [path.read_text()])
    return own + [t for texts in VERSIONS.values() for t in texts[:1]]


@pytest.mark.parametrize("seed", range(3))
def test_any_sequence_of_replacements_gives_the_findings_of_a_fresh_link(seed):
    rng = random.Random(seed)
    files = CROSS + sorted(VERSIONS)[:5]
    modules = {p: ("crossmodule." if p in CROSS else "fix.") + p.stem for p in files}
    current = {p: _result(str(p), p.read_text(), modules[p]) for p in files}
    linked = Linked(r.model for r in current.values())
    for step in range(25):
        path = rng.choice(files)
        current[path] = _result(str(path), rng.choice(_versions(path)), modules[path])
        kept, fresh = _kept_and_fresh(linked, list(current.values()))
        assert kept == fresh, (seed, step, path)
