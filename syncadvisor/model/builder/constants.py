"""Tests the code spells out: a branch that literal configuration rules out is not
walked (RULES.md: literal configuration and module constants are evaluated, not
enumerated into every branch). `STRATEGY = "one"` then `if STRATEGY == "mirrored":`
never runs its body; `CONFIG = {"strategy": "one"}` likewise for `CONFIG["strategy"]`.

A name's value is known where every binding of it that reaches the test (builder/
flow.py) is a literal, and they are equal; only in the scope that binds it (a function
runs later, when the module's names may hold something else) and never for a name a
`global` or `nonlocal` statement lets other code rebind.
"""
from __future__ import annotations

import ast
from typing import Any, Optional

from .state import Walk

_UNKNOWN: Any = object()
_MAX_DEPTH = 8
# Literal displays worth reading as values (ast.literal_eval reads them).
LITERALS = (ast.Constant, ast.Dict, ast.List, ast.Tuple, ast.Set)
_MAX_ITEMS = 200


def literal(node: ast.AST) -> Any:
    """The Python value of a literal display, or `_UNKNOWN`."""
    if node.__class__ not in LITERALS:
        return _UNKNOWN
    items = node.keys if isinstance(node, ast.Dict) else getattr(node, "elts", ())
    if len(items) > _MAX_ITEMS:
        return _UNKNOWN
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _UNKNOWN


def is_known(value: Any) -> bool:
    return value is not _UNKNOWN


def truth(w: Walk, test: ast.AST) -> Optional[bool]:
    """Whether `test` is surely true or surely false where the walk is; None: it depends."""
    return _truth(w, test, 0)


def _truth(w: Walk, node: ast.AST, depth: int) -> Optional[bool]:
    if depth > _MAX_DEPTH:
        return None
    kind = node.__class__
    if kind is ast.UnaryOp and node.op.__class__ is ast.Not:  # type: ignore[attr-defined]
        inner = _truth(w, node.operand, depth + 1)  # type: ignore[attr-defined]
        return None if inner is None else not inner
    if kind is ast.BoolOp:
        found = [_truth(w, value, depth + 1) for value in node.values]  # type: ignore[attr-defined]
        deciding = node.op.__class__ is ast.Or  # type: ignore[attr-defined]
        if deciding in found:
            return deciding  # (`or` with a true operand, `and` with a false one)
        return (not deciding) if None not in found else None
    value = _value(w, node, depth)
    if value is _UNKNOWN:
        return None
    try:
        return bool(value)
    except Exception:  # noqa: BLE001 - a value whose truth is not plain
        return None


def _value(w: Walk, node: ast.AST, depth: int) -> Any:
    if depth > _MAX_DEPTH:
        return _UNKNOWN
    kind = node.__class__
    if kind is ast.Constant:
        return node.value  # type: ignore[attr-defined]
    if kind is ast.Name:
        return _name(w, node.id)  # type: ignore[attr-defined]
    if kind is ast.Subscript:
        base = _value(w, node.value, depth + 1)  # type: ignore[attr-defined]
        key = _value(w, node.slice, depth + 1)  # type: ignore[attr-defined]
        if base is _UNKNOWN or key is _UNKNOWN:
            return _UNKNOWN
        try:
            return base[key]
        except Exception:  # noqa: BLE001 - a key the literal lacks: a KeyError if it runs
            return _UNKNOWN
    if kind is ast.Compare and len(node.ops) == 1:  # type: ignore[attr-defined]
        left = _value(w, node.left, depth + 1)  # type: ignore[attr-defined]
        right = _value(w, node.comparators[0], depth + 1)  # type: ignore[attr-defined]
        if left is _UNKNOWN or right is _UNKNOWN:
            return _UNKNOWN
        op = node.ops[0].__class__  # type: ignore[attr-defined]
        try:
            if op is ast.Eq:
                return left == right
            if op is ast.NotEq:
                return left != right
            if op is ast.In:
                return left in right
            if op is ast.NotIn:
                return left not in right
            if op is ast.Is:
                return left is right if right in (None, True, False) else _UNKNOWN
            if op is ast.IsNot:
                return left is not right if right in (None, True, False) else _UNKNOWN
        except Exception:  # noqa: BLE001 - values that do not compare
            return _UNKNOWN
    return _UNKNOWN


def _name(w: Walk, name: str) -> Any:
    if name in w.rebindable:
        return _UNKNOWN
    reaching = w.flow().reaching.get(name)
    if not reaching:
        return _UNKNOWN
    values = [w.literals.get(id(binding), _UNKNOWN) for binding in reaching]
    first = values[0]
    if first is _UNKNOWN:
        return _UNKNOWN
    for value in values[1:]:
        if value is _UNKNOWN or type(value) is not type(first) or value != first:
            return _UNKNOWN
    return first
