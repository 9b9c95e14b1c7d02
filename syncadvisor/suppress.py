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
from typing import Dict, FrozenSet, List, Optional, Tuple

from .records import field, record
from .lines import physical_lines

NOQA_INLINE = re.compile(
    r"# noqa(?::[\s]?(?P<codes>([A-Z]+[0-9]+(?:[,\s]+)?)+))?", re.IGNORECASE)
NOQA_FILE = re.compile(
    r"\s*#\s*(?P<tool>syncadvisor|flake8)[:=]\s*noqa(?::\s?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?\s*$",
    re.IGNORECASE)
_SEPARATORS = re.compile(r"[,\s]+")

ALL = None  # a blanket noqa


@record(frozen=True)
class Directive:
    """One inline `# noqa` comment as flake8 reads it: the first match of its regular
    expression in the text of a token run, which it covers line by line. Columns are
    0-based, in the physical line `line` where the match starts."""

    line: int
    start: int  # where the match (its `#`) starts
    end: int  # where the match ends (after the codes and the separators that follow them)
    codes: Optional[Tuple[str, ...]]  # as written, upper-cased, in order; None: a bare noqa
    codes_start: int  # where the codes start (== end for a bare noqa)
    # Where the comment the match lies in starts and ends; -1 when the match is not in a
    # comment (inside a string, which flake8 reads all the same).
    comment_start: int = -1
    comment_end: int = -1

    @property
    def in_comment(self) -> bool:
        return self.comment_start >= 0

    def covers(self, code: str) -> Optional[str]:
        """The code (or prefix) of this directive that suppresses `code`: `code` itself for
        a bare noqa, None when it does not."""
        if self.codes is None:
            return code
        return next((c for c in self.codes if code.startswith(c)), None)


@record
class Suppressions:
    # line -> the inline directive that applies there
    lines: Dict[int, Directive] = field(default_factory=dict)
    file_all: bool = False
    file_codes: FrozenSet[str] = frozenset()

    def suppressed(self, code: str, line: int) -> bool:
        if self.file_all:
            return True
        if self.file_codes and code.startswith(tuple(self.file_codes)):
            return True
        directive = self.lines.get(line)
        return directive is not None and directive.covers(code) is not None

    def directives(self) -> List[Directive]:
        """Every inline directive once, in the order of the file."""
        return sorted(set(self.lines.values()), key=lambda d: (d.line, d.start))


def split_codes(text: str) -> List[str]:
    """The codes of a `# noqa:` list as written: `E501, TFS101` -> ["E501", "TFS101"]."""
    return [c for c in _SEPARATORS.split(text) if c]


def _codes(text: Optional[str]) -> Optional[Tuple[str, ...]]:
    if text is None:
        return ALL
    return tuple(c.upper() for c in split_codes(text))


# A noqa comment naming a TFS code, as NOQA_INLINE reads one (any case; the codes before it
# need no separator). Every file whose text may hold one is marked in stage 1
# (`may_name_tfs_codes`): only those pay for finding the directives nothing used (TFS901).
_TFS_NOQA = re.compile(r"# noqa:[\s]?(?:[A-Z]+[0-9]+(?:[,\s]+)?)*TFS[0-9]", re.IGNORECASE)


def may_name_tfs_codes(text: str) -> bool:
    """Whether `text` may hold a `# noqa` comment naming a TFS code (never False where it
    does; a string that looks like one counts)."""
    lowered = text.lower()
    return "noqa" in lowered and "tfs" in lowered and _TFS_NOQA.search(text) is not None


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
                result.file_codes |= frozenset(codes)
    for first, last, comments in _noqa_ranges(source, lines):
        joined = "".join(lines[first - 1:last])
        match = NOQA_INLINE.search(joined)
        if match:
            directive = _directive(match, lines, first, comments)
            for number in range(first, last + 1):
                result.lines[number] = directive
    return result


def _directive(match: "re.Match[str]", lines: List[str], first: int,
               comments: List[Tuple[int, int, int]]) -> Directive:
    """The directive of a match in the joined text of lines `first`..., placed on its
    physical line; `comments`: (line, start, end) of each comment of those lines."""
    line, offset = first, match.start()
    while offset >= len(lines[line - 1]):
        offset -= len(lines[line - 1])
        line += 1
    column = offset
    start_in_join = match.start()
    codes_start = match.start("codes") if match.group("codes") is not None else match.end()
    comment = next(((a, b) for n, a, b in comments if n == line and a <= column < b), (-1, -1))
    return Directive(line, column, column + match.end() - start_in_join,
                     _codes(match.group("codes")), column + codes_start - start_in_join,
                     comment[0], comment[1])


Run = Tuple[int, int, List[Tuple[int, int, int]]]


def token_runs(lines: List[str]) -> Optional[List[Run]]:
    """flake8's token runs (its `_noqa_line_mapping`): the (first, last) physical lines of
    each run of tokens up to a line break the tokenizer reports (NL or NEWLINE: a
    multi-line string or a backslash continuation makes one run of several lines), with
    (line, start, end) of each comment in it. None where Python cannot tokenize `lines`."""
    # The tokenizer is fed the same lines, each ending in \n, so that its line numbers are
    # ours whatever the newlines (io.StringIO.readline would see a CR-only file as one line).
    normalized = [line.rstrip("\r\n") + "\n" if line.endswith(("\r", "\n")) else line
                  for line in lines]
    try:
        tokens = list(tokenize.generate_tokens(iter(normalized).__next__))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    runs: List[Run] = []
    low, high = len(lines) + 2, -1
    comments: List[Tuple[int, int, int]] = []
    for tok in tokens:
        if tok.type in (tokenize.ENDMARKER, tokenize.DEDENT):
            continue
        low, high = min(low, tok.start[0]), max(high, tok.end[0])
        if tok.type == tokenize.COMMENT:
            comments.append((tok.start[0], tok.start[1], tok.end[1]))
        if tok.type in (tokenize.NL, tokenize.NEWLINE):
            runs.append((low, high, comments))
            low, high = len(lines) + 2, -1
            comments = []
    return runs


def _noqa_ranges(source: str, lines: List[str]) -> List[Run]:
    """The token runs that mention noqa: the text flake8 searches for a line's comment."""
    runs = token_runs(lines)
    if runs is None:
        # flake8 gives up on noqa here; a physical line is the best we can do (and, not
        # knowing what is a comment, nothing is rewritten there).
        return [(i + 1, i + 1, []) for i, line in enumerate(lines) if "noqa" in line.lower()]
    return [run for run in runs if "noqa" in "".join(lines[run[0] - 1:run[1]]).lower()]
