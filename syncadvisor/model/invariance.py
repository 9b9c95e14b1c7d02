"""Whether a value written in replica context can differ between replicas.

Inside a function that runs once per replica, what differs between replicas comes in
through its parameters (what `strategy.run` and Keras hand each replica: the batch, the
gradients), from random ops and from the replica's id; whatever is computed from them
differs too. A parameter of a function whose every call its file shows (a private method,
a nested def) is rather what those calls pass: the builder settles it from them.
Literals, and what is computed from them and from state outside the
function (`self.kernel`, a module's variable), are the same on every replica -- as long as
that state is itself the same on every replica, which only linking can tell (a
NONE-aggregation variable written with per-replica values is not). So the answer here is
either None, "can differ", or the expressions of outside state the value reads: linking
settles those over the variables they denote, to a fixpoint (`project.py`).

Locals are followed through every assignment in their function (loops included: a local
assigned from itself is assumed the same everywhere until one of its other definitions
says otherwise), and names of enclosing functions the same way. A parameter of an
enclosing function that returns the inner one, or hands it to `strategy.run`, was bound
before the inner one runs: a closure over an options object reads the same values on
every replica. Attributes of `self`
that are not variables are taken as configuration, the same on every replica, and a
method or function called with values that are the same everywhere returns one too: what
a callee reads besides its arguments is not followed into its body.
"""
from __future__ import annotations

import ast
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple, Union

from . import tfapi
from .facts import SOURCE_INPUT, SOURCE_RANDOM, SOURCE_REPLICA_ID

MAX_DEPTH = 24
# Nodes one value may cost to follow: locals defined from each other over and over would
# otherwise be followed on every path, exponentially.
MAX_STEPS = 2_000

# A definition whose value is the same everywhere (an import, a nested def or class).
_FIXED = ast.Constant(value=None)
# Expressions followed through all their children.
_COMPOUND = (ast.BinOp, ast.BoolOp, ast.UnaryOp, ast.Compare, ast.IfExp, ast.Tuple, ast.List,
             ast.Set, ast.Dict, ast.Subscript, ast.Slice, ast.Starred, ast.JoinedStr,
             ast.FormattedValue, ast.keyword)
# Where statements hold statements: bodies, branches, handlers, match cases.
_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")
_CONTEXTS = (ast.Load, ast.Store, ast.Del, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)


