"""Jupyter notebooks: code cells as one module, findings mapped back to cells.

The code cells are joined into one virtual module (they share one namespace, so
a strategy made in cell 2 counts in cell 5), with a marker comment after each
cell. IPython magics (`%time`, `!pip`) become `pass` lines that remember the
original text; cells with a cell magic (`%%bash`) are left out. Findings and
fixes work on the virtual module; reports say `nb.ipynb:cell 3:line:col`
(cells counted as the notebook shows them, markdown included), and `--fix`
writes back only the cells that changed, refusing when the notebook's JSON
would not round-trip byte for byte.
"""
from __future__ import annotations

import re
from typing import List, Optional, Tuple

from .records import field, record
from .files import UnreadableSource
from .findings import Edit, Finding, Fix, Related
from .lines import physical_lines

MARKER = "# syncadvisor: end of cell"
_MAGIC = re.compile(r"^(\s*)([%!].*)$")
_HIDDEN_MAGIC = re.compile(r"^(\s*)pass  # syncadvisor-magic: (.*)$")
_LINE_REFERENCE = re.compile(r"\bline (\d+)\b")  # "created at line 5" in messages


@record
class Notebook:
    raw: str
    data: dict
    indent: Optional[int]
    virtual: str
    # (cell number as shown, first virtual line, number of lines) per included code cell
    cells: List[Tuple[int, int, int]] = field(default_factory=list)

    def locate(self, line: int) -> Tuple[int, int]:
        """(cell number, line in cell) for a line of the virtual module."""
        for number, first, count in self.cells:
            if first <= line < first + max(count, 1):
                return number, line - first + 1
        number, first, count = self.cells[-1] if self.cells else (1, 1, 0)
        return number, max(1, line - first + 1)


def _source(cell: dict, number: int) -> str:
    source = cell.get("source", "")
    if isinstance(source, list) and all(isinstance(part, str) for part in source):
        return "".join(source)
    if isinstance(source, str):
        return source
    raise UnreadableSource(f"not a valid notebook (cell {number}: its source is not text)")


def _lines(text: str) -> List[str]:
    """A cell's lines without their endings: only \\n, \\r\\n and \\r end a line, as in
    Python (str.splitlines would also cut at a form feed and lose it on the way back)."""
    return [line.rstrip("\r\n") for line in physical_lines(text)]


def _table(data: dict, key: str) -> dict:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def _detect_indent(raw: str) -> Optional[int]:
    match = re.search(r"^\{\r?\n( +)\"", raw)
    return len(match.group(1)) if match else None


def _dump(data: dict, indent: Optional[int], raw: str) -> str:
    import json

    text = json.dumps(data, indent=indent, ensure_ascii=False)
    return text + "\n" if raw.endswith("\n") else text


def load(raw: str) -> Notebook:
    try:
        import json

        data = json.loads(raw)
    except ValueError as exc:
        raise UnreadableSource(f"not a valid notebook (JSON: {exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise UnreadableSource("not a valid notebook (no cells)")
    metadata = _table(data, "metadata")
    language = _table(metadata, "kernelspec").get("language") or \
        _table(metadata, "language_info").get("name") or "python"
    parts: List[str] = []
    cells: List[Tuple[int, int, int]] = []
    line = 1
    for number, cell in enumerate(data["cells"], start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code" or language != "python":
            continue
        text = _source(cell, number)
        if text.lstrip().startswith("%%"):
            continue  # a cell magic: not Python
        lines = [_hide_magic(line) for line in _lines(text)]
        parts.append("\n".join(lines) + "\n" + MARKER + "\n")
        cells.append((number, line, len(lines)))
        line += len(lines) + 1
    return Notebook(raw, data, _detect_indent(raw), "".join(parts), cells)


def _hide_magic(line: str) -> str:
    match = _MAGIC.match(line)
    return f"{match.group(1)}pass  # syncadvisor-magic: {match.group(2)}" if match else line


def restore_magic(line: str) -> str:
    match = _HIDDEN_MAGIC.match(line)
    return match.group(1) + match.group(2) if match else line


def map_finding(nb: Notebook, f: Finding) -> Finding:
    cell, line = nb.locate(f.line)
    _, end_line = nb.locate(f.end_line)
    fix = f.fix
    if fix is not None:
        edits = []
        for e in fix.edits:
            _, start = nb.locate(e.line)
            _, end = nb.locate(e.end_line)
            edits.append(Edit(start, e.column, end, e.end_column, e.content))
        fix = Fix(fix.applicability, fix.message, tuple(edits))
    message = _LINE_REFERENCE.sub(lambda m: "cell {}, line {}".format(*nb.locate(int(m.group(1)))),
                                  f.message)
    related = tuple(map_related(nb, r) if r.path == f.path else r for r in f.related)
    return Finding(f.path, line, f.column, end_line, f.end_column, f.code, f.name,
                   f.severity, message, fix, cell=cell, related=related)


def map_related(nb: Notebook, r: Related) -> Related:
    """A place in the notebook's virtual module, by cell."""
    cell, line = nb.locate(r.line)
    end_line = nb.locate(r.end_line)[1] if r.end_line is not None else None
    return Related(r.path, line, r.label, r.column, end_line, r.end_column, cell)


def write_back(nb: Notebook, virtual: str) -> str:
    """The notebook text with the cells of a fixed virtual module; raises ValueError if
    the notebook would not keep its formatting."""
    if _dump(nb.data, nb.indent, nb.raw) != nb.raw:
        raise ValueError("its JSON formatting would not survive a rewrite")
    chunks = virtual.split("\n" + MARKER + "\n")
    if len(chunks) != len(nb.cells) + 1 or chunks[-1].strip():
        raise ValueError("the fixed code no longer matches the notebook's cells")
    import json

    data = json.loads(nb.raw)
    for (number, _, _), chunk in zip(nb.cells, chunks):
        cell = data["cells"][number - 1]
        old = _source(cell, number)
        new = "\n".join(restore_magic(line) for line in chunk.split("\n"))
        if old.endswith("\n"):
            new += "\n"
        if new == old:
            continue
        if isinstance(cell.get("source"), list):
            cell["source"] = physical_lines(new)
        else:
            cell["source"] = new
    return _dump(data, nb.indent, nb.raw)


def is_notebook(path: str) -> bool:
    return path.endswith(".ipynb")


