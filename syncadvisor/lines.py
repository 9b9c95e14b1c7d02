"""Offsets and (line, column) positions in a text, counting newlines as libcst does."""
from __future__ import annotations

from bisect import bisect_right
from typing import List, Tuple


def line_starts(text: str) -> List[int]:
    """Offsets where each line starts; \\r\\n, \\r and \\n all end a line."""
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


def position(starts: List[int], offset: int) -> Tuple[int, int]:
    """(1-based line, 0-based column) of a character offset."""
    line = bisect_right(starts, offset)
    return line, offset - starts[line - 1]
