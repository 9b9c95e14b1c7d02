"""Notebook documents (LSP 3.17): a notebook the editor has open, read as `check` reads
its `.ipynb` file, and its findings placed in its cells.

The cells, in the notebook's order, become the JSON of a notebook that `notebook.load`
reads, so IPython's syntax, the cells joined as one module (a strategy made in cell 1
counts in cell 3), a cell that cannot run (TFS900 there, the others still checked) and
the positions in each cell as written are the command line's, from the same code. The
virtual module is the notebook's buffer in the `Workspace`, under the notebook's path;
its findings are mapped to cells with `notebook.map_finding` and go out on each cell's
URI. A fix is made on the virtual module and put back into the cells it changes with
`rewrite.changed_sources`, as `--fix` does, so a line IPython rewrote (a magic, a shell
escape) is never edited.
"""
from __future__ import annotations

import json
from typing import Dict, List, Optional, Set, Tuple

from lsprotocol import types as lsp

from ..collector import collector_paused
from ..findings import Finding
from ..lines import physical_lines
from ..notebook import Notebook, load, map_finding
from ..notebook.ipython import CellCode
from ..notebook.rewrite import changed_sources

NOTEBOOK_TYPE = "jupyter-notebook"
# What the server asks clients to send: Jupyter notebooks, with their Python cells. (A
# cell in another language is still sent if the notebook matches; it is left out, as a
# markdown cell is.)
SYNC = lsp.NotebookDocumentSyncOptions(
    notebook_selector=[lsp.NotebookDocumentFilterWithCells(
        notebook=NOTEBOOK_TYPE, cells=[lsp.NotebookCellLanguage(language="python")])],
    save=True)
_PYTHON = ("python", "ipython")


def notebook_path(path: str) -> str:
    """The path a notebook's findings go under: the engine reads a virtual module as a
    notebook's cells only under a name that ends in `.ipynb` (an untitled notebook's URI
    may not)."""
    return path if path.endswith(".ipynb") else path + ".ipynb"


class OpenNotebook:
    """A notebook document: its cells as last read (`read`) and what was shown of it."""

    def __init__(self, uri: str, path: str) -> None:
        self.uri = uri
        self.path = path
        self.nb: Optional[Notebook] = None
        self.cells: List[str] = []  # the cells' URIs, in order: cell N is cells[N - 1]
        self.sources: List[Optional[str]] = []  # each code cell's text as read; else None
        # The diagnostics last published, of each cell that had some
        self.shown: Dict[str, List[lsp.Diagnostic]] = {}
        self.edited: Set[str] = set()  # cells changed since diagnostics were last published
        # Each cell's reading by its text, as the last `load` left it (a cell that may hold
        # IPython's syntax read exactly): an edit reads again only the cells it changed.
        self._read: Dict[str, CellCode] = {}

    def read(self, document: lsp.NotebookDocument, texts: Dict[str, Tuple[str, str]]
             ) -> Notebook:
        """The notebook's cells (`texts`: a cell's URI -> its language and text) read as
        one virtual module, as `check` reads the file. A markdown cell, or one in another
        language, keeps its place in the count (the cell numbers are the editor's) and is
        not read."""
        cells: List[dict] = []
        self.cells, self.sources = [], []
        for cell in document.cells:
            language, text = texts.get(cell.document, ("", ""))
            code = cell.kind == lsp.NotebookCellKind.Code and language in _PYTHON
            cells.append({"cell_type": "code" if code else "markdown",
                          "source": text if code else ""})
            self.cells.append(cell.document)
            self.sources.append(text if code else None)
        raw = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
        with collector_paused():  # (as the workspace's own parses: see `collector`)
            self.nb = load(raw, self._read)
        self._read = {cell.code.source: cell.code for cell in self.nb.cells}
        return self.nb

    def cell_of(self, uri: str) -> Optional[int]:
        """The number of the cell with `uri` (1-based, as the notebook shows it)."""
        try:
            return self.cells.index(uri) + 1
        except ValueError:
            return None

    def place(self, cell: int) -> Optional[Tuple[str, List[str]]]:
        """A code cell's URI and its lines as read (as LSP counts them); None if the
        notebook has no code cell `cell`."""
        if 0 < cell <= len(self.cells):
            source = self.sources[cell - 1]
            if source is not None:
                return self.cells[cell - 1], physical_lines(source)
        return None

    def by_cell(self, findings: List[Finding]) -> Dict[int, List[Tuple[Finding, Finding]]]:
        """Each cell's findings: (as found in the virtual module, as placed in the cell)."""
        out: Dict[int, List[Tuple[Finding, Finding]]] = {}
        if self.nb is None:
            return out
        for finding in findings:
            placed = map_finding(self.nb, finding)
            out.setdefault(placed.cell or 1, []).append((finding, placed))
        return out

    def cell_changes(self, virtual: str) -> Optional[Dict[str, Tuple[str, str]]]:
        """Each changed cell's URI -> (its text, its new text) for a changed virtual module;
        None where the change cannot be put back into the cells as written."""
        if self.nb is None:
            return None
        try:
            sources = changed_sources(self.nb, virtual)
        except ValueError:
            return None
        changes = {}
        for index, new in sources.items():
            old = self.sources[index]
            if old is None or index >= len(self.cells):
                return None
            changes[self.cells[index]] = (old, new)
        return changes

