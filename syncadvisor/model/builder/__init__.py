"""One pass over Python's own `ast` tree -> a `FileModel`.

The walk (`walk`) records bindings, calls, creations, updates, reads and strategy scopes
with the scope each was written in and a sequence number; `finish` then resolves every
name once, against the complete binding tables (a function body sees module names
bound after it, as Python does). Nodes are visited in source order: sequence numbers
decide which binding a name sees.

The state of a walk is one `Walk` object (`state`); every other module here holds
functions that take it first, one module a kind of fact: `bindings` (what names
denote), `arguments` (argument spans), `effects` (variable creations, updates, saves,
reads and creator scopes), `calls` (call edges, higher-order calls, constructions),
`handovers` (what an argument hands to its callee), `parameters` (what a function's
parameters hold where the file shows its calls). `syntax` holds the pure helpers. Imports
run one way: syntax <- state <- bindings <- arguments, handovers, effects <- calls <-
walk; parameters and finish come after. Rules never see the tree.
"""
from __future__ import annotations

import ast
import sys
from typing import Sequence, Tuple

from ..facts import FileModel
from ..names import NameResolver
from .finish import finish
from .state import Walk
from .walk import visit


def build_model(tree: ast.Module, path: str, module_name: str,
                rewrites: Sequence[Tuple[str, str]], text: str) -> FileModel:
    """The model of a module from Python's tree of `text`."""
    walk = Walk(path, module_name, NameResolver(rewrites), text)
    # The walk takes two or three frames a level, and so does `finish` following what a
    # call hands over (`a.b.c...` as deep as it is written); Python builds trees up to
    # about the recursion limit deep (a chain of 900 `+` operands, or of `elif`s): room
    # for those, in both.
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 3 * limit + 100))
    try:
        visit(walk, tree)
        return finish(walk)
    finally:
        sys.setrecursionlimit(limit)
