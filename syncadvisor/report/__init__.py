"""Output formats: text, json (sarif and github come with the editor/CI surfaces)."""
from __future__ import annotations

from typing import Callable, Dict, List, TextIO

from ..findings import Finding
from . import jsonfmt, text

FORMATTERS: Dict[str, Callable[[List[Finding], TextIO], None]] = {
    "text": text.write,
    "json": jsonfmt.write,
}
