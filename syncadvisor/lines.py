"""Offsets and (line, column) positions in a text, counting newlines as libcst does."""
from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate
from typing import List, Tuple


def line_starts(text: str) -> List[int]:
    """Offsets where each line starts; \\r\\n, \\r and \\n all end a line."""
    if "\r" not in text:  # the common case, without a loop in Python
        return list(accumulate((len(line) + 1 for line in text.split("\n")[:-1]), initial=0))
    starts = [0]
    i, n = 0, len(text)
    find_r, find_n = text.find, text.find
    while True:
        r = find_r("\r", i)
        nl = find_n("\n", i)
        if r < 0 and nl < 0:
            return starts
        if r >= 0 and (nl < 0 or r < nl):
            i = r + 2 if r + 1 < n and text[r + 1] == "\n" else r + 1
        else:
            i = nl + 1
        starts.append(i)


def physical_lines(source: str) -> List[str]:
    """The lines of `source` with their endings, numbered as findings number them: only
    \\r\\n, \\r and \\n end a line (str.splitlines also splits at \\f, \\v, \\x1c-\\x1e,
    \\x85, \\u2028 and \\u2029, which Python and libcst read as part of a line)."""
    starts = line_starts(source)
    lines = [source[a:b] for a, b in zip(starts, starts[1:] + [len(source)])]
    if lines and not lines[-1]:
        lines.pop()
    return lines


def position(starts: List[int], offset: int) -> Tuple[int, int]:
    """(1-based line, 0-based column) of a character offset."""
    line = bisect_right(starts, offset)
    return line, offset - starts[line - 1]
