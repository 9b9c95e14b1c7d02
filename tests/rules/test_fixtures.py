"""Fixture files with their expected findings (TorchFix/ruff style golden files).

Every `.py` under tests/fixtures/check is checked in ONE run (so cross-module
facts count), and each file's findings must equal its `<file>.expected`:
one `line:column CODE severity` per line. `SYNCADVISOR_REGENERATE=1` rewrites
the expected files; review the diff before committing it.
"""
from __future__ import annotations


import pytest

from tests import paths
from tests.golden import assert_expected, lines_by_file, run_folder

ROOT = paths.FIXTURES / "check"
FILES = sorted(p for p in ROOT.rglob("*.py") if p.name != "__init__.py")


@pytest.fixture(scope="module")
def findings_by_file():
    return lines_by_file(run_folder(ROOT).check().findings)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_fixture_findings(path, findings_by_file):
    assert_expected(path, findings_by_file.get(path.resolve(), []))


def test_every_rule_has_a_fixture(findings_by_file):
    from syncadvisor.rules import all_codes

    seen = {line.split()[1] for lines in findings_by_file.values() for line in lines}
    missing = set(all_codes()) - seen
    assert not missing, f"no fixture exercises {sorted(missing)}"
