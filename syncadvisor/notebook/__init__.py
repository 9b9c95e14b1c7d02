"""Jupyter notebooks: code cells as one module, findings mapped back to cells.

Each code cell is read as IPython reads it (`ipython.read_cell`: magics, shell escapes
and help become the Python IPython runs), and the cells' Python is joined into one
virtual module (they share one namespace, so a strategy made in cell 2 counts in cell
5), each cell followed by a marker line. A cell IPython cannot run (IPython refuses
it, or Python cannot parse what IPython makes of it) is a TFS900 at that cell; its
place in the virtual module holds one comment line that says so (`_UNREAD`), so the
other cells are still one module, and the text alone says which cells were not read
(the fixer checks the text again after each round, with no notebook at hand).

The virtual module is parsed cell by cell (`parse_cells`), as IPython compiles each
cell on its own: a `from __future__` import at the top of cell 3, or a top-level
`await`, is fine. Findings and fixes work on the virtual module; reports say
`nb.ipynb:cell 3:line:col` in the cell as the user wrote it (cells counted as the
notebook shows them, markdown included), and `--fix` writes back only the cells that
changed (`rewrite.write_back`).
"""
from __future__ import annotations

import ast
import re
import warnings
import zlib
from typing import Dict, List, Optional, Tuple

from ..findings import ERROR, Edit, Finding, Fix, Related
from ..files import UnreadableSource
from ..lines import line_starts, physical_lines
from ..records import field, record
from .ipython import CellCode, read_cell

PARSE_ERROR, PARSE_ERROR_NAME = "TFS900", "parse-error"  # (engine.analyze's: it imports us)
# The marker after each cell ends with a digest of the notebook's JSON, so that no line a
# user wrote in a cell can be taken for one; the virtual module's last line is a marker.
_MARKER = "# syncadvisor: end of cell "
# A cell that was not read, in the virtual module: its number, where and why.
_UNREAD = "# syncadvisor: cell {number} not read at {line}:{column}: {why}"
_UNREAD_RE = re.compile(r"# syncadvisor: cell (\d+) not read at (\d+):(\d+): (.*)\Z")
_LINE_REFERENCE = re.compile(r"\bline (\d+)\b")  # "created at line 5" in messages
_FLAGS = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT  # as IPython compiles a cell


Place = Tuple[int, int, str]  # (line, column, why) in a cell as written


@record
class Cell:
    """A code cell in the virtual module: lines `first`..`first + count - 1` (then its
    marker), holding `chunk`: the cell's Python, or one `_UNREAD` line."""

    number: int  # as the notebook shows it, markdown cells counted
    first: int
    count: int
    chunk: str
    code: CellCode
    error: Optional[Place] = None  # not read: where and why


@record
class Notebook:
    raw: str
    data: dict
    virtual: str
    marker: str
    cells: List[Cell] = field(default_factory=list)

    def locate(self, line: int) -> Tuple[Optional[Cell], int]:
        """The cell that holds a line of the virtual module, and the line in its chunk."""
        from bisect import bisect_right

        index = bisect_right([c.first for c in self.cells], line) - 1
        if index < 0:
            return (self.cells[0] if self.cells else None), 1
        cell = self.cells[index]
        return cell, max(1, min(line - cell.first + 1, cell.count))

    def position(self, line: int, column: int) -> Tuple[int, int, int]:
        """(cell number, line, column) in the cell as written, of a 1-based position of
        the virtual module (a column past a line's end stays past it)."""
        cell, local = self.locate(line)
        if cell is None:
            return 1, 1, 1
        if cell.error is not None or cell.code.python is None:
            return cell.number, 1, 1
        starts = line_starts(cell.chunk)
        start = starts[local - 1] if local <= len(starts) else len(cell.chunk)
        end = starts[local] if local < len(starts) else len(cell.chunk)
        text_end = start + len(cell.chunk[start:end].rstrip("\r\n"))
        offset = start + column - 1
        past = max(0, offset - text_end)  # a column past the line's text stays past it
        at = cell.code.source_offset(min(offset, text_end))
        user = line_starts(cell.code.source)
        row = max(1, _row(user, at))
        return cell.number, row, at - user[row - 1] + 1 + past

    def cell_lines(self, number: int) -> Optional[List[str]]:
        """A code cell's lines as written, without their endings."""
        for cell in self.cells:
            if cell.number == number:
                return [line.rstrip("\r\n") for line in physical_lines(cell.code.source)]
        return None


