"""What the command reads: a Python file, or a notebook seen as one virtual module."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from . import notebook
from .files import SourceText, decode_source, read_bytes
from .findings import Finding


@dataclass
class Input:
    path: str
    source: SourceText  # the file as read
    data: bytes  # its bytes, for the cache
    notebook: Optional[notebook.Notebook] = None

    @property
    def text(self) -> str:
        """What is analysed: the source, or a notebook's code cells."""
        return self.notebook.virtual if self.notebook is not None else self.source.text

    def present(self, finding: Finding) -> Finding:
        """A finding as the user should see it (notebooks: by cell)."""
        return notebook.map_finding(self.notebook, finding) if self.notebook is not None else finding

    def output(self, fixed: str) -> str:
        """The file's new text for a fixed analysis text; ValueError if it cannot be written."""
        return notebook.write_back(self.notebook, fixed) if self.notebook is not None else fixed


def load_input(path: str, data: Optional[bytes] = None) -> Input:
    """Read (or decode given bytes of) a file; raises UnreadableSource."""
    if data is None:
        data = read_bytes(path)
    source = decode_source(data)
    nb = notebook.load(source.text) if notebook.is_notebook(path) else None
    return Input(path, source, data, nb)
