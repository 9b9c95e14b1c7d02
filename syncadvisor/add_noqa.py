"""`check --add-noqa`: a `# noqa: CODE` for every finding that is still reported.

Each comment goes where flake8 (and so this tool, `suppress.py`) reads it: at the end of
the token run the finding's line belongs to, which is its last physical line (the line
that closes a multi-line string, the last line of a backslash continuation), never
inside a string and never before a continuation's backslash. Where that run already
has a `# noqa: X` comment, the codes are added to it (`# noqa: E501, TFS101`). Only a
comment is added or extended: the code itself is not touched, so what parsed still
parses.
"""
from __future__ import annotations

import re
from typing import Dict, List, Optional, Sequence, Tuple

from .findings import Finding
from .lines import physical_lines
from .suppress import Directive, parse_suppressions, split_codes, token_runs

_SEPARATOR = re.compile(r"[,\s]+")


def add_noqa(text: str, findings: Sequence[Finding]) -> Tuple[str, int, List[Finding]]:
    """`text` with a noqa comment for each of `findings` (its own, all from this text);
    (new text, comments added or extended, findings no comment can suppress: where the
    line's token run already reads as a noqa comment from inside a string, which flake8
    takes first)."""
    if not findings:
        return text, 0, []
    lines = physical_lines(text)
    runs = token_runs(lines)
    last_of: Dict[int, int] = {}  # line -> the last line of its token run
    for first, last, _ in runs or ():
        for number in range(first, last + 1):
            last_of[number] = last
    suppressions = parse_suppressions(text)
    codes: Dict[int, List[str]] = {}  # last line of a run -> codes to add there
    cannot: List[Finding] = []
    for finding in findings:
        line = min(max(finding.line, 1), len(lines))
        directive = suppressions.lines.get(line)
        if directive is not None and (not directive.in_comment or directive.codes is None):
            cannot.append(finding)  # (a bare noqa suppresses everything: never here)
            continue
        at = directive.line if directive is not None else last_of.get(line, line)
        wanted = codes.setdefault(at, [])
        if finding.code not in wanted:
            wanted.append(finding.code)
    for number in sorted(codes, reverse=True):
        lines[number - 1] = _with_codes(lines[number - 1], sorted(codes[number]),
                                        suppressions.lines.get(number))
    return "".join(lines), len(codes), cannot


def _with_codes(line: str, new: List[str], directive: Optional[Directive]) -> str:
    """`line` (with its line break) with a noqa comment for `new` at its end, or with
    `new` added to `directive`'s codes (a noqa comment with codes on this line)."""
    body = line.rstrip("\r\n")
    ending = line[len(body):]
    if directive is None:
        return body.rstrip() + "  # noqa: " + ", ".join(new) + ending
    # extend the comment's list of codes, in the style it is written in
    end = min(directive.end, len(body))
    written = body[directive.codes_start:end].rstrip(", \t\f")
    codes_end = directive.codes_start + len(written)
    between = _SEPARATOR.search(written)
    separator = between.group() if between else ", "
    missing = [c for c in new if c.upper() not in {w.upper() for w in split_codes(written)}]
    return body[:codes_end] + "".join(separator + c for c in missing) + body[codes_end:] + ending