def _row(starts: List[int], offset: int) -> int:
    from bisect import bisect_right

    return bisect_right(starts, offset)


def _source(cell: dict, number: int) -> str:
    source = cell.get("source", "")
    if isinstance(source, list) and all(isinstance(part, str) for part in source):
        return "".join(source)
    if isinstance(source, str):
        return source
    raise UnreadableSource(f"not a valid notebook (cell {number}: its source is not text)")


def _table(data: dict, key: str) -> dict:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def _lines_in(text: str) -> int:
    """How many lines `text` has (a last line without a line break counts)."""
    if not text:
        return 0
    last = 0 if text.endswith(("\n", "\r")) else 1
    if "\r" not in text:
        return text.count("\n") + last
    return len(line_starts(text)) - 1 + last


def load(raw: str, read: Optional[Dict[str, CellCode]] = None) -> Notebook:
    """The notebook in `raw` (its JSON text), its code cells as one virtual module;
    `read`: cells already read, by their source (the language server's, from the
    notebook's last reading: an edit reads again only the cells it changed)."""
    try:
        import json

        data = json.loads(raw)
    except ValueError as exc:
        raise UnreadableSource(f"not a valid notebook (JSON: {exc})") from None
    except RecursionError:
        raise UnreadableSource("not a valid notebook (JSON nested too deeply)") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise UnreadableSource("not a valid notebook (no cells)")
    metadata = _table(data, "metadata")
    language = _table(metadata, "kernelspec").get("language") or \
        _table(metadata, "language_info").get("name") or "python"
    codes: List[Tuple[int, CellCode]] = []
    for number, cell in enumerate(data["cells"], start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code" or language != "python":
            continue
        source = _source(cell, number)
        code = read.get(source) if read is not None else None
        codes.append((number, code if code is not None else read_cell(source, quick=True)))
    marker = _MARKER + format(zlib.crc32(raw.encode("utf-8", "surrogatepass")), "08x")
    nb = _assemble(raw, data, marker, codes)
    from ..engine.prefilter import may_hold_a_finding

    # A notebook the analysis drops unparsed (no cell has a word it looks for) is not
    # parsed here either; its unsure cells (`read_cell`) are never read as Python.
    if not may_hold_a_finding(nb.virtual):
        return nb
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SyntaxWarnings are not the user's question
        if any(code.unsure for _, code in codes):  # read those exactly: they are small
            codes = [(n, read_cell(c.source) if c.unsure else c) for n, c in codes]
            nb = _assemble(raw, data, marker, codes)
        tree = _parse_whole(nb.virtual, [(c.first, c.chunk) for c in nb.cells])
        if tree is None:
            nb, tree = _parse_each(raw, data, marker, codes)
    global _PARSED
    _PARSED = (nb.virtual, tree)
    return nb


def _assemble(raw: str, data: dict, marker: str, codes: List[Tuple[int, CellCode]],
              errors: Optional[Dict[int, Place]] = None) -> Notebook:
    """The notebook with its cells in one virtual module, those with `errors` (by cell
    number) or that IPython refuses as one `_UNREAD` line each."""
    parts: List[str] = []
    cells: List[Cell] = []
    line = 1
    for number, code in codes:
        error = (errors or {}).get(number)
        if code.python is None:
            error = (1, 1, f"IPython cannot read this cell: {code.error}")
        chunk = code.python if error is None else \
            _UNREAD.format(number=number, line=error[0], column=error[1],
                           why=" ".join(error[2].split())) + "\n"
        count = _lines_in(chunk)  # type: ignore[arg-type]
        cells.append(Cell(number, line, count, chunk, code, error))  # type: ignore[arg-type]
        parts.append(chunk + marker + "\n")  # type: ignore[operator]
        line += count + 1
    return Notebook(raw, data, "".join(parts), marker, cells)


def _parse_whole(text: str, chunks: List[Tuple[int, str]]) -> Optional[ast.Module]:
    """Python's tree of a virtual module parsed at once, where that is the tree of its
    cells parsed one by one: each statement within one cell, and no cell's last line
    continued by a backslash (into the marker line, a comment: alone, it would not
    parse). Then each cell parses alone: it is whole statements, comments and blank
    lines. Else None (a `from __future__` below cell 1, a block or bracket that a cell
    leaves open: parse them one by one)."""
    try:
        tree = compile(text, "<notebook>", "exec", _FLAGS, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    from bisect import bisect_right

    firsts = [first for first, _ in chunks]
    for _, chunk in chunks:
        if chunk.rstrip("\r\n").endswith("\\"):
            return None
    for node in tree.body:
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())])
        if bisect_right(firsts, start) != bisect_right(firsts, node.end_lineno or start):
            return None
    return tree


