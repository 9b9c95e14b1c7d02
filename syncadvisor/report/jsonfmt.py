"""One JSON array of findings (see DESIGN.md for the fields)."""
from __future__ import annotations

import json
from typing import List, TextIO

from ..findings import Finding
from .options import DEFAULT, Options


def write(findings: List[Finding], out: TextIO, options: Options = DEFAULT) -> None:
    json.dump([f.to_json() for f in findings], out, indent=2, ensure_ascii=False)
    out.write("\n")
