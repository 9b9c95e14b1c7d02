"""Variable creators: what a `tf.variable_creator_scope(creator)` does to the choice.

A creator is `creator(next_creator, **kwargs)`; TensorFlow calls it for every variable
created while the scope is entered, and it calls `next_creator(**kwargs)`, possibly with
`synchronization` or `aggregation` rewritten. The builder reads the body of every
function shaped like one (`effect_of`) into a small program of plain tuples:

    ("set", setting, member)                 kwargs[setting] = <member>
    ("if", tests, then_ops, else_ops)        tests: ((setting, member, equal), ...), all hold

with the members still as names to resolve (`resolved`); linking runs the program on a
variable's choice (`run`). A body that touches the two settings in any other way (a
value that is not an enum member, `kwargs` handed to another function, `pop`, a loop, a
test the program cannot express) has no program: None, an opaque creator.
"""
from __future__ import annotations

import ast
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from . import tfapi

SET = tfapi.CREATOR_SET
IF = tfapi.CREATOR_IF


class _Opaque(Exception):
    """The body does something to the settings that the program cannot say."""


# placeholder of an enum member written in the body -> the member, for a setting
MemberOf = Callable[[object, str], Optional[str]]


def effect_of(node: ast.AST, ref: Callable[[Tuple[str, ...]], object],
              method: bool) -> Tuple[bool, Optional[tuple]]:
    """(whether `node`, a def or lambda, is shaped like a creator and calls its next
    creator, its program with `ref(parts)` placeholders for members or None)."""
    args = node.args  # type: ignore[attr-defined]
    positional = [a.arg for a in args.posonlyargs + args.args]
    if method and positional:
        positional = positional[1:]
    if not positional or args.kwarg is None:
        return False, None
    reader = _Reader(positional[0], args.kwarg.arg, ref)
    names = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
    body = node.body if isinstance(node.body, list) else [ast.Return(node.body)]  # type: ignore[attr-defined]
    try:
        if names & set(tfapi.CREATOR_SETTINGS):
            raise _Opaque  # a setting taken out of `kwargs` as a parameter of its own
        ops = reader.block(body)
    except _Opaque:
        return reader.calls_next or _calls(body, positional[0]), None
    if not reader.calls_next:
        return _calls(body, positional[0]), None
    return True, ops


def _calls(body: Sequence[ast.AST], name: str) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == name
               for statement in body for n in ast.walk(statement))