def _parse_each(raw: str, data: dict, marker: str, codes: List[Tuple[int, CellCode]]
                ) -> Tuple[Notebook, ast.Module]:
    """Each cell (none unsure) parsed on its own; those that cannot run are left out of
    the virtual module, which is then parsed at once, or else cell by cell."""
    errors: Dict[int, Place] = {}
    for index, (number, code) in enumerate(codes):
        if code.python is None:
            continue
        tree, error = _parse_cell(code, 1)
        if tree is not None:
            continue
        exact = read_cell(code.source)  # read quickly: IPython may refuse it outright
        if exact.python is None:
            codes[index] = (number, exact)
        elif error is not None:
            errors[number] = error
    nb = _assemble(raw, data, marker, codes, errors)
    whole = _parse_whole(nb.virtual, [(c.first, c.chunk) for c in nb.cells])
    if whole is not None:
        return nb, whole
    bodies: List[ast.stmt] = []
    for cell in nb.cells:
        if cell.error is None:
            tree, _ = _parse_cell(cell.code, cell.first)
            bodies.extend(tree.body if tree is not None else ())
    return nb, ast.Module(body=bodies, type_ignores=[])


def _parse_cell(code: CellCode, first: int) -> Tuple[Optional[ast.Module], Optional[Place]]:
    """Python's tree of a cell read by IPython, numbered from line `first` of the virtual
    module; else None and (line, column, why) in the cell as written."""
    python = code.python or ""
    try:
        padded = "\n" * (first - 1) + python  # numbered as in the virtual module
        return compile(padded, "<cell>", "exec", _FLAGS, dont_inherit=True), None
    except SyntaxError as exc:
        line = max(1, (exc.lineno or first) - first + 1)
        starts = line_starts(python)
        offset = starts[min(line, len(starts)) - 1] + max(0, (exc.offset or 1) - 1)
        at = code.source_offset(min(offset, len(python)))
        user = line_starts(code.source)
        row = max(1, _row(user, at))
        return None, (row, at - user[row - 1] + 1, f"cannot parse: {exc.msg}")
    except ValueError as exc:  # NUL bytes (before Python 3.12)
        return None, (1, 1, f"cannot parse: {exc}")
    except (RecursionError, MemoryError):
        return None, (1, 1, "cannot parse: too deeply nested for Python's own parser")


# The tree `load` made of its virtual module (cells parsed one by one there already):
# `parse_cells`, given that very text next, takes it instead of parsing again.
_PARSED: Optional[Tuple[str, ast.Module]] = None


def _chunks(text: str) -> Optional[List[Tuple[int, str]]]:
    """(first line, chunk) of each cell of a virtual module; None for any other text."""
    end = text.rstrip("\n")
    marker = end[end.rfind("\n") + 1:]
    if not marker.startswith(_MARKER):
        return None
    out = []
    line = 1
    for chunk in text.split(marker + "\n")[:-1]:
        out.append((line, chunk))
        line += _lines_in(chunk) + 1
    return out


def unread_cells(text: str, path: str) -> List[Finding]:
    """The TFS900 of each cell of a virtual module that was not read (where in the cell,
    so the finding has its cell already)."""
    found = []
    for _, chunk in _chunks(text) or ():
        match = _UNREAD_RE.match(chunk.rstrip("\r\n"))
        if match is not None and chunk.count("\n") == 1:
            number, line, column = (int(g) for g in match.group(1, 2, 3))
            found.append(Finding(path, line, column, line, column, PARSE_ERROR, PARSE_ERROR_NAME,
                                 ERROR, match.group(4), cell=number))
    return found


