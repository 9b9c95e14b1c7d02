"""What the command reads: a Python file, or a notebook seen as one virtual module.

An `Input` keeps the file's bytes and decodes them only when asked, so a run
that finds everything in the cache never decodes a file.
"""
from __future__ import annotations

from functools import cached_property
from typing import Optional

from . import notebook
from .files import SourceText, UnreadableSource, decode_source, read_bytes
from .findings import Finding, Related


class Input:
    is_text = False  # an in-memory text (`text_input`), not a file's bytes

    def __init__(self, path: str, data: bytes):
        self.path = path
        self.data = data

    @cached_property
    def source(self) -> SourceText:
        """The decoded file; raises UnreadableSource."""
        return decode_source(self.data)

    @cached_property
    def notebook(self) -> Optional[notebook.Notebook]:
        return notebook.load(self.source.text) if notebook.is_notebook(self.path) else None

    @property
    def text(self) -> str:
        """What is analysed: the source, or a notebook's code cells."""
        return self.notebook.virtual if self.notebook is not None else self.source.text

    def present(self, finding: Finding) -> Finding:
        """A finding as the user should see it (notebooks: by cell)."""
        if notebook.is_notebook(self.path):
            try:
                nb = self.notebook
            except UnreadableSource:  # the finding says why: it has no cell to point at
                return finding
            if nb is not None:
                return notebook.map_finding(nb, finding)
        return finding

    def present_related(self, place: Related) -> Related:
        """A place in this file that another file's finding names, as the user sees it."""
        if place.cell is None and notebook.is_notebook(self.path):
            try:
                nb = self.notebook
            except UnreadableSource:
                return place
            if nb is not None:
                return notebook.map_related(nb, place)
        return place

    def output(self, fixed: str) -> str:
        """The file's new text for a fixed analysis text; ValueError if it cannot be written."""
        return notebook.write_back(self.notebook, fixed) if self.notebook is not None else fixed


def text_input(path: str, text: str) -> Input:
    """An in-memory text (an editor's buffer, a snippet): analysed as Python as it is,
    whatever its name."""
    item = Input(path, text.encode("utf-8", "surrogatepass"))
    item.__dict__["source"] = SourceText(text, "utf-8", False)  # (cached_property values)
    item.__dict__["notebook"] = None
    item.is_text = True
    return item


def load_input(path: str, data: Optional[bytes] = None) -> Input:
    """An input from the file (raises UnreadableSource if it cannot be read) or given bytes."""
    return Input(path, read_bytes(path) if data is None else data)
