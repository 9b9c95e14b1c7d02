"""A call's arguments, each with its span (and the parentheses that group it: fixes
add and remove arguments at those spans).
"""
from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from ..facts import Argument
from .syntax import before, grouped, trailing_comma
from .state import Walk
from .bindings import value_of


def argument_items(node: ast.Call) -> List[Tuple[ast.AST, Optional[str], ast.AST, str]]:
    """(whole argument, keyword, value, star) of each argument, in source order."""
    items: List[Tuple[ast.AST, Optional[str], ast.AST, str]] = [
        (a, None, a.value, "*") if isinstance(a, ast.Starred) else (a, None, a, "")
        for a in node.args]
    items += [(k, k.arg, k.value, "" if k.arg is not None else "**") for k in node.keywords]
    if node.args and node.keywords and before(node.keywords[0], node.args[-1]):
        items.sort(key=lambda item: (item[0].lineno, item[0].col_offset))  # type: ignore[attr-defined]
    return items


def arguments_of(w: Walk, node: ast.Call) -> Tuple[Argument, ...]:
    items = argument_items(node)
    arguments: List[Argument] = []
    # Where the text before the next argument starts: after the callee, then after
    # each argument (its grouping parentheses included).
    after = w.offsets(node.func)[1]
    for whole, keyword, value, star in items:
        start, end = w.offsets(whole)
        if whole is value:  # a positional argument: Python leaves out `(` `)` around it
            start, end = grouped(w.text, after, start, end, first=not arguments)
        arguments.append(Argument(keyword, value_of(w, value), w.text_span(start, end),
                                  star))
        after = end
    if arguments:
        comma = trailing_comma(w.text, after)
        if comma is not None:
            arguments[-1].trailing_comma = w.text_span(comma, comma + 1)
    return tuple(arguments)


def call_arguments(w: Walk, call: ast.Call):
    return ([a for a in call.args if not isinstance(a, ast.Starred)],
            [(k.arg, k.value) for k in call.keywords if k.arg is not None])
