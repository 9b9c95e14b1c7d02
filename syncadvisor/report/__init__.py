"""Output formats: text, json, sarif (GitHub code scanning), github (workflow annotations)."""
from __future__ import annotations

from typing import Callable, Dict, List, TextIO

from ..findings import Finding
from . import github, jsonfmt, sarif, text

FORMATTERS: Dict[str, Callable[[List[Finding], TextIO], None]] = {
    "text": text.write,
    "json": jsonfmt.write,
    "sarif": sarif.write,
    "github": github.write,
}
