"""`--format pylint`: `path:line: [CODE] message`, as pylint's parseable output (and ruff's
`--output-format pylint`) write it, for tools that read that; a notebook's line is
`path:cell N:line`."""
from __future__ import annotations

from typing import List, TextIO

from ..findings import Finding
from .options import DEFAULT, Options


def write(findings: List[Finding], out: TextIO, options: Options = DEFAULT) -> None:
    out.write("".join(
        f"{f.path}:{f'cell {f.cell}:' if f.cell is not None else ''}{f.line}: "
        f"[{f.code}] {f.message}\n" for f in findings))
