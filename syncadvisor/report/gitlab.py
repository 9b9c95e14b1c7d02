"""`--format gitlab`: a GitLab Code Quality report (`artifacts: reports: codequality`).

One JSON array; each finding is an object with the fields GitLab documents:
`description`, `check_name`, `fingerprint`, `severity` (GitLab's info, minor, major,
critical, blocker) and `location` with `path` (relative to the working directory,
where GitLab runs the job: the repository's root) and `lines.begin` (and `lines.end`).

The fingerprint is how GitLab tells a finding in a merge request from the same finding
on the target branch, so it must be stable across runs and unique in a report: it
hashes the path, the code and the finding's source line as written (not its line
number, so an edit above it keeps it), and the number of findings before it with the
same three; a finding with no source line (an unreadable file) hashes its message.
A notebook's line is in its cell, as everywhere; the description says which cell.
"""
from __future__ import annotations

import json
import os
from typing import Dict, List, TextIO, Tuple

from ..findings import ERROR, INFO, WARNING, Finding
from .options import DEFAULT, Options

SEVERITIES = {ERROR: "major", WARNING: "minor", INFO: "info"}


def _path(path: str) -> str:
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive (Windows): no relative path
        relative = path
    return relative.replace(os.sep, "/")


def issues(findings: List[Finding], options: Options = DEFAULT) -> List[dict]:
    import hashlib  # (only when this format is asked for)

    seen: Dict[Tuple[str, str, str], int] = {}
    found = []
    for f in findings:
        path = _path(f.path)
        lines = options.sources.lines(f.path, f.cell) if options.sources is not None else None
        text = lines[f.line - 1].strip() if lines and 1 <= f.line <= len(lines) else f.message
        key = (path, f.code, text)
        occurrence = seen[key] = seen.get(key, -1) + 1
        digest = hashlib.sha256("\0".join((*key, str(occurrence))).encode("utf-8",
                                                                          "surrogatepass"))
        where = f"cell {f.cell}, line {f.line}: " if f.cell is not None else ""
        found.append({
            "description": f"{f.code}: {where}{f.message}",
            "check_name": f.code,
            "fingerprint": digest.hexdigest()[:32],
            "severity": SEVERITIES[f.severity],
            "location": {"path": path, "lines": {"begin": f.line, "end": f.end_line}},
        })
    return found


def write(findings: List[Finding], out: TextIO, options: Options = DEFAULT) -> None:
    json.dump(issues(findings, options), out, indent=2, ensure_ascii=False)
    out.write("\n")