class Definitions:
    """A function's parameters, and every value each of its local names is bound to
    (None where the value is unknown, as for an exception caught)."""

    __slots__ = ("params", "defs", "outer", "node", "last", "_handed_out")

    def __init__(self, fn: ast.AST, walrus: Iterable[str] = ()):
        self.node = fn
        args = fn.args  # type: ignore[attr-defined]
        self.params: Set[str] = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
        self.params.update(a.arg for a in (args.vararg, args.kwarg) if a is not None)
        self.defs: Dict[str, List[Optional[ast.AST]]] = {}
        self.outer: Set[str] = set()  # names declared global or nonlocal
        for name in walrus:  # `:=` hides in expressions, which are not read here
            self.defs.setdefault(name, []).append(None)
        body = fn.body  # type: ignore[attr-defined]
        # Statements only, nested blocks included, nested defs and classes not: bindings
        # are statements (but `:=`), and expressions are most of a function's nodes.
        stack = list(body) if isinstance(body, list) else []
        while stack:
            node = stack.pop()
            self._note(node)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            for block in _BLOCKS:
                stack.extend(getattr(node, block, ()))
        self.last = _last_assignments(body, self.defs) if isinstance(body, list) else {}
        self._handed_out: Optional[Set[str]] = None

    def hands_out(self, name: str) -> bool:
        """Whether the function returns the function `name` defined in it (`return step`,
        `return tf.function(step)`) or hands it to `strategy.run`: it then runs once this
        one has bound its parameters, which it reads as they were then -- the same values
        for every replica, as this function does not run per replica to hand it out."""
        if self._handed_out is None:
            found: Set[str] = set()
            body = self.node.body  # type: ignore[attr-defined]
            # (its own `return`s, and `strategy.run` calls in it or in what it defines)
            stack = [(node, True) for node in body] if isinstance(body, list) else []
            while stack:
                node, own = stack.pop()
                if isinstance(node, ast.Return) and node.value is not None and own:
                    value = node.value
                    while isinstance(value, ast.Call) and value.args:
                        value = value.args[0]  # `tf.function(step)`, `partial(step, ...)`
                    if isinstance(value, ast.Name):
                        found.add(value.id)
                elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                        and node.func.attr in tfapi.REPLICA_RUN_METHODS and node.args \
                        and isinstance(node.args[0], ast.Name):
                    found.add(node.args[0].id)
                inner = own and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                      ast.ClassDef, ast.Lambda))
                stack.extend((child, inner) for child in ast.iter_child_nodes(node))
            self._handed_out = found
        return name in self._handed_out

    def _note(self, node: ast.AST) -> None:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                self._bind(target, node.value)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):  # `:=`: see `walrus`
            if node.value is not None:
                self._bind(node.target, node.value)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            self._bind(node.target, node.iter, loop=True)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    self._bind(item.optional_vars, item.context_expr)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            self.defs.setdefault(node.name, []).append(None)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                name = (alias.asname or alias.name).split(".")[0]
                self.defs.setdefault(name, []).append(_FIXED)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.defs.setdefault(node.name, []).append(_FIXED)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            self.outer.update(node.names)

    def _bind(self, target: ast.AST, value: ast.AST, loop: bool = False) -> None:
        """`value` is what `target` is assigned, or with `loop` what it iterates over."""
        if isinstance(target, (ast.Tuple, ast.List)):
            parts = paired(target, value, loop)
            if parts is not None:  # `a, b = x, y`; `for g, v in zip(grads, variables)`
                for element, part in parts:  # (an index is the same everywhere)
                    self._bind(element, _FIXED if part is None else part,
                               loop and part is not None)
                return
        if isinstance(target, ast.Name):
            self.defs.setdefault(target.id, []).append(value)
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
            # `self.last = ...` here: what `self.last` read here may hold (keyed with a dot,
            # which no name has)
            self.defs.setdefault(f"{target.value.id}.{target.attr}", []).append(value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:  # each name: as the whole value, at worst
                self._bind(element.value if isinstance(element, ast.Starred) else element, value)


def paired(target: ast.AST, value: Optional[ast.AST], loop: bool
           ) -> Optional[List[Tuple[ast.AST, Optional[ast.AST]]]]:
    """Each element of a tuple or list target (unstarred) with the part of `value` it
    takes, where that is plain: a tuple or list of as many values; in a loop (`value` is
    what it iterates over), `zip` of as many iterables, or `enumerate` (None for the
    index, then the iterable). None elsewhere."""
    elements = [e.value if isinstance(e, ast.Starred) else e
                for e in target.elts]  # type: ignore[attr-defined]
    if not loop:
        if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(elements) \
                and not any(isinstance(v, ast.Starred) for v in value.elts):
            return list(zip(elements, value.elts))
        starred = any(isinstance(e, ast.Starred) for e in target.elts)  # type: ignore
        if isinstance(value, ast.expr) and is_shape(value) and not starred:
            # `batch, length = tf.shape(x)`: each name takes its own axis
            return [(element, ast.copy_location(ast.Subscript(value, ast.Constant(axis),
                                                              ast.Load()), value))
                    for axis, element in enumerate(elements)]
        return None
    if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Name):
        return None
    sources: List[Optional[ast.AST]] = [a for a in value.args if not isinstance(a, ast.Starred)]
    sources += [k.value for k in value.keywords if k.arg is not None]
    if value.func.id == "enumerate" and len(elements) == 2 and sources:
        sources = [None, sources[0]]
    elif value.func.id != "zip":
        return None
    return list(zip(elements, sources)) if len(sources) == len(elements) else None


