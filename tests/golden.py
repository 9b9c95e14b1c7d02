"""Fixture files with expected findings: `<name>.py` and `<name>.expected` beside it, one
`line:column CODE severity` per finding. `SYNCADVISOR_REGENERATE=1` rewrites the
expectations from what the run found (then read the diff before committing it)."""
from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path
from typing import Dict, Iterable, List

from syncadvisor.config import Settings
from syncadvisor.engine import Run
from syncadvisor.files import discover


def run_folder(folder: Path, cache=None, files=None) -> Run:
    """A run over a fixture folder, with the folder as its root."""
    settings = Settings(root=str(folder))
    run = Run(settings, cache=cache)
    for path in files or discover([str(folder)], settings):
        run.add_file(str(path))
    return run


def lines_by_file(findings: Iterable) -> Dict[Path, List[str]]:
    grouped: Dict[Path, List[str]] = defaultdict(list)
    for f in findings:
        grouped[Path(f.path).resolve()].append(f"{f.line}:{f.column} {f.code} {f.severity}")
    return grouped


def assert_expected(path: Path, got: List[str]) -> None:
    """`got` is what `path`'s `.expected` file says (or becomes it, when regenerating)."""
    expected_file = path.with_suffix(".expected")
    if os.environ.get("SYNCADVISOR_REGENERATE") == "1":
        expected_file.write_text("".join(line + "\n" for line in got))
    expected = [line for line in expected_file.read_text().splitlines() if line.strip()]
    assert got == expected
