"""The source lines a report shows: each reported file's lines, split once per file.

A report never reads a file again: it is given the text the run analysed (or, after
`--fix`, the fixed text), through `load`. A notebook's lines are its cells' lines, as
the findings number them (by cell), as the user wrote them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Dict, List, Optional

from ..files import UnreadableSource
from ..lines import physical_lines

if TYPE_CHECKING:
    from ..inputs import Input


class _File:
    __slots__ = ("lines", "cells")

    def __init__(self, lines: List[str], cells: Optional[Dict[int, List[str]]]):
        self.lines = lines  # without their line endings
        self.cells = cells  # a notebook's: cell number -> its lines


class Sources:
    """`lines(path, cell)`: the lines of a file (or of one notebook cell), or None where
    the file cannot be shown (unreadable, or not in the run)."""

    def __init__(self, load: Callable[[str], Optional["Input"]]):
        self._load = load
        self._files: Dict[str, Optional[_File]] = {}

    def lines(self, path: str, cell: Optional[int] = None) -> Optional[List[str]]:
        if path not in self._files:
            self._files[path] = self._read(path)
        found = self._files[path]
        if found is None:
            return None
        if found.cells is None:
            return found.lines if cell is None else None
        return found.cells.get(cell) if cell is not None else None

    def _read(self, path: str) -> Optional[_File]:
        item = self._load(path)
        if item is None:
            return None
        try:
            text = item.text
            nb = item.notebook
        except UnreadableSource:
            return None
        lines = [line.rstrip("\r\n") for line in physical_lines(text)]
        if nb is None:
            return _File(lines, None)
        cells = {cell.number: nb.cell_lines(cell.number) or [] for cell in nb.cells}
        return _File(lines, cells)
