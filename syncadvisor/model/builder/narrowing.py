"""`isinstance(strategy, X)` tests: in the branch where the test passes the strategy is
an X, in the other it is not (RULES.md: `isinstance(strategy, X)` tests narrow the
strategy in each branch). The walk records the test on the strategy scopes the branch
sees (`ScopeEntry.narrowed`); `contexts.Strategies` filters the strategy's options.

Only a subject written the same way as a scope's receiver (`strategy`, `self.strategy`)
is narrowed, and only where the branch is nested in the test's `if` in one function.
"""
from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from ...records import replace
from ..facts import BOUND_QNAME, Bound
from .state import Walk
from .syntax import dotted_parts

# (the subject as written, its classes, whether the test passes in the branch)
Narrowing = Tuple[str, Tuple[Bound, ...], bool]


def narrowing_of(w: Walk, test: ast.AST) -> Optional[Narrowing]:
    """The `isinstance` test `test` is, possibly under `not`, in its true branch."""
    passes = True
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, passes = test.operand, not passes
    if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Name)
            and test.func.id == "isinstance" and len(test.args) == 2 and not test.keywords):
        return None
    subject, classes = test.args
    if dotted_parts(subject) is None:
        return None
    elements = classes.elts if isinstance(classes, ast.Tuple) else [classes]
    if not elements or any(dotted_parts(e) is None for e in elements):
        return None
    bounds = tuple(_class(w, e) for e in elements)
    return w.code(subject), bounds, passes


def _class(w: Walk, node: ast.AST) -> Bound:
    """The class `node` names, by its qualified name once the module's names are known."""
    bound = Bound(BOUND_QNAME, None, w.code(node), w.span(node))
    w.pending_bounds.append((bound, w.ref(dotted_parts(node) or ())))
    return bound


def enter_branch(w: Walk, narrowing: Narrowing, passes: bool) -> int:
    """Open the branch of `narrowing`'s test where it `passes`: the strategy scopes open
    around it on the same subject are reopened narrowed. What to pass to `leave_branch`."""
    text, classes, positive = narrowing
    fn = w.fn
    fn.narrowings.append((text, classes, positive == passes))
    scopes = w.model.scopes
    for i in reversed(fn.scopes):
        entry = scopes[i]
        if entry.creator == -1 and entry.text == text:
            scopes.append(replace(entry, narrowed=entry.narrowed + ((classes,
                                                                     positive == passes),)))
            fn.scopes.append(len(scopes) - 1)
            return 1
    return 0


def leave_branch(w: Walk, opened: int) -> None:
    fn = w.fn
    fn.narrowings.pop()
    if opened:
        fn.scopes.pop()


def narrowed_for(w: Walk, text: str) -> Tuple[Tuple[Tuple[Bound, ...], bool], ...]:
    """The tests on `text` open where a `with <text>.scope():` begins."""
    found: List[Tuple[Tuple[Bound, ...], bool]] = [
        (classes, passes) for subject, classes, passes in w.fn.narrowings if subject == text]
    return tuple(found)
