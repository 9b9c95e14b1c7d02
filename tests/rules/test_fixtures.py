"""Fixture files with their expected findings (TorchFix/ruff style golden files).

Every `.py` under tests/fixtures/check is checked in ONE run (so cross-module
facts count), and each file's findings must equal its `<file>.expected`:
one `line:column CODE severity` per line. `SYNCADVISOR_REGENERATE=1` rewrites
the expected files; review the diff before committing it.
"""
from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path

import pytest

from syncadvisor.config import Settings
from syncadvisor.engine import Run
from syncadvisor.files import discover
from tests import paths

ROOT = paths.FIXTURES / "check"
FILES = sorted(p for p in ROOT.rglob("*.py") if p.name != "__init__.py")


@pytest.fixture(scope="module")
def findings_by_file():
    settings = Settings(root=str(ROOT))
    run = Run(settings)
    for path in discover([str(ROOT)], settings):
        run.add_file(path)
    grouped = defaultdict(list)
    for f in run.check().findings:
        grouped[Path(f.path).resolve()].append(f"{f.line}:{f.column} {f.code} {f.severity}")
    return grouped


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_fixture_findings(path, findings_by_file):
    got = findings_by_file.get(path.resolve(), [])
    expected_file = path.with_suffix(".expected")
    if os.environ.get("SYNCADVISOR_REGENERATE") == "1":
        expected_file.write_text("".join(line + "\n" for line in got))
    expected = [line for line in expected_file.read_text().splitlines() if line.strip()]
    assert got == expected


def test_every_rule_has_a_fixture(findings_by_file):
    from syncadvisor.rules import all_codes

    seen = {line.split()[1] for lines in findings_by_file.values() for line in lines}
    missing = set(all_codes()) - seen
    assert not missing, f"no fixture exercises {sorted(missing)}"
