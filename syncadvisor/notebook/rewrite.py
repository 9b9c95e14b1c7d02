"""A fixed virtual module back into the notebook: the changed cells, and nothing else.

Two steps, each refusing (ValueError) rather than writing something that is not what
the fix meant:

1. A changed cell's new source, from its old source and its new Python (`cell_source`):
   the lines IPython reads as written are replaced by the new ones, with the indent or
   prompt IPython had removed from them put back; a line IPython rewrote (a magic, a
   shell escape, a cell magic) is never edited. The new source must read, as IPython
   reads it, as exactly the fixed Python, or it is refused.
2. The notebook's JSON text with only those cells' `source` values replaced in place
   (`splice`): every byte outside them (outputs, metadata, indentation, key order, the
   final newline) stays as it was; a list stays a list (a line per element, each line
   that is unchanged keeping its JSON text), a string a string. The result must load as
   the notebook with exactly those sources changed, or it is refused.
"""
from __future__ import annotations

import json
from difflib import SequenceMatcher
from typing import Dict, List, Optional, Tuple

from ..lines import physical_lines
from . import Notebook
from .ipython import CellCode, Line, read_cell


def write_back(nb: Notebook, virtual: str) -> str:
    sources = changed_sources(nb, virtual)
    return splice(nb.raw, nb.data, sources) if sources else nb.raw


def changed_sources(nb: Notebook, virtual: str) -> Dict[int, str]:
    """The new source of each cell a fixed virtual module changes, by the cell's index in
    the notebook (its number - 1); ValueError where one cannot be put back. (The language
    server sends these to the cells as edits; `write_back` splices them into the JSON.)"""
    chunks = virtual.split(nb.marker + "\n")
    if len(chunks) != len(nb.cells) + 1 or chunks[-1].strip():
        raise ValueError("the fixed code no longer matches the notebook's cells")
    sources: Dict[int, str] = {}
    for cell, chunk in zip(nb.cells, chunks):
        if chunk == cell.chunk:
            continue
        if cell.error is not None:
            raise ValueError(f"a fix would change cell {cell.number}, which is not read")
        sources[cell.number - 1] = cell_source(cell.code, chunk, cell.number)
    return sources


def cell_source(code: CellCode, python: str, number: int) -> str:
    """The cell as the user would have written `python`, IPython's reading of it."""
    ext = code.source + "\n" if code.added_newline else code.source
    lines = code.lines
    old = [line.text for line in lines]
    new = python.splitlines(keepends=True)
    out = [ext[:lines[0].start] if lines else ext]
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            out.extend(ext[line.start:line.end] for line in lines[i1:i2])
            continue
        for line in lines[i1:i2]:
            if not line.exact:
                row = code.source.count("\n", 0, line.start) + 1
                raise ValueError(f"a fix would change cell {number}, line {row}, which IPython "
                                 "rewrites (a magic or shell command), not Python as written")
        for j in range(j1, j2):
            # A new line gets the indent or prompt IPython took from the line it
            # replaces (or, inserted, from its neighbour).
            like: Optional[Line] = lines[i1 + j - j1] if i2 - i1 == j2 - j1 else \
                lines[min(i1, len(lines) - 1)] if lines else None
            prefix = ext[like.start:like.start + like.skip] if like is not None else ""
            out.append(prefix + new[j])
    if lines:
        out.append(ext[lines[-1].end:])
    source = "".join(out)
    if code.added_newline and source.endswith("\n"):
        source = source[:-1]
    if read_cell(source).python != python:
        raise ValueError(f"the fixed cell {number} would not read back as the fixed code")
    return source


# --- the JSON text -------------------------------------------------------------------

Span = Tuple[int, int]


def _ws(raw: str, at: int) -> int:
    while at < len(raw) and raw[at] in " \t\r\n":
        at += 1
    return at


_DECODER = json.JSONDecoder()


def _value_end(raw: str, at: int) -> int:
    return _DECODER.raw_decode(raw, at)[1]