def is_virtual(text: str) -> bool:
    return _chunks(text) is not None


def parse_cells(text: str, path: str, errors: List[Finding]) -> ast.Module:
    """Python's tree of a virtual module, each cell parsed on its own (the cells not read
    left out: `unread_cells` reports them). A cell that no longer parses (the fixer's
    text) is a TFS900 at its line of the virtual module."""
    global _PARSED
    if _PARSED is not None and _PARSED[0] is text:
        tree = _PARSED[1]
        _PARSED = None
        return tree
    chunks = _chunks(text) or [(1, text)]
    bodies: List[ast.stmt] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        whole = _parse_whole(text, chunks)
        if whole is not None:
            return whole
        for first, chunk in chunks:
            if _UNREAD_RE.match(chunk.rstrip("\r\n")) and chunk.count("\n") == 1:
                continue
            try:
                bodies.extend(compile("\n" * (first - 1) + chunk, "<cell>", "exec", _FLAGS,
                                      dont_inherit=True).body)
            except SyntaxError as exc:
                line = exc.lineno or first
                errors.append(Finding(path, line, max(1, exc.offset or 1), line,
                                      max(1, exc.offset or 1), PARSE_ERROR, PARSE_ERROR_NAME,
                                      ERROR, f"cannot parse: {exc.msg}"))
            except (ValueError, RecursionError, MemoryError) as exc:
                errors.append(Finding(path, first, 1, first, 1, PARSE_ERROR, PARSE_ERROR_NAME,
                                      ERROR, f"cannot parse: {type(exc).__name__}"))
    return ast.Module(body=bodies, type_ignores=[])


# --- findings as the user sees them ------------------------------------------------------

def map_finding(nb: Notebook, f: Finding) -> Finding:
    if f.cell is not None:  # a cell not read: placed in its cell already
        return f
    cell, line, column = nb.position(f.line, f.column)
    end_cell, end_line, end_column = nb.position(f.end_line, f.end_column)
    if end_cell != cell or (end_line, end_column) < (line, column):
        end_line, end_column = line, column
    fix = f.fix
    if fix is not None:
        edits = []
        for e in fix.edits:
            _, start, start_column = nb.position(e.line, e.column)
            _, end, end_col = nb.position(e.end_line, e.end_column)
            edits.append(Edit(start, start_column, end, end_col, e.content))
        fix = Fix(fix.applicability, fix.message, tuple(edits))
    related = tuple(map_related(nb, r) if r.path == f.path else r for r in f.related)
    return Finding(f.path, line, column, end_line, end_column, f.code, f.name,
                   f.severity, map_message(nb, f.message), fix, cell=cell, related=related)


def map_message(nb: Notebook, message: str) -> str:
    """"line 5" of the virtual module in a message -> "cell 3, line 2"."""
    def where(match: "re.Match[str]") -> str:
        cell, line, _ = nb.position(int(match.group(1)), 1)
        return f"cell {cell}, line {line}"
    return _LINE_REFERENCE.sub(where, message)


def map_related(nb: Notebook, r: Related) -> Related:
    """A place in the notebook's virtual module, by cell."""
    cell, line, column = nb.position(r.line, r.column or 1)
    end_line: Optional[int] = None
    end_column = r.end_column
    if r.end_line is not None:
        _, end_line, end_col = nb.position(r.end_line, r.end_column or 1)
        end_column = end_col if r.end_column is not None else None
    return Related(r.path, line, r.label, column if r.column is not None else None, end_line,
                   end_column, cell)


def write_back(nb: Notebook, virtual: str) -> str:
    """The notebook's JSON text with the cells of a fixed virtual module; raises
    ValueError where the fixed code cannot be put back as it is (see `rewrite`)."""
    from .rewrite import write_back as write

    return write(nb, virtual)


def is_notebook(path: str) -> bool:
    return path.endswith(".ipynb")
