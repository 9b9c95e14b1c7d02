"""GitHub Actions workflow commands: one annotation per finding."""
from __future__ import annotations

from typing import List, TextIO

from ..findings import ERROR, INFO, WARNING, Finding
from .options import DEFAULT, Options

COMMANDS = {ERROR: "error", WARNING: "warning", INFO: "notice"}


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def write(findings: List[Finding], out: TextIO, options: Options = DEFAULT) -> None:
    for f in findings:
        where = f"cell {f.cell}, " if f.cell is not None else ""
        properties = ",".join([
            f"file={_property(f.path)}", f"line={f.line}", f"col={f.column}",
            f"endLine={f.end_line}", f"endColumn={f.end_column}",
            f"title={_property(f'{f.code} {f.name}')}",
        ])
        message = _data(where + f.code + " " + f.message)
        out.write(f"::{COMMANDS[f.severity]} {properties}::{message}\n")
