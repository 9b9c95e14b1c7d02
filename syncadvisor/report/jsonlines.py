"""`--format json-lines`: one JSON object a line, one line a finding, the same objects as
`--format json` (see README.md), so a stream can be read line by line."""
from __future__ import annotations

import json
from typing import List, TextIO

from ..findings import Finding
from .options import DEFAULT, Options


def write(findings: List[Finding], out: TextIO, options: Options = DEFAULT) -> None:
    out.write("".join(json.dumps(f.to_json(), ensure_ascii=False, separators=(",", ":")) + "\n"
                      for f in findings))
