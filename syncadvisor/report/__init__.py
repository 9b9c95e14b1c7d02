"""Output formats: full (the default), concise, json, json-lines, sarif (GitHub code
scanning), github (workflow annotations), gitlab (Code Quality), junit, pylint. Each is
`write(findings, out, options)`."""
from __future__ import annotations

from typing import Callable, Dict, List, TextIO

from ..findings import Finding
from . import full, github, gitlab, jsonfmt, jsonlines, junit, pylint, sarif, text
from .options import DEFAULT, Options

FORMATTERS: Dict[str, Callable[[List[Finding], TextIO, Options], None]] = {
    "full": full.write,
    "concise": text.write,
    "text": text.write,  # the name concise had before full existed
    "json": jsonfmt.write,
    "json-lines": jsonlines.write,
    "sarif": sarif.write,
    "github": github.write,
    "gitlab": gitlab.write,
    "junit": junit.write,
    "pylint": pylint.write,
}
# The formats that print the summary line (and the statistics as a table), and colour.
TEXT_FORMATS = ("full", "concise", "text")

__all__ = ["FORMATTERS", "TEXT_FORMATS", "DEFAULT", "Options"]