def _dotted(node: ast.AST) -> Optional[Tuple[str, ...]]:
    parts: List[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return tuple(reversed(parts))


def _key(node: ast.AST) -> Optional[str]:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


class _Reader:
    def __init__(self, next_name: str, kwargs: str, ref: Callable[[Tuple[str, ...]], object]):
        self.next = next_name
        self.kwargs = kwargs
        self.ref = ref
        self.calls_next = False

    def _member(self, value: ast.AST, key: Optional[str] = None) -> object:
        literals = tfapi.CREATOR_LITERALS.get(key or "")
        if literals is not None:  # `kwargs["trainable"] = False`: the literal, as held
            if not isinstance(value, ast.Constant) or value.value not in literals or \
                    not isinstance(value.value, (bool, type(None))):
                raise _Opaque
            return literals[value.value]
        parts = _dotted(value)
        if parts is None or len(parts) < 2:
            raise _Opaque
        return self.ref(parts)

    def _set(self, key: Optional[str], value: ast.AST) -> List[tuple]:
        if key is None:
            raise _Opaque  # `kwargs[name] = ...`: which key is unknown
        if key not in tfapi.CREATOR_SETTINGS:
            self._check(value)
            return []
        return [(SET, key, self._member(value, key))]

    def block(self, statements: Sequence[ast.AST]) -> tuple:
        ops: List[tuple] = []
        for statement in statements:
            ops.extend(self.statement(statement))
        return tuple(ops)

    def statement(self, node: ast.AST) -> List[tuple]:
        kwargs = self.kwargs
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) \
                    and target.value.id == kwargs:
                return self._set(_key(target.slice), node.value)
            if isinstance(target, ast.Name) and target.id == kwargs:
                return self._rebuilt(node.value)
            value = node.value
            if isinstance(target, ast.Name) and isinstance(value, ast.Call) \
                    and isinstance(value.func, ast.Name) and value.func.id == self.next:
                return self._next_call(value)  # `variable = next_creator(**kwargs)`
        if isinstance(node, (ast.Expr, ast.Return)) and node.value is not None:
            return self._expression(node.value)
        if isinstance(node, ast.If):
            tests = self._tests(node.test)
            then, orelse = self.block(node.body), self.block(node.orelse)
            if tests is None:
                if then or orelse:
                    raise _Opaque  # a rewrite under a condition the program cannot say
                return []
            return [(IF, tests, then, orelse)] if then or orelse else []
        if isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                self._check(item.context_expr)
            return list(self.block(node.body))
        if isinstance(node, ast.Pass):
            return []
        self._check(node)
        return []

    def _rebuilt(self, value: ast.AST) -> List[tuple]:
        """`kwargs = dict(kwargs, aggregation=...)` or `{**kwargs, "aggregation": ...}`."""
        rewrites = self._copy(value)
        if rewrites is None:
            raise _Opaque
        return rewrites

    def _copy(self, value: ast.AST) -> Optional[List[tuple]]:
        """The rewrites of a copy of `kwargs` with some keys replaced; None if `value` is
        not one."""
        kwargs = self.kwargs
        if isinstance(value, ast.Name) and value.id == kwargs:
            return []
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) \
                and value.func.id == "dict" and len(value.args) == 1 \
                and isinstance(value.args[0], ast.Name) and value.args[0].id == kwargs:
            ops: List[tuple] = []
            for keyword in value.keywords:
                if keyword.arg is None:
                    return None
                ops.extend(self._set(keyword.arg, keyword.value))
            return ops
        if isinstance(value, ast.Dict) and value.keys and value.keys[0] is None \
                and isinstance(value.values[0], ast.Name) and value.values[0].id == kwargs:
            ops = []
            for key, item in zip(value.keys[1:], value.values[1:]):
                if key is None:
                    return None
                ops.extend(self._set(_key(key), item))
            return ops
        return None

    def _expression(self, node: ast.AST) -> List[tuple]:
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id == self.next:
                return self._next_call(node)
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
                    and func.value.id == self.kwargs:
                return self._kwargs_method(func.attr, node)
        self._check(node)
        return []

    def _next_call(self, node: ast.Call) -> List[tuple]:
        """`next_creator(**kwargs)`, with a copy of `kwargs` or extra keywords."""
        ops: List[tuple] = []
        passed = False
        for argument in node.args:
            self._check(argument)
        for keyword in node.keywords:
            if keyword.arg is None:
                rewrites = self._copy(keyword.value)
                if rewrites is None:
                    raise _Opaque
                ops.extend(rewrites)
                passed = True
            elif keyword.arg in tfapi.CREATOR_SETTINGS:
                raise _Opaque  # given twice with `**kwargs` (a TypeError), or alone
            else:
                self._check(keyword.value)
        if not passed:
            raise _Opaque  # the settings are not handed on as they came
        self.calls_next = True
        return ops

    def _kwargs_method(self, name: str, node: ast.Call) -> List[tuple]:
        if name == "update":
            ops: List[tuple] = []
            for argument in node.args:
                if not isinstance(argument, ast.Dict):
                    raise _Opaque
                for key, value in zip(argument.keys, argument.values):
                    if key is None:
                        raise _Opaque
                    ops.extend(self._set(_key(key), value))
            for keyword in node.keywords:
                if keyword.arg is None:
                    raise _Opaque
                ops.extend(self._set(keyword.arg, keyword.value))
            return ops
        if name == "setdefault" and node.args and \
                _key(node.args[0]) in tfapi.CREATOR_KWARGS_ALWAYS_PASSED:
            return []  # the key is always there: no change
        if name in ("get", "keys", "items", "values", "copy") or (
                name == "setdefault" and node.args and
                _key(node.args[0]) not in tfapi.CREATOR_SETTINGS):
            self._check(node)  # reads
            return []
        raise _Opaque  # pop, clear, del ...

    def _tests(self, test: ast.AST) -> Optional[tuple]:
        """((setting, member placeholder, equal), ...) of `kwargs["synchronization"] ==
        tf.VariableSynchronization.NONE and ...`; None for any other test."""
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            found: List[tuple] = []
            for value in test.values:
                part = self._tests(value)
                if part is None:
                    return None
                found.extend(part)
            return tuple(found)
        if not isinstance(test, ast.Compare) or len(test.ops) != 1:
            return None
        op = test.ops[0]
        if not isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)):
            return None
        key = self._read_key(test.left)
        if key not in tfapi.CREATOR_SETTINGS:
            return None
        equal = isinstance(op, (ast.Eq, ast.Is))
        if key in tfapi.CREATOR_LITERALS:
            try:
                return ((key, self._member(test.comparators[0], key), equal),)
            except _Opaque:
                return None
        parts = _dotted(test.comparators[0])
        if parts is None or len(parts) < 2:
            return None
        return ((key, self.ref(parts), equal),)

    def _read_key(self, node: ast.AST) -> Optional[str]:
        """The key of `kwargs[key]` or `kwargs.get(key)`."""
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) \
                and node.value.id == self.kwargs:
            return _key(node.slice)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "get" and isinstance(node.func.value, ast.Name) \
                and node.func.value.id == self.kwargs and node.args:
            return _key(node.args[0])
        return None

    def _check(self, node: ast.AST) -> None:
        """A statement or expression that changes nothing the program says: `kwargs`
        only read (`kwargs["name"]`, `kwargs.get(...)`), the next creator not called."""
        kwargs, next_name = self.kwargs, self.next
        reads = set()
        for sub in ast.walk(node):
            if isinstance(sub, ast.Subscript) and isinstance(sub.value, ast.Name) \
                    and sub.value.id == kwargs and isinstance(sub.ctx, ast.Load):
                reads.add(id(sub.value))
            elif isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) \
                    and sub.value.id == kwargs and sub.attr in ("get", "keys", "items"):
                reads.add(id(sub.value))
            elif isinstance(sub, ast.Name) and sub.id in (kwargs, next_name) \
                    and id(sub) not in reads:
                raise _Opaque


