"""`# noqa` comments, read exactly as flake8 reads them.

flake8's own regular expression; a comment applies to every physical line of
the token run it ends (a multi-line string, a backslash continuation), as in
flake8's `FileProcessor._noqa_line_mapping`. `# syncadvisor: noqa` (and
flake8's `# flake8: noqa`) on a line of its own turns a whole file off; with
codes after it (`# syncadvisor: noqa: TFS303`) only those codes.
"""
from __future__ import annotations

import re
import tokenize
from typing import Dict, FrozenSet, List, Optional

from .records import field, record
from .lines import physical_lines

NOQA_INLINE = re.compile(
    r"# noqa(?::[\s]?(?P<codes>([A-Z]+[0-9]+(?:[,\s]+)?)+))?", re.IGNORECASE)
NOQA_FILE = re.compile(
    r"\s*#\s*(?P<tool>syncadvisor|flake8)[:=]\s*noqa(?::\s?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?\s*$",
    re.IGNORECASE)
_SEPARATORS = re.compile(r"[,\s]+")

ALL = None  # a blanket noqa


@record
class Suppressions:
    # line -> codes suppressed there (ALL for a blanket noqa comment)
    lines: Dict[int, Optional[FrozenSet[str]]] = field(default_factory=dict)
    file_all: bool = False
    file_codes: FrozenSet[str] = frozenset()

    def suppressed(self, code: str, line: int) -> bool:
        if self.file_all:
            return True
        if self.file_codes and code.startswith(tuple(self.file_codes)):
            return True
        if line not in self.lines:
            return False
        codes = self.lines[line]
        return codes is ALL or code in codes or code.startswith(tuple(codes))


def _codes(text: Optional[str]) -> Optional[FrozenSet[str]]:
    if text is None:
        return ALL
    return frozenset(c.upper() for c in _SEPARATORS.split(text) if c)


def parse_suppressions(source: str) -> Suppressions:
    result = Suppressions()
    if "noqa" not in source.lower():
        return result
    lines = physical_lines(source)
    for line in lines:
        match = NOQA_FILE.match(line)
        if match:
            codes = _codes(match.group("codes"))
            if codes is ALL:
                result.file_all = True
            elif match.group("tool").lower() == "syncadvisor":
                result.file_codes |= codes
    for number, text in _noqa_lines(source, lines).items():
        match = NOQA_INLINE.search(text)
        if match:
            result.lines[number] = _codes(match.group("codes"))
    return result


def _noqa_lines(source: str, lines: List[str]) -> Dict[int, str]:
    """flake8's mapping from a line to the text searched for its noqa comment."""
    mapping: Dict[int, str] = {}
    # The tokenizer is fed the same lines, each ending in \n, so that its line numbers are
    # ours whatever the newlines (io.StringIO.readline would see a CR-only file as one line).
    normalized = [line.rstrip("\r\n") + "\n" if line.endswith(("\r", "\n")) else line
                  for line in lines]
    try:
        tokens = list(tokenize.generate_tokens(iter(normalized).__next__))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        # flake8 gives up on noqa here; a physical line is the best we can do.
        return {i + 1: line for i, line in enumerate(lines) if "noqa" in line.lower()}
    low, high = len(lines) + 2, -1
    for tok in tokens:
        if tok.type in (tokenize.ENDMARKER, tokenize.DEDENT):
            continue
        low, high = min(low, tok.start[0]), max(high, tok.end[0])
        if tok.type in (tokenize.NL, tokenize.NEWLINE):
            joined = "".join(lines[low - 1:high])
            if "noqa" in joined.lower():
                for number in range(low, high + 1):
                    mapping[number] = joined
            low, high = len(lines) + 2, -1
    return mapping