class Invariance:
    """`reads(value)`: None if the value can differ between replicas, else the
    expressions of outside state it reads (`self.x` attributes, names from outside the
    functions), for linking to settle. `chain` is the functions around the value, the
    innermost first; `self_name` the name of `self` in them. After None, `source` is the
    first thing found that makes it differ (a SOURCE_* kind, its name, the node that reads
    it), or None where the walk gave up (too deep, or a form it does not follow).

    `callers_seen[level]` says whether the function at that level of the chain is one
    whose every call its file can show (see `ModelBuilder._settle_parameters`): a parameter
    of it is then not "can differ" but what its callers pass, to settle once the file is
    walked, and `params` lists those read (the level, the name, the node that reads it)."""

    def __init__(self, chain: Sequence[Definitions], self_name: Optional[str],
                 callers_seen: Sequence[bool] = ()):
        self.chain = chain
        self.self_name = self_name
        self.callers_seen = callers_seen
        self.params: List[Tuple[int, str, ast.Name]] = []
        self.source: Optional[Tuple[str, str, ast.AST]] = None
        self._visiting: Set[str] = set()
        self._steps = MAX_STEPS

    def reads(self, node: ast.AST) -> Optional[List[ast.AST]]:
        found: List[ast.AST] = []
        return found if self._collect(node, found, 0) else None

    def _collect(self, node: ast.AST, found: List[ast.AST], depth: int) -> bool:
        """Adds what `node` reads to `found`; False if it can differ between replicas."""
        self._steps -= 1
        if depth > MAX_DEPTH or self._steps < 0:
            return False  # too much to follow: as if it could differ
        if isinstance(node, ast.Constant):
            return True
        if isinstance(node, ast.Name):
            return self._name(node, found, depth)
        if isinstance(node, ast.Attribute):
            if node.attr in tfapi.PER_REPLICA_ATTRIBUTES:
                return self._differs(SOURCE_REPLICA_ID, node.attr, node)
            if node.attr in tfapi.REPLICA_INVARIANT_ATTRIBUTES:
                return True  # `inputs.dtype`: the same for every replica's batch
            if isinstance(node.value, ast.Name) and node.value.id == self.self_name \
                    and self.self_name is not None:
                found.append(node)  # what other methods store there: linking decides
                return self._values_of(f"{self.self_name}.{node.attr}", found, depth)
            return self._collect(node.value, found, depth + 1)
        if isinstance(node, ast.Call):
            return self._call(node, found, depth)
        if isinstance(node, ast.Subscript) and _past_axis_0(node.slice) and \
                self._shape(node.value, depth):
            return True  # `tf.shape(x)[1]`: the global batch's, on every replica
        if isinstance(node, _COMPOUND):
            return all(self._collect(child, found, depth + 1)
                       for child in ast.iter_child_nodes(node)
                       if not isinstance(child, _CONTEXTS))
        if isinstance(node, ast.Lambda) and not _has_parameters(node.args):
            # `tf.cond(c, lambda: self.u.value, ...)`: what it returns, when called
            return self._collect(node.body, found, depth + 1)
        return False  # lambdas with parameters, comprehensions, awaits: not followed

    def _name(self, node: ast.Name, found: List[ast.AST], depth: int) -> bool:
        name = node.id
        if name == self.self_name:
            return True  # the object itself; its attributes are read one by one
        for level, definitions in enumerate(self.chain):
            if name in definitions.outer:
                break
            if name in definitions.params:
                if name in tfapi.REPLICA_INVARIANT_PARAMETERS:
                    return True  # Keras' `training`: one mode for every replica
                if level < len(self.callers_seen) and self.callers_seen[level]:
                    self.params.append((level, name, node))  # what its callers pass
                    return True
                inner = self.chain[level - 1].node if level else None
                if inner is not None and hasattr(inner, "name") and \
                        definitions.hands_out(inner.name):
                    found.append(node)  # a closure's: as bound before it ran
                    return True
                return self._differs(SOURCE_INPUT, name, node)  # what each replica is handed
            if name in definitions.defs:
                return self._values_of(name, found, depth, level, node)
        found.append(node)  # a module's name, or a builtin
        return True

    def _values_of(self, name: str, found: List[ast.AST], depth: int,
                   level: Optional[int] = None, use: Optional[ast.AST] = None) -> bool:
        """Whether every value bound to `name` in the function at `level` of the chain
        (None: in any of them, for `self.x`) that `use` may see is the same on every
        replica."""
        for at, definitions in enumerate(self.chain):
            values = definitions.defs.get(name)
            if values is None or (level is not None and at != level):
                continue
            last = definitions.last.get(name) if use is not None else None
            if last is not None and use is not None and _start(use) >= last[0]:
                values = [last[1]]  # what `use` sees: the function has run past it
            key = f"{at}:{name}"
            if key in self._visiting:
                continue  # a loop: decided by the name's other definitions
            self._visiting.add(key)
            try:
                if not all(value is not None and self._collect(value, found, depth + 1)
                           for value in values):
                    return False
            finally:
                self._visiting.discard(key)
        return True

    def _call(self, node: ast.Call, found: List[ast.AST], depth: int) -> bool:
        parts = _dotted(node.func)
        if parts and any(word in part for part in parts for word in tfapi.PER_REPLICA_CALL_WORDS):
            return self._differs(SOURCE_RANDOM, ".".join(parts), node)
        if parts and parts[-1] in tfapi.REPLICA_INVARIANT_RESULTS:
            return True  # all_reduce, all_gather, merge_call: every replica gets the same
        children: List[ast.AST] = [node.func, *node.args, *(k.value for k in node.keywords)]
        return all(self._collect(child, found, depth + 1) for child in children)

    def _shape(self, node: ast.AST, depth: int) -> bool:
        """Whether `node` is a tensor's shape: written as one (`is_shape`), or a local
        name every one of whose values in its function is one."""
        if is_shape(node):
            return True
        if not isinstance(node, ast.Name) or depth > MAX_DEPTH:
            return False
        for definitions in self.chain:
            if node.id in definitions.outer or node.id in definitions.params:
                return False
            values = definitions.defs.get(node.id)
            if values is not None:
                return all(value is not None and value is not _FIXED and
                           self._shape(value, depth + 1) for value in values)
        return False

    def _differs(self, kind: str, name: str, node: ast.AST) -> bool:
        """False, noting the first source of difference found."""
        if self.source is None:
            self.source = (kind, name, node)
        return False