def _members(raw: str, at: int):
    """(key, value start, value end) of the object at `at`; then yields its end."""
    from json.decoder import scanstring  # type: ignore[attr-defined]

    at = _ws(raw, at)
    if raw[at] != "{":
        raise ValueError("not an object")
    at = _ws(raw, at + 1)
    if raw[at] == "}":
        return
    while True:
        key, at = scanstring(raw, at + 1)
        at = _ws(raw, at)
        at = _ws(raw, at + 1)  # past ':'
        end = _value_end(raw, at)
        yield key, at, end
        at = _ws(raw, end)
        if raw[at] == "}":
            return
        at = _ws(raw, at + 1)  # past ','


def _elements(raw: str, at: int) -> List[Span]:
    at = _ws(raw, at)
    if raw[at] != "[":
        raise ValueError("not an array")
    at = _ws(raw, at + 1)
    spans: List[Span] = []
    if raw[at] == "]":
        return spans
    while True:
        end = _value_end(raw, at)
        spans.append((at, end))
        at = _ws(raw, end)
        if raw[at] == "]":
            return spans
        at = _ws(raw, at + 1)


def source_spans(raw: str) -> Dict[int, Span]:
    """Where each cell's `source` value is in the JSON text (the last one, for a key
    written twice, as json.loads takes it)."""
    cells: Optional[Span] = None
    for key, start, end in _members(raw, 0):
        if key == "cells":
            cells = (start, end)
    if cells is None:
        return {}
    spans: Dict[int, Span] = {}
    for index, (start, _) in enumerate(_elements(raw, cells[0])):
        if raw[start] != "{":
            continue
        for key, value_start, value_end in _members(raw, start):
            if key == "source":
                spans[index] = (value_start, value_end)
    return spans


def _line_indent(raw: str, at: int) -> str:
    line_start = raw.rfind("\n", 0, at) + 1
    text = raw[line_start:at]
    return text[:len(text) - len(text.lstrip(" \t"))]


def _new_value(raw: str, span: Span, old: object, new: str, ascii_only: bool) -> str:
    if isinstance(old, str):
        return json.dumps(new, ensure_ascii=ascii_only)
    start, end = span
    elements = _elements(raw, start)
    texts = [raw[a:b] for a, b in elements]
    known: Dict[str, str] = {}
    for text, value in zip(texts, old if isinstance(old, list) else []):
        known.setdefault(value, text)
    parts = [known.get(line) or json.dumps(line, ensure_ascii=ascii_only)
             for line in physical_lines(new)]
    if len(elements) >= 1:  # the list's own layout, as it was
        opening = raw[start + 1:elements[0][0]]
        closing = raw[elements[-1][1]:end - 1]
        between = raw[elements[0][1]:elements[1][0]] if len(elements) > 1 else "," + opening
    else:  # `[]`: laid out as the notebook lays out its lists
        indent = _line_indent(raw, start)
        unit = _indent_unit(raw)
        if unit is None:
            opening, closing, between = "", "", ", "
        else:
            opening = "\n" + indent + unit
            closing = "\n" + indent
            between = "," + opening
    if not parts:
        return "[]"
    return "[" + opening + between.join(parts) + closing + "]"


def _indent_unit(raw: str) -> Optional[str]:
    import re

    match = re.search(r"^\{\r?\n([ \t]+)\"", raw)
    return match.group(1) if match else None


def splice(raw: str, data: dict, sources: Dict[int, str]) -> str:
    """`raw` with the `source` of cells (by index) replaced, every other byte kept."""
    spans = source_spans(raw)
    ascii_only = raw.isascii()
    out = []
    at = 0
    expected = json.loads(raw)
    for index in sorted(sources):
        if index not in spans:
            raise ValueError(f"cell {index + 1} has no source in the notebook's JSON")
        start, end = spans[index]
        old = data["cells"][index].get("source")
        new = sources[index]
        out.append(raw[at:start])
        out.append(_new_value(raw, (start, end), old, new, ascii_only))
        at = end
        expected["cells"][index]["source"] = physical_lines(new) if isinstance(old, list) else new
    out.append(raw[at:])
    text = "".join(out)
    if json.loads(text) != expected:
        raise ValueError("the notebook's JSON would not keep everything but the fixed cells")
    return text
