"""The block around a `with X.scope():` statement, as TFS108's fix needs it: the
statements before the `with` (what each binds and reads, and the `name = <call>` ones
as written), where the body starts, and what the items read. Recorded only for `with`
statements that open a strategy scope: a handful per file.
"""
from __future__ import annotations

import ast
from typing import List, Optional, Set, Tuple

from ..facts import Preceding
from .state import Walk

# The nearest statements kept: moving a statement further than this is not offered.
_MAX_PRECEDING = 64
_BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers")


def block_facts(w: Walk, node: ast.With
                ) -> Tuple[Tuple[Preceding, ...], Optional[Tuple[int, str]], Tuple[str, ...]]:
    """(`ScopeEntry.preceding`, `.body`, `.item_reads`) for the `with` statement `node`."""
    statements, index = _block_of(w, node)
    preceding = tuple(_preceding(w, s) for s in statements[max(0, index - _MAX_PRECEDING):index])
    first = node.body[0]
    body = None
    if first.lineno > node.lineno and _alone(w, first):
        text = _lines(w)[first.lineno - 1]
        body = (first.lineno, text[:len(text) - len(text.lstrip())])  # (tabs stay tabs)
    reads: Set[str] = set()
    for item in node.items:
        reads.update(_names(item)[1])
    return preceding, body, tuple(sorted(reads))


def _block_of(w: Walk, node: ast.stmt) -> Tuple[List[ast.stmt], int]:
    """The statement list `node` is in, and its index there: searched through the
    statements of the function it is in (or the module), not their expressions."""
    start = w.fn.node if w.fn.node is not None else w.tree
    stack = [start] if start is not None else []
    while stack:
        parent = stack.pop()
        for name in _BLOCK_FIELDS:
            statements = getattr(parent, name, None)
            if not isinstance(statements, list):
                continue
            for i, statement in enumerate(statements):
                if statement is node:
                    return statements, i
                if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    stack.append(statement)  # (a class body runs where it is)
        for case in getattr(parent, "cases", ()):
            stack.append(case)
    return [], 0


def _names(node: ast.AST) -> Tuple[Set[str], Set[str]]:
    """(the names `node` may bind, the names it may read), nested code included."""
    binds: Set[str] = set()
    reads: Set[str] = set()
    for sub in ast.walk(node):
        kind = sub.__class__
        if kind is ast.Name:
            (reads if isinstance(sub.ctx, ast.Load) else binds).add(sub.id)  # type: ignore[attr-defined]
        elif kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            binds.add(sub.name)  # type: ignore[attr-defined]
        elif kind in (ast.Import, ast.ImportFrom):
            binds.update((a.asname or a.name).partition(".")[0]
                         for a in sub.names)  # type: ignore[attr-defined]
        elif kind in (ast.Global, ast.Nonlocal):
            binds.update(sub.names)  # type: ignore[attr-defined]
    return binds, reads


def _alone(w: Walk, statement: ast.stmt) -> bool:
    """Whether `statement` has its lines to itself (a comment may follow it)."""
    lines = _lines(w)
    end_line = statement.end_lineno or statement.lineno
    if statement.lineno > len(lines) or end_line > len(lines):
        return False
    first, last = lines[statement.lineno - 1], lines[end_line - 1]
    head = first.encode("utf-8", "surrogatepass")[:statement.col_offset]
    tail = last.encode("utf-8", "surrogatepass")[statement.end_col_offset or 0:]
    rest = tail.decode("utf-8", "replace").strip()
    return not head.strip() and (not rest or rest.startswith("#"))


def _lines(w: Walk) -> List[str]:
    """The source's lines as Python numbers them (`str.splitlines` also breaks at form
    feeds and other separators, which would shift every line after one)."""
    if w.lines is None:
        text, starts = w.text, w.starts
        ends = starts[1:] + [len(text)]
        w.lines = [text[a:b].rstrip("\r\n") for a, b in zip(starts, ends)]
    return w.lines


def _preceding(w: Walk, statement: ast.stmt) -> Preceding:
    binds, reads = _names(statement)
    span = w.span(statement)
    fact = Preceding(span.line, span.end_line, tuple(sorted(binds)), tuple(sorted(reads)))
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
            and isinstance(statement.targets[0], ast.Name) \
            and isinstance(statement.value, ast.Call) and _alone(w, statement):
        value = w.span(statement.value)
        text = "\n".join(_lines(w)[span.line - 1:span.end_line]) + "\n"
        fact = Preceding(span.line, span.end_line, fact.binds, fact.reads,
                         statement.targets[0].id, (value.line, value.column), text)
    return fact