def _last_assignments(body: List[ast.stmt], defs: Dict[str, List[Optional[ast.AST]]]
                      ) -> Dict[str, Tuple[Tuple[int, int], ast.AST]]:
    """Names rebound by a plain `name = value` among the function's own statements (not
    in a branch or a loop) after every other value they are bound to: a read after that
    statement (later in the function, or in a function defined later, which cannot run
    before its def) sees that value alone. Name -> (where the statement ends, the value)."""
    last: Dict[str, Union[ast.Assign, ast.AnnAssign]] = {}
    for statement in body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            target = statement.target
        else:
            continue
        if isinstance(target, ast.Name) and len(defs.get(target.id, ())) > 1:
            last[target.id] = statement
    found: Dict[str, Tuple[Tuple[int, int], ast.AST]] = {}
    for name, statement in last.items():
        value = statement.value
        start = (statement.lineno, statement.col_offset)
        if value is not None and all(
                other is value or (other is not None and other is not _FIXED
                                   and _start(other) < start) for other in defs[name]):
            found[name] = ((statement.end_lineno or 0, statement.end_col_offset or 0), value)
    return found


def is_shape(node: ast.AST) -> bool:
    """Whether `node` is written as a tensor's shape (tfapi.SHAPE_ATTRIBUTES,
    SHAPE_CALL_NAMES, and `.as_list()` of a shape)."""
    if isinstance(node, ast.Attribute):
        return node.attr in tfapi.SHAPE_ATTRIBUTES
    if isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name)):
        name = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
        if name in tfapi.SHAPE_LIST_METHODS and isinstance(node.func, ast.Attribute):
            return is_shape(node.func.value)
        return name in tfapi.SHAPE_CALL_NAMES
    return False


def _past_axis_0(index: ast.AST) -> bool:
    """Whether a subscript takes only axes from 1 on: a literal index >= 1, or a slice
    that starts at one (`[1:]`, `[1:3]`)."""
    if isinstance(index, ast.Slice):
        index = index.lower  # type: ignore[assignment]
    return isinstance(index, ast.Constant) and type(index.value) is int and index.value >= 1


def _start(node: ast.AST) -> Tuple[int, int]:
    return node.lineno, node.col_offset  # type: ignore[attr-defined]


def _has_parameters(args: ast.arguments) -> bool:
    return bool(args.posonlyargs or args.args or args.kwonlyargs or args.vararg or args.kwarg)


def _dotted(node: ast.AST) -> Optional[List[str]]:
    parts: List[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return parts[::-1]
    if isinstance(node, ast.Call):  # tf.distribute.get_replica_context().all_reduce(...)
        return parts[::-1]
    return None