def resolved(ops: Optional[tuple], member_of: MemberOf) -> Optional[tuple]:
    """The program with each placeholder replaced by its member; None if one is not a
    member of its setting's enum."""
    if ops is None:
        return None
    out: List[tuple] = []
    for op in ops:
        if op[0] == SET:
            member = op[2] if op[1] in tfapi.CREATOR_LITERALS else member_of(op[2], op[1])
            if member is None:
                return None
            out.append((SET, op[1], member))
        else:
            tests = []
            for setting, placeholder, equal in op[1]:
                member = placeholder if setting in tfapi.CREATOR_LITERALS else \
                    member_of(placeholder, setting)
                if member is None:
                    return None
                tests.append((setting, member, equal))
            then, orelse = resolved(op[2], member_of), resolved(op[3], member_of)
            if then is None or orelse is None:
                return None
            out.append((IF, tuple(tests), then, orelse))
    return tuple(out)


def run(ops: tuple, choice: Dict[str, Optional[str]]) -> Optional[Dict[str, Optional[str]]]:
    """The choice a program passes on for `choice` (setting -> member, None where not
    known). A test of a value not known takes both branches: a setting they leave alike
    is known, one they leave apart is not (None)."""
    choice = dict(choice)
    for op in ops:
        if op[0] == SET:
            choice[op[1]] = op[2]
            continue
        holds: Optional[bool] = True
        for setting, member, equal in op[1]:
            current = choice.get(setting)
            if current is None:
                holds = None
            elif (current == member) != equal:
                holds = False
                break
        if holds is None:
            then, orelse = run(op[2], choice), run(op[3], choice)
            if then is None or orelse is None:
                return None
            choice = {key: then.get(key) if then.get(key) == orelse.get(key) else None
                      for key in set(then) | set(orelse)}
            continue
        result = run(op[2] if holds else op[3], choice)
        if result is None:
            return None
        choice = result
    return choice
