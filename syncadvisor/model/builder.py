"""One pass over Python's own `ast` tree -> a `FileModel`.

The walk records bindings, calls, creations, updates, reads and strategy scopes with
the scope each was written in and a sequence number; `finish` then resolves every
name once, against the complete binding tables (a function body sees module names
bound after it, as Python does). Nodes are visited in source order: sequence numbers
decide which binding a name sees.

Spans are Python's positions, in characters (Python counts UTF-8 bytes); texts are
the source between them. Python leaves the parentheses that group an expression out of
its node, but an argument's span takes them: fixes add and remove arguments at those
spans. Rules never see the tree.
"""
from __future__ import annotations

import ast
import builtins
import re
import sys
from bisect import bisect_left, bisect_right
from sys import intern
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Set, Tuple

from ..lines import line_starts, position
from . import tfapi
from .facts import (
    BOOL, BOUND_ATTR, BOUND_CALL, BOUND_CONTAINER, BOUND_ELEMENT, BOUND_ITEM, BOUND_LOCAL,
    BOUND_METHOD, BOUND_NAMES, BOUND_PARAM, BOUND_QNAME, BOUND_SELF_ATTR, CALL, ENTRY_CROSS,
    ENTRY_REPLICA, EVERY_ITEM, FLOAT, INT, NONE, OTHER, QNAME, READ_CHECKPOINT, READ_SAVE,
    READ_WRITE, SOURCE_INPUT, STR, TEST_IF, TEST_WHILE,
    Argument, Bound, BranchTest, CallEdge, ClassInfo, Construction, CreationCall, CreatorScope,
    EnumRef, FileModel, FunctionInfo, LayerCall, ObjectUse, Read, ReplicaEntry, ScopeEntry,
    Source, Span, Update, Value,
)
from . import creators
from .invariance import Definitions, Invariance, paired
from .names import CLASS, COMPREHENSION, FUNCTION, MODULE, Binding, NameResolver, PendingRef, Scope

MEMBER_LIKE = re.compile(r"^[A-Z][A-Z0-9_]*$")  # an enum member's spelling
MAX_VALUE_DEPTH = 2  # how deep call arguments are kept as values
MAX_SUM_DEPTH = 8  # how many terms deep `assign(total + a + b)` is searched for `total`

_NEWLINE = re.compile(r"\r\n|\r|\n")
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_WORD = re.compile(r"\w+")
_CONSTANT_NAMES = {None: "None", True: "True", False: "False"}
_SKIPPED_FIELDS = frozenset({"ctx", "op", "ops", "type_comment", "kind", "is_async",
                             "type_ignores", "simple", "conversion", "level"})
# Where the order of `_fields` is not the source's.
_ORDER: Dict[type, Tuple[str, ...]] = {
    ast.IfExp: ("body", "test", "orelse"),
}
_FIELDS: Dict[type, Tuple[str, ...]] = {}


def _fields_of(node: ast.AST) -> Tuple[str, ...]:
    """The fields of a node's class that may hold nodes, in source order (made once a
    class, into `_FIELDS`)."""
    kind = type(node)
    fields = _FIELDS[kind] = _ORDER.get(kind) or tuple(
        f for f in node._fields if f not in _SKIPPED_FIELDS)
    return fields
_NAME, _ATTRIBUTE = ast.Name, ast.Attribute
# Arguments that may hand an object over: a name, an attribute, an item, a call (what it
# returns), a container of them (`Construction.passed`).
_LITERAL_CONTAINERS = frozenset({ast.List, ast.Tuple, ast.Set})
_PASSABLE = frozenset({ast.Name, ast.Attribute, ast.Subscript, ast.Call, ast.List, ast.Tuple,
                       ast.Set, ast.Dict})
# Names that, bound nowhere in a module, are Python's own (`len(x)`, `print(x)`).
_BUILTIN_NAMES = frozenset(dir(builtins))


def dotted_parts(node: ast.AST) -> Optional[Tuple[str, ...]]:
    """('a', 'b', 'c') for `a.b.c`; None for anything that is not a plain dotted name.
    `None`, `True` and `False` count as names (they resolve to nothing)."""
    if node.__class__ is _NAME:
        return (node.id,)
    parts: List[str] = []
    while node.__class__ is _ATTRIBUTE:
        parts.append(node.attr)
        node = node.value
    if node.__class__ is _NAME:
        parts.append(node.id)
    elif not parts and _is_name_constant(node):
        parts.append(_CONSTANT_NAMES[node.value])  # type: ignore[attr-defined]
    else:
        return None
    parts.reverse()
    return tuple(parts)


def _is_name_constant(node: ast.AST) -> bool:
    """`None`, `True`, `False`: constants to Python, names to `dotted_parts`."""
    if not isinstance(node, ast.Constant):
        return False
    value = node.value
    return value is None or value is True or value is False


def _unstarred(node: ast.AST) -> ast.AST:
    return node.value if isinstance(node, ast.Starred) else node


def _attribute_of(node: ast.AST) -> Optional[Tuple[ast.AST, str]]:
    """(value, attr) for `value.attr`."""
    return (node.value, node.attr) if isinstance(node, ast.Attribute) else None


def _name_of(node: ast.AST) -> Optional[str]:
    """`x` for the plain name `x` (and for `None`, `True`, `False`)."""
    if isinstance(node, ast.Name):
        return node.id
    return _CONSTANT_NAMES[node.value] if _is_name_constant(node) else None  # type: ignore[attr-defined]


def _func_of(node: ast.AST) -> Optional[ast.AST]:
    """The callee expression of a call; None for anything else."""
    return node.func if isinstance(node, ast.Call) else None


def _has_arguments(call: ast.Call) -> bool:
    return bool(call.args or call.keywords)


def literal_int(text: str) -> Optional[int]:
    try:
        return int(text.replace("_", ""), 0)
    except ValueError:
        return None


class Function:
    """Walk state for one function, or for the module (id None)."""

    __slots__ = ("id", "self_name", "klass", "scopes", "info", "stateless", "node", "walrus",
                 "next_creator", "own_calls", "tests", "guard")

    def __init__(self, id_: Optional[str], self_name: Optional[str], klass: Optional[str],
                 info: Optional[FunctionInfo]):
        self.id = id_
        self.self_name = self_name  # the name of `self` in a method (or its closures)
        self.klass = klass
        self.scopes: List[int] = []  # open `with X.scope()` entries, innermost last
        self.info = info
        self.stateless = 0  # open `with StatelessScope(...)` blocks
        self.node: Optional[ast.AST] = None  # the def or lambda (None: the module)
        self.walrus: set = set()  # names bound by `:=` so far (Definitions reads statements)
        # A def or lambda shaped like a variable creator, `(next_creator, **kwargs)`: the
        # name of its first parameter (after `self`) and whether `self` comes before it.
        self.next_creator: Optional[Tuple[str, bool]] = None
        # A def its file may show every call of: nested in a function, or private and
        # undecorated (and not one TensorFlow calls): its parameters are what those pass.
        self.own_calls = False
        # Open `if`/`while` tests that may be tensors (`FileModel.branch_tests` indices),
        # outermost first, and the same as a tuple: what a call made now is guarded by
        # (`FileModel.guarded_calls`), one object while the tests stay the same.
        self.tests: List[int] = []
        self.guard: Tuple[int, ...] = ()


class ModelBuilder:
    """Walks one module's tree (`walk`), then resolves what it recorded (`finish`)."""

    def __init__(self, path: str, module: str, resolver: NameResolver, text: str):
        self.model = FileModel(path=path, module=module)
        self._resolver = resolver
        self._module_scope = Scope(MODULE, None)
        self._scope = self._module_scope
        self._seq = 0
        self._functions: List[Function] = [Function(None, None, None, None)]
        self._fn = self._functions[-1]
        self._classes: List[ClassInfo] = []
        self._qualname: List[str] = []
        self._lambda_ids: Dict[int, str] = {}
        self._import_after: Optional[Span] = None  # the preamble's last statement
        self._import_before: Optional[Span] = None  # the first other statement
        # Resolved in `finish`, once every binding is known.
        self._pending_values: List[Tuple[Value, PendingRef]] = []
        self._pending_bounds: List[Tuple[Bound, PendingRef]] = []
        self._pending_names: List[Tuple[PendingRef, Bound]] = []
        self._pending_creations: List[Tuple[CreationCall, Optional[PendingRef]]] = []
        self._pending_enum_refs: List[Tuple[PendingRef, str, Span, Span, str]] = []
        self._pending_bases: List[Tuple[ClassInfo, List[PendingRef]]] = []
        self._keras_imports: set = set()
        # Local names that may stand for a variable-creating callable (`Variable as V`).
        self._creation_aliases: set = set()
        self._creation_of_node: Dict[int, int] = {}  # id(call node) -> creation index
        self._entry_lambdas: set = set()  # lambdas passed to strategy.run & co
        # Calls that may be higher-order (tfapi.HIGHER_ORDER_SLOTS_BY_NAME), kept until their
        # callee is resolved: [callee ref, callee text, method-style, edges to the callables
        # given by name, indices of the edges of the lambdas given, the function if it
        # forwards a parameter of its own]; and id(lambda) -> the record of its call.
        self._pending_higher_order: List[list] = []
        self._higher_order_lambdas: Dict[int, list] = {}
        # id(edge) -> the tests around it, for those edges (appended in `finish`)
        self._guarded_edges: Dict[int, Tuple[int, ...]] = {}
        self._definitions: Dict[int, Definitions] = {}  # id(def node) -> its locals
        self._tree: Optional[ast.AST] = None
        self._function_of: Dict[int, Function] = {}  # id(def or lambda node) -> its state
        # id(update) -> the parameters its value and its alternative value read, of
        # functions whose callers the file may show (`_settle_parameters`)
        self._update_params: Dict[int, Tuple[tuple, tuple]] = {}
        self._parameter_memo: Dict[Tuple[int, str], Tuple[bool, List[Bound],
                                                          Optional[Source]]] = {}
        self._references: Dict[str, Tuple[List[Tuple[ast.Call, tuple]], bool,
                                          Dict[int, tuple]]] = {}
        # Calls whose meaning depends on what their callee resolves to.
        self._pending_updates: List[Tuple[Update, Optional[PendingRef], Optional[Tuple[
            Bound, Optional[Value], bool, Optional[Tuple[Bound, ...]], Optional[Source]]]]] = []
        self._pending_checkpoints: List[Tuple[PendingRef, List[Read]]] = []
        self._pending_saves: List[Tuple[PendingRef, Read, Optional[Read]]] = []
        self._pending_layer_calls: List[Tuple[LayerCall, PendingRef]] = []
        # Calls that may hand objects over to a project function (`FileModel.handovers`,
        # `Construction`): what `finish` needs to record them once their callee is
        # resolved, for those that may call the project's code -- (callee, the call, its
        # arguments as (keyword, value, star) or None for the call's own, the scope,
        # sequence number and function they are in, the `partial` name to check, the
        # index of the call's edge or -1 for a `Construction`).
        self._handovers: List[Tuple[Bound, ast.Call, Optional[List[Tuple[
            Optional[str], Optional[ast.AST], str]]], Scope, int, Function,
            Optional[PendingRef], int]] = []
        # (id(scope), name) -> the Bound of that name as an argument: one per scope, as
        # every use of a name in a scope may denote what each of its bindings there does.
        self._handed_names: Dict[Tuple[object, str], Optional[Bound]] = {}
        self._finishing = False  # (in `finish`: every binding of the module is known)
        self._package = module.partition(".")[0]
        # `tf.variable_creator_scope(...)` calls (with the `with` item of each that is one)
        # and the programs of the functions shaped like a creator, to resolve.
        self._pending_creator_scopes: List[Tuple[CreatorScope, Optional[ScopeEntry],
                                                 PendingRef]] = []
        self._creator_items: set = set()  # id(call node) of the `with` items among them
        # id of a function shaped like a creator that calls its first parameter -> its
        # node and whether it is a method: its program is read in `finish`
        self._creator_candidates: Dict[str, Tuple[ast.AST, bool]] = {}
        self._text = text
        self._starts = line_starts(text)
        # line -> its UTF-8, for the lines with a non-ASCII character (columns differ there)
        self._wide: Dict[int, bytes] = {}
        if not text.isascii():
            for run in _NON_ASCII.finditer(text):
                line = bisect_right(self._starts, run.start())
                if line not in self._wide:
                    end = self._starts[line] if line < len(self._starts) else len(text)
                    self._wide[line] = text[self._starts[line - 1]:end].encode(
                        "utf-8", "surrogatepass")
        first = _NEWLINE.search(text)
        self.model.newline = first.group() if first else "\n"

    # --- positions and text ------------------------------------------------------------------

    def _column(self, line: int, byte_column: int) -> int:
        """Python counts columns in UTF-8 bytes; spans count characters."""
        encoded = self._wide.get(line)
        if encoded is None:
            return byte_column
        return len(encoded[:byte_column].decode("utf-8", "ignore"))

    def _span(self, node: ast.AST) -> Span:
        line, end_line = node.lineno, node.end_lineno  # type: ignore[attr-defined]
        wide = self._wide
        if not wide or (line not in wide and end_line not in wide):
            return Span(line, node.col_offset, end_line, node.end_col_offset)  # type: ignore[attr-defined]
        return Span(line, self._column(line, node.col_offset),  # type: ignore[attr-defined]
                    end_line, self._column(end_line, node.end_col_offset))  # type: ignore[attr-defined]

    def _offsets(self, node: ast.AST) -> Tuple[int, int]:
        span = self._span(node)
        starts = self._starts
        return starts[span.line - 1] + span.column, starts[span.end_line - 1] + span.end_column

    def _code(self, node: ast.AST) -> str:
        start, end = self._offsets(node)
        # Interned: the same names recur thousands of times in a file, and a pickle
        # writes an object it has seen once as a reference (smaller, faster models).
        return intern(self._text[start:end])

    def _text_span(self, start: int, end: int) -> Span:
        line, column = position(self._starts, start)
        end_line, end_column = position(self._starts, end)
        return Span(line, column, end_line, end_column)

    def _name_span(self, node: ast.AST, keyword: str) -> Span:
        """The span of the name in `class Name` / `def name`."""
        start, _ = self._offsets(node)
        text = self._text
        after = text.find(keyword, start) + len(keyword)
        at = text.find(node.name, after)  # type: ignore[attr-defined]
        line, column = position(self._starts, at)
        return Span(line, column, line, column + len(node.name))  # type: ignore[attr-defined]

    def _is_self(self, node: ast.AST) -> bool:
        fn = self._fn  # (`self_name` is None outside methods: no name equals it)
        return node.__class__ is _NAME and node.id == fn.self_name and fn.klass is not None

    def _is_super(self, node: ast.AST) -> bool:
        """`super()` in a method: its methods are the class's own, as `self`'s are."""
        return (isinstance(node, ast.Call) and self._fn.klass is not None
                and _name_of(node.func) == "super" and not node.args and not node.keywords)

    # --- bookkeeping -------------------------------------------------------------------------

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def _ref(self, parts: Tuple[str, ...]) -> PendingRef:
        return PendingRef(self._scope, self._next_seq(), parts)

    def _push_function(self, fn: Function) -> None:
        self._functions.append(fn)
        self._fn = fn  # the innermost: read at every call, name and attribute

    def _pop_function(self) -> None:
        self._functions.pop()
        self._fn = self._functions[-1]

    def _self_head(self, parts: Tuple[str, ...]) -> bool:
        fn = self._fn
        return fn.self_name is not None and fn.klass is not None and parts[0] == fn.self_name

    def _bind(self, name: str, bound: Bound, alias: Optional[Tuple[str, ...]] = None) -> None:
        binding = Binding(self._next_seq(), bound, alias, self._scope if alias else None)
        self._scope.bind(name, binding)
        target = alias[-1] if alias else (bound.qname or "").rpartition(".")[2]
        if target in tfapi.CREATION_CALLEE_NAMES and target != name:
            self._creation_aliases.add(name)

    def _bind_local(self, name: str) -> None:
        self._bind(name, Bound(BOUND_LOCAL, text=name))

    def _lambda_id(self, node: object) -> str:
        lambda_id = self._lambda_ids.get(id(node))
        if lambda_id is None:
            owner = self._fn.id or self.model.module
            lambda_id = self._lambda_ids[id(node)] = f"{owner}.<lambda{len(self._lambda_ids)}>"
        return lambda_id

    def _qualified(self, name: str) -> str:
        return ".".join([self.model.module] + self._qualname + [name])

    def _pop_scope(self) -> None:
        self._scope = self._scope.parent or self._module_scope

    # --- the walk ----------------------------------------------------------------------------

    def walk(self, node: ast.AST) -> None:
        handler = _HANDLERS.get(type(node))
        if handler is not None:
            handler(self, node)
        else:
            self._children(node)

    def _children(self, node: ast.AST) -> None:
        fields = _FIELDS.get(type(node))
        if fields is None:
            fields = _fields_of(node)
        walk = self.walk
        for name in fields:
            child = getattr(node, name, None)
            if isinstance(child, list):
                for item in child:
                    if isinstance(item, ast.AST) and item.__class__ not in _LEAVES:
                        walk(item)
            elif isinstance(child, ast.AST) and child.__class__ not in _LEAVES:
                walk(child)

    def _walk_all(self, nodes: Sequence[Optional[ast.AST]]) -> None:
        walk = self.walk
        for node in nodes:
            if node is not None and node.__class__ not in _LEAVES:
                walk(node)

    def _module(self, node: ast.Module) -> None:
        self._tree = node
        for statement in node.body:
            if not _is_preamble(statement):
                self._import_before = self._span(statement)
                break
            self._import_after = self._span(statement)
        self._walk_all(node.body)

    # --- imports -----------------------------------------------------------------------------

    def _import_node(self, node: ast.Import) -> None:
        for alias in node.names:
            self._import(alias.name, alias.asname)

    def _import_from_node(self, node: ast.ImportFrom) -> None:
        names = None if node.names[0].name == "*" else [(a.name, a.asname) for a in node.names]
        self._import_from(node.module or "", node.level or 0, names)

    def _import(self, full: str, asname: Optional[str]) -> None:
        """`import a.b.c [as x]`."""
        self._note_keras_import(full)
        if asname is not None:
            self._bind(asname, Bound(BOUND_QNAME, full, text=full))
        else:
            head = full.split(".", 1)[0]
            self._bind(head, Bound(BOUND_QNAME, head, text=head))

    def _import_from(self, module: str, level: int,
                     names: Optional[Sequence[Tuple[str, Optional[str]]]]
                     ) -> None:
        """`from [.]module import name [as local], ...`; names None for `import *`."""
        if level:
            module = self._absolute(level, module)
        self._note_keras_import(module)
        if names is None and module:
            self.model.star_imports += (self._resolver.canonical(module),)
        for name, asname in names or ():
            full = f"{module}.{name}" if module else name
            self._note_keras_import(full)
            local = asname if asname is not None else name
            self._bind(local, Bound(BOUND_QNAME, full, text=local))

    def _absolute(self, level: int, module: str) -> str:
        package = self.model.module.split(".")
        if not self.model.path.endswith("__init__.py"):
            package = package[:-1]
        drop = level - 1
        package = package[: len(package) - drop] if drop <= len(package) else []
        return ".".join(package + ([module] if module else []))

    def _note_keras_import(self, full: str) -> None:
        canonical = self._resolver.canonical(full)
        for module, family in tfapi.KERAS_IMPORT_FAMILIES:
            if canonical == module or canonical.startswith(module + "."):
                self._keras_imports.add(family)

    # --- classes, functions, lambdas, comprehensions -----------------------------------------

    def _class(self, node: ast.ClassDef) -> None:
        bases = [parts for parts in (dotted_parts(_unstarred(b)) for b in node.bases) if parts]
        self._enter_class(node.name, self._name_span(node, "class"), bases)
        self._walk_all(node.decorator_list)
        self._walk_all(node.bases)
        self._walk_all([k.value for k in node.keywords])
        self._walk_all(node.body)
        self._leave_class()

    def _enter_class(self, name: str, name_span: Span, base_parts: Sequence[Tuple[str, ...]]
                     ) -> None:
        class_id = self._qualified(name)
        self._bind(name, Bound(BOUND_QNAME, class_id, text=name))
        info = ClassInfo(class_id, name, (), name_span)
        self.model.classes[class_id] = info
        self._pending_bases.append((info, [self._ref(parts) for parts in base_parts]))
        self._classes.append(info)
        self._qualname.append(name)
        self._scope = Scope(CLASS, self._scope)

    def _leave_class(self) -> None:
        self._pop_scope()
        self._qualname.pop()
        self._classes.pop()

    def _function(self, node) -> None:
        keyword = "def" if isinstance(node, ast.FunctionDef) else "async def"
        static = any(isinstance(d, ast.Name) and d.id == "staticmethod"
                     for d in node.decorator_list)
        method = self._scope.kind == CLASS and not static
        self._enter_function(node.name, self._name_span(node, keyword),
                             _param_names(node.args), static)
        fn = self._fn
        fn.node = node
        self._function_of[id(node)] = fn
        name = node.name
        fn.own_calls = not node.decorator_list and (
            not method and not static and self._functions[-2].node is not None
            or name[:1] == "_" and not name.endswith("__")
            and name not in tfapi.FRAMEWORK_CALLED_METHODS)
        if node.args.kwarg is not None:
            self._creator_effect(node, method)
        if self._fn.info is not None:
            self._fn.info.params = _signature(node.args)
            self._fn.info.static = static
        self._walk_all(node.decorator_list)
        self._walk_parameters(node.args)
        if node.returns is not None:
            self.walk(node.returns)
        self._walk_all(node.body)
        self._leave_function()

    def _enter_function(self, name: str, name_span: Span, params: List[str], static: bool
                        ) -> None:
        function_id = self._qualified(name)
        self._bind(name, Bound(BOUND_QNAME, function_id, text=name))
        in_class = self._scope.kind == CLASS and bool(self._classes)
        if in_class:
            klass: Optional[str] = self._classes[-1].id
            self_name = params[0] if params and not static else None
            self._classes[-1].methods += (name,)
        else:  # a nested function sees the `self` of the method around it
            klass, self_name = self._fn.klass, self._fn.self_name
        info = FunctionInfo(function_id, name, klass if in_class else None, name_span)
        self.model.functions[function_id] = info
        self._scope = Scope(FUNCTION, self._scope)
        self._qualname.extend([name, "<locals>"])
        for param in params:
            self._bind(param, Bound(BOUND_PARAM, function_id, param, attr=param))
        self._push_function(Function(function_id, self_name, klass, info))

    def _leave_function(self) -> None:
        self._pop_function()
        del self._qualname[-2:]
        self._pop_scope()

    def _walk_parameters(self, args: ast.arguments) -> None:
        """Annotations and defaults, in source order."""
        positional = args.posonlyargs + args.args
        defaults: List[Optional[ast.AST]] = [None] * (len(positional) - len(args.defaults))
        defaults += args.defaults
        walk = self._walk_all
        for arg, default in zip(positional, defaults):
            walk([arg.annotation, default])
        if args.vararg is not None:
            walk([args.vararg.annotation])
        for arg, default in zip(args.kwonlyargs, args.kw_defaults):
            walk([arg.annotation, default])
        if args.kwarg is not None:
            walk([args.kwarg.annotation])

    def _creator_effect(self, node, method: bool) -> None:
        """Note the first parameter of a function shaped like a variable creator: if the
        walk sees it called (`_record_call`), `finish` reads what the function does."""
        args = node.args
        positional = args.posonlyargs + args.args
        first = 1 if method else 0
        if len(positional) > first:
            self._fn.next_creator = (positional[first].arg, method)

    def _lambda(self, node: ast.Lambda) -> None:
        self._enter_lambda(node, self._span(node), _param_names(node.args))
        self._fn.node = node
        self._function_of[id(node)] = self._fn
        if node.args.kwarg is not None:
            self._creator_effect(node, False)
        self._walk_parameters(node.args)
        self.walk(node.body)
        self._leave_lambda()

    def _enter_lambda(self, node: object, span: Span, params: List[str]) -> None:
        outer = self._fn
        lambda_id = self._lambda_id(node)
        info = FunctionInfo(lambda_id, "<lambda>", None, span)
        self.model.functions[lambda_id] = info
        if id(node) not in self._entry_lambdas:
            # Runs where it is written (tf.cond, map_fn, sorted...): the context it sits in.
            if self._higher_order_lambdas:
                pending = self._higher_order_lambdas.pop(id(node), None)
                if pending is not None:
                    pending[4].append(len(self.model.calls))
            self._add_call(CallEdge(outer.id, Bound(BOUND_CALL, qname=lambda_id),
                                    tuple(outer.scopes), info.span), outer)
        self._scope = Scope(FUNCTION, self._scope)
        for param in params:
            self._bind_local(param)
        self._push_function(Function(lambda_id, outer.self_name, outer.klass, info))

    def _leave_lambda(self) -> None:
        self._pop_function()
        self._pop_scope()

    def _branch(self, node) -> None:
        """`if`/`while`/`x if t else y`: a test that may be a tensor is recorded on the
        updates and the calls of the function's own code under it (`BranchTest`, and
        `_add_call` guards the calls)."""
        test_node = node.test
        kind = node.__class__
        walk_all = self._walk_all
        if kind is not ast.IfExp:
            walk_all((test_node,))
        fn = self._fn
        if _plain_test(test_node, fn.info.params if fn.info is not None else ()):
            if kind is ast.IfExp:
                walk_all((node.body, test_node, node.orelse))
            else:
                walk_all(node.body)
                walk_all(node.orelse)
            return
        is_while = kind is ast.While
        reads: List[Bound] = []
        self._test_reads(test_node, reads, 0)
        tests = self.model.branch_tests
        tests.append(BranchTest(TEST_WHILE if is_while else TEST_IF, self._span(test_node),
                                self._code(test_node), tuple(reads)))
        outer = fn.guard
        fn.tests.append(len(tests) - 1)
        fn.guard = tuple(fn.tests)
        if kind is ast.IfExp:
            walk_all((node.body, test_node, node.orelse))
        else:
            walk_all(node.body)
            if not is_while:  # (a `while`'s `else` runs once, after the loop)
                walk_all(node.orelse)
        fn.tests.pop()
        fn.guard = outer
        if is_while:
            walk_all(node.orelse)

    def _add_call(self, edge: CallEdge, fn: Function) -> int:
        """Append a call of `fn`'s own code (`edge.caller` is `fn.id`), guarded by the
        tests open in `fn`; its index."""
        calls = self.model.calls
        i = len(calls)
        if fn.guard:
            self.model.guarded_calls[i] = fn.guard
        calls.append(edge)
        return i

    def _test_reads(self, node: ast.AST, reads: List[Bound], depth: int) -> None:
        """The operands whose values a test takes: what decides whether it is a tensor."""
        kind = node.__class__
        if depth > MAX_SUM_DEPTH:
            return
        if kind is ast.UnaryOp:
            self._test_reads(node.operand, reads, depth + 1)  # type: ignore[attr-defined]
        elif kind is ast.BoolOp:
            for value in node.values:  # type: ignore[attr-defined]
                self._test_reads(value, reads, depth + 1)
        elif kind is ast.BinOp:
            self._test_reads(node.left, reads, depth + 1)  # type: ignore[attr-defined]
            self._test_reads(node.right, reads, depth + 1)  # type: ignore[attr-defined]
        elif kind is ast.Compare:
            if not any(op.__class__ in _PYTHON_COMPARISONS
                       for op in node.ops):  # type: ignore[attr-defined]
                for operand in [node.left, *node.comparators]:  # type: ignore[attr-defined]
                    self._test_reads(operand, reads, depth + 1)
        elif kind is _NAME or kind is _ATTRIBUTE or kind is ast.Call:
            reads.append(self._ref_bound(node))

    def _comprehension(self, node) -> None:
        self._scope = Scope(COMPREHENSION, self._scope)
        if isinstance(node, ast.DictComp):
            self._walk_all([node.key, node.value])
        else:
            self.walk(node.elt)
        for generator in node.generators:
            self._bind_loop_target(generator.target, generator.iter)
            self._walk_all([generator.target, generator.iter])
            self._walk_all(generator.ifs)
        self._pop_scope()

    def _return(self, node: ast.Return) -> None:
        if node.value is not None:
            self.walk(node.value)
        info = self._fn.info
        if info is not None and node.value is not None:
            # What messages call it: `AdamW(...)` for a returned construction.
            parts = dotted_parts(node.value.func) if isinstance(node.value, ast.Call) else None
            text = f"{parts[-1]}(...)" if parts else "return value"
            info.returns.append(self._bound_for(node.value, text))

    # --- bindings ----------------------------------------------------------------------------

    def _assign(self, node: ast.Assign) -> None:
        self._walk_all(node.targets)
        self.walk(node.value)
        for target in node.targets:
            self._bind_target(target, node.value)
        value = node.value
        target_text = self._code(node.targets[0])
        elements: List[ast.AST]
        if isinstance(value, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            elements, target_text = [value.elt], target_text + "[...]"
        elif isinstance(value, (ast.List, ast.Tuple)):
            elements, target_text = [_unstarred(e) for e in value.elts], target_text + "[...]"
        else:
            elements = [value]
        self._name_creation_targets(elements, target_text)

    def _name_creation_targets(self, elements: Sequence[object], target: str) -> None:
        """`x = tf.Variable(...)`: the creation's result is known as `target`."""
        for element in elements:
            index = self._creation_of_node.get(id(element))
            if index is not None:
                self.model.creations[index].target = target

    def _ann_assign(self, node: ast.AnnAssign) -> None:
        self._walk_all([node.target, node.annotation, node.value])
        self._bind_target(node.target, node.value)

    def _aug_assign(self, node: ast.AugAssign) -> None:
        self._walk_all([node.target, node.value])
        if isinstance(node.target, ast.Name):
            self._bind_local(node.target.id)

    def _named_expr(self, node: ast.NamedExpr) -> None:
        if isinstance(node.target, ast.Name):
            self._fn.walrus.add(node.target.id)
        self._walk_all([node.target, node.value])
        self._bind_target(node.target, node.value)

    def _for(self, node) -> None:
        self._bind_loop_target(node.target, node.iter)
        self._walk_all([node.target, node.iter])
        self._walk_all(node.body)
        self._walk_all(node.orelse)

    def _except_handler(self, node: ast.ExceptHandler) -> None:
        if node.type is not None:
            self.walk(node.type)
        if node.name is not None:
            self._bind(node.name, Bound(BOUND_LOCAL, text=node.name))
        self._walk_all(node.body)

    def _dict(self, node: ast.Dict) -> None:
        for key, value in zip(node.keys, node.values):
            self._walk_all([key, value])

    def _bind_target(self, target: ast.AST, value: Optional[ast.AST]) -> None:
        if isinstance(target, ast.Name):
            parts = dotted_parts(value) if value is not None else None
            if parts is not None and value is not None and not self._self_head(parts):
                self._bind(target.id, Bound(BOUND_QNAME, text=target.id, span=self._span(value)),
                           alias=parts)
            else:
                self._bind(target.id, self._bound_for(value, target.id))
        elif isinstance(target, (ast.Tuple, ast.List)):
            self._bind_unpacking(target, value)
        elif isinstance(target, ast.Starred):
            self._bind_target(target.value, None)
        elif isinstance(target, ast.Attribute) and self._is_self(target.value):
            klass = self.model.classes.get(self._fn.klass or "")
            if klass is not None:
                bound = self._bound_for(value, "self." + target.attr)
                klass.attrs.setdefault(target.attr, []).append(bound)

    def _bind_unpacking(self, target, value: Optional[ast.AST]) -> None:
        elements = target.elts
        parts = paired(target, value, loop=False)
        if parts is not None:
            for element, item in parts:
                self._bind_target(element, item)
            return
        if value is None or any(isinstance(e, ast.Starred) for e in elements):
            for element in elements:
                self._bind_target(_unstarred(element), None)
            return
        source = self._bound_for(value, self._code(value))
        for i, element in enumerate(elements):
            if isinstance(element, ast.Name):
                self._bind(element.id, Bound(BOUND_ITEM, text=element.id, attr=str(i),
                                             options=(source,)))
            elif isinstance(element, ast.Attribute) and self._is_self(element.value):
                # `self.accum, self.seen = make_state(model)`: item i of what it returns
                klass = self.model.classes.get(self._fn.klass or "")
                if klass is not None:
                    klass.attrs.setdefault(element.attr, []).append(Bound(
                        BOUND_ITEM, text="self." + element.attr, attr=str(i), options=(source,)))
            else:
                self._bind_target(element, None)

    def _bind_loop_target(self, target: ast.AST, iterable: ast.AST) -> None:
        parts = paired(target, iterable, loop=True) \
            if isinstance(target, (ast.Tuple, ast.List)) else None
        if parts is not None:  # `for g, v in zip(grads, variables)`, `enumerate(xs)`
            for element, source in parts:
                if isinstance(element, ast.Name) and source is not None:
                    self._bind(element.id, self._element_of(source))
                else:
                    self._bind_target(element, None)
            return
        if isinstance(target, ast.Name):
            self._bind(target.id, self._element_of(iterable))
        else:
            self._bind_target(target, None)

    def _element_of(self, source: ast.AST) -> Bound:
        text = self._code(source)
        if source.__class__ in _LITERAL_CONTAINERS:  # `for v in (acc, total):`: each of them
            return Bound(BOUND_ELEMENT, text=text, options=(self._bound_for(source, text),))
        return Bound(BOUND_ELEMENT, text=text, options=(self._ref_bound(source),))

    # --- what a name, an expression or a value is --------------------------------------------

    def _name_bound(self, node: ast.Name, text: Optional[str]) -> Bound:
        """`_bound_for(node, text)` for a plain name, the commonest case by far, in one
        step. A name's text is the name, on an ASCII line; elsewhere Python may have
        normalised it (NFKC: `ﬁ` is `fi`), so it is taken from the source."""
        name = node.id
        if text is None:
            text = self._code(node) if node.lineno in self._wide else name
        if self._is_self(node):
            return Bound(BOUND_LOCAL, None, text, self._span(node))
        bound = Bound(BOUND_NAMES, None, text, self._span(node))  # (kind, qname, text, span)
        self._pending_names.append((self._ref((name,)), bound))
        return bound

    def _bound_for(self, value: Optional[ast.AST], text: str) -> Bound:
        if value is None:
            return Bound(BOUND_LOCAL, text=text)
        if value.__class__ is ast.Name:
            return self._name_bound(value, text)
        span = self._span(value)
        parts = dotted_parts(value)
        if parts is not None and not self._self_head(parts):
            if len(parts) == 1:
                bound = Bound(BOUND_NAMES, None, text, span)
                self._pending_names.append((self._ref(parts), bound))
                return bound
            bound = Bound(BOUND_QNAME, None, text, span)
            self._pending_bounds.append((bound, self._ref(parts)))
            return bound
        if isinstance(value, (ast.Attribute, ast.Subscript)):
            return self._ref_bound(value, text)
        if isinstance(value, ast.Call):
            func = value.func
            creation = self._creation_of_node.get(id(value))
            if isinstance(func, ast.Attribute) and self._is_self(func.value):
                return Bound(BOUND_METHOD, qname=self._fn.klass, attr=func.attr, text=text,
                             span=span, creation=creation)
            func_parts = dotted_parts(func)
            if func_parts is not None:
                first = next((a for a in value.args if not isinstance(a, ast.Starred)), None)
                options = (self._ref_bound(first),) if first is not None and (isinstance(
                    first, (ast.Name, ast.Attribute, ast.Lambda)) or _is_name_constant(first)) \
                    else ()
                bound = Bound(BOUND_CALL, text=text, span=span, creation=creation, options=options)
                self._pending_bounds.append((bound, self._ref(func_parts)))
                return bound
            return Bound(BOUND_LOCAL, text=text, span=span, creation=creation)
        if isinstance(value, (ast.List, ast.Tuple, ast.Set)):
            elements = tuple(self._bound_for(e, text) for e in value.elts
                             if not isinstance(e, ast.Starred))
            return Bound(BOUND_CONTAINER, text=text, span=span, options=elements)
        if isinstance(value, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            return Bound(BOUND_CONTAINER, text=text, span=span, attr=EVERY_ITEM,
                         options=(self._bound_for(value.elt, text),))
        return Bound(BOUND_LOCAL, text=text, span=span)

    def _ref_bound(self, node: ast.AST, text: Optional[str] = None) -> Bound:
        if node.__class__ is ast.Name:
            return self._name_bound(node, text)
        text = text if text is not None else self._code(node)
        if isinstance(node, ast.Name) or _is_name_constant(node):
            return self._bound_for(node, text)
        if isinstance(node, ast.Attribute):
            if self._is_self(node.value):
                return Bound(BOUND_SELF_ATTR, qname=self._fn.klass, attr=node.attr, text=text,
                             span=self._span(node))
            bound = Bound(BOUND_ATTR, None, text, self._span(node), node.attr,
                          (self._ref_bound(node.value),))
            parts = dotted_parts(node)
            if parts is not None and not self._self_head(parts):
                self._pending_bounds.append((bound, self._ref(parts)))
            return bound
        if isinstance(node, ast.Subscript):
            return Bound(BOUND_ELEMENT, text=text, span=self._span(node),
                         options=(self._ref_bound(node.value),))
        if isinstance(node, ast.Lambda):
            return Bound(BOUND_QNAME, qname=self._lambda_id(node), text="lambda",
                         span=self._span(node))
        if isinstance(node, ast.Call):
            return self._bound_for(node, text)
        return Bound(BOUND_LOCAL, text=text, span=self._span(node))

    def _value(self, node: ast.AST, depth: int = 0) -> Value:
        span = self._span(node)
        if isinstance(node, ast.Constant):
            literal = node.value
            if literal is None:
                return Value(NONE, "None", span)
            if literal is True or literal is False:
                return Value(BOOL, str(literal), span, literal=literal)
            text = self._code(node)
            if isinstance(literal, str) and _single_string_literal(text):
                return Value(STR, text, span, literal=literal)
            if type(literal) is int:
                return Value(INT, text, span, literal=literal_int(text))
            if type(literal) is float:
                return Value(FLOAT, text, span)
            return Value(OTHER, text, span)
        parts = dotted_parts(node)
        if parts is not None:
            value = Value(QNAME, ".".join(parts), span)
            if len(parts) > 1:
                value.prefix_text = ".".join(parts[:-1])
            self._pending_values.append((value, self._ref(parts)))
            return value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) \
                and isinstance(node.operand, ast.Constant) \
                and type(node.operand.value) in (int, float):
            inner = self._value(node.operand, depth)
            inner.span, inner.text = span, self._code(node)
            if isinstance(inner.literal, int):
                inner.literal = -inner.literal
            return inner
        if isinstance(node, ast.Call) and depth < MAX_VALUE_DEPTH:
            value = Value(CALL, self._code(node), span)
            func_parts = dotted_parts(node.func)
            if func_parts is not None:
                self._pending_values.append((value, self._ref(func_parts)))
            value.args = tuple(self._value(a, depth + 1) for a in node.args
                               if not isinstance(a, ast.Starred))
            value.kwargs = tuple((k.arg, self._value(k.value, depth + 1))
                                 for k in node.keywords if k.arg is not None)
            return value
        return Value(OTHER, self._code(node), span)

    # --- strategy scopes ---------------------------------------------------------------------

    def _with(self, node) -> None:
        entered = self._open_scopes([item.context_expr for item in node.items])
        for item in node.items:
            self.walk(item.context_expr)
            if item.optional_vars is not None:
                self._bind_target(item.optional_vars, None)
                self.walk(item.optional_vars)
        self._walk_all(node.body)
        self._close_scopes(*entered)

    def _open_scopes(self, items: Sequence[ast.AST]) -> Tuple[int, int]:
        """Enter a `with` statement's items (the expressions before `as`); what to pass
        to `_close_scopes` when it ends."""
        fn = self._fn
        stateless = sum(1 for item in items if self._is_stateless_scope(item))
        fn.stateless += stateless
        opened = 0
        for item in items:
            receiver = self._scope_receiver(item)
            if receiver is None:
                if self._creator_scope(item, True):
                    fn.scopes.append(len(self.model.scopes) - 1)
                    opened += 1
                continue
            entry = ScopeEntry((), self._code(receiver), self._span(item), fn.id)
            attribute = _attribute_of(receiver)
            if attribute is not None and self._is_self(attribute[0]):
                entry.receivers = (Bound(BOUND_SELF_ATTR, qname=fn.klass, attr=attribute[1],
                                         text=entry.text, span=self._span(receiver)),)
            else:
                entry.receivers = (self._bound_for(receiver, entry.text),)
            self.model.scopes.append(entry)
            fn.scopes.append(len(self.model.scopes) - 1)
            opened += 1
        return stateless, opened

    def _creator_scope(self, item: ast.AST, entered: bool) -> bool:
        """Record `tf.variable_creator_scope(creator)` (and, `entered` by a `with`, its
        ScopeEntry); whether `item` may be one."""
        if not isinstance(item, ast.Call) or not item.args:
            return False
        func = item.func
        attribute = _attribute_of(func)
        last = attribute[1] if attribute is not None else _name_of(func)
        parts = dotted_parts(func)
        if last not in tfapi.VARIABLE_CREATOR_SCOPE_NAMES or parts is None \
                or id(item) in self._creator_items:
            return False
        fn = self._fn
        creator = item.args[0]
        text = self._code(creator)
        scope = CreatorScope(self._ref_bound(creator, text), text, self._span(item), fn.id)
        entry = None
        if entered:
            self._creator_items.add(id(item))
            entry = ScopeEntry((), text, self._span(item), fn.id, -2)
            self.model.scopes.append(entry)
        self._pending_creator_scopes.append((scope, entry, self._ref(parts)))
        return entered

    def _close_scopes(self, stateless: int, opened: int) -> None:
        fn = self._fn
        fn.stateless -= stateless
        for _ in range(opened):
            fn.scopes.pop()

    def _is_stateless_scope(self, item) -> bool:
        func = _func_of(item)
        if func is None:
            return False
        attribute = _attribute_of(func)
        name = attribute[1] if attribute is not None else _name_of(func) or ""
        return name in tfapi.STATELESS_SCOPE_NAMES

    def _scope_receiver(self, item: ast.AST) -> Optional[ast.AST]:
        """`X` for a `X.scope()` with-item."""
        if not isinstance(item, ast.Call) or _has_arguments(item):
            return None
        func = item.func
        attribute = _attribute_of(func)
        return attribute[0] if attribute is not None and attribute[1] == "scope" else None

    # --- calls and attributes ----------------------------------------------------------------

    def _call(self, node: ast.Call) -> None:
        self._record_call(node)
        if node.func.__class__ not in _LEAVES:  # `f(x)`: nothing more to see in `f`
            self.walk(node.func)
        self._walk_all(node.args)
        for keyword in node.keywords:
            if keyword.value.__class__ not in _LEAVES:
                self.walk(keyword.value)

    @staticmethod
    def _argument_items(node: ast.Call) -> List[Tuple[ast.AST, Optional[str], ast.AST, str]]:
        """(whole argument, keyword, value, star) of each argument, in source order."""
        items: List[Tuple[ast.AST, Optional[str], ast.AST, str]] = [
            (a, None, a.value, "*") if isinstance(a, ast.Starred) else (a, None, a, "")
            for a in node.args]
        items += [(k, k.arg, k.value, "" if k.arg is not None else "**") for k in node.keywords]
        if node.args and node.keywords and _before(node.keywords[0], node.args[-1]):
            items.sort(key=lambda item: (item[0].lineno, item[0].col_offset))  # type: ignore[attr-defined]
        return items

    def _arguments(self, node: ast.Call) -> Tuple[Argument, ...]:
        items = self._argument_items(node)
        arguments: List[Argument] = []
        # Where the text before the next argument starts: after the callee, then after
        # each argument (its grouping parentheses included).
        after = self._offsets(node.func)[1]
        for whole, keyword, value, star in items:
            start, end = self._offsets(whole)
            if whole is value:  # a positional argument: Python leaves out `(` `)` around it
                start, end = _grouped(self._text, after, start, end, first=not arguments)
            arguments.append(Argument(keyword, self._value(value), self._text_span(start, end),
                                      star))
            after = end
        if arguments:
            comma = _trailing_comma(self._text, after)
            if comma is not None:
                arguments[-1].trailing_comma = self._text_span(comma, comma + 1)
        return tuple(arguments)

    def _call_arguments(self, call: ast.Call):
        return ([a for a in call.args if not isinstance(a, ast.Starred)],
                [(k.arg, k.value) for k in call.keywords if k.arg is not None])

    def _attribute(self, node: ast.Attribute) -> None:
        value = node.value
        self._record_attribute(node, value, node.attr)
        if value.__class__ not in _LEAVES:  # `x.attr`, `self.attr`: the commonest
            self.walk(value)

    def _record_call(self, node: ast.Call) -> None:
        func = node.func
        attribute = _attribute_of(func)
        last = attribute[1] if attribute is not None else _name_of(func)
        if last is None:
            return
        fn = self._fn
        callee: Optional[Bound] = None
        parts: Optional[Tuple[str, ...]] = None
        edge = -1
        if fn.next_creator is not None and last == fn.next_creator[0] and attribute is None \
                and fn.id is not None and fn.node is not None:
            self._creator_candidates[fn.id] = (fn.node, fn.next_creator[1])
        if attribute is not None and self._is_self(attribute[0]):
            callee = Bound(BOUND_METHOD, fn.klass, "", None, last)  # kind, qname, text, span, attr
        else:
            parts = dotted_parts(func)
            if parts is not None:
                # A function, a class, a method of an object (`model.build()`), or an
                # object's `__call__` (`accumulator(grads)`).
                if attribute is not None:
                    options, method = (self._ref_bound(attribute[0]),), last
                else:
                    options, method = (self._ref_bound(func),), "__call__"
                # (kind, qname, text, span, attr, options): positional, as in every hot
                # path (a call with keywords costs more than the object it makes)
                callee = Bound(BOUND_CALL, None, intern(".".join(parts)), None, method, options)
                self._pending_bounds.append((callee, self._ref(parts)))
        if callee is not None:
            edge = self._add_call(CallEdge(fn.id, callee, tuple(fn.scopes), self._span(node)), fn)
        if last in tfapi.HIGHER_ORDER_SLOTS_BY_NAME:
            self._record_higher_order(node, func, attribute, last, fn)
        if last in tfapi.CREATION_CALLEE_NAMES or last in self._creation_aliases:
            self._record_creation(node, func, attribute, last, fn)
        if last in tfapi.VARIABLE_CREATOR_SCOPE_NAMES:
            self._creator_scope(node, False)  # `stack.enter_context(...)`, or a `with` item
        if last in tfapi.UPDATE_CALLEE_NAMES and not fn.stateless:
            self._record_update(node, func, attribute, last, fn)
        if attribute is not None:
            receiver = attribute[0]
            if last in tfapi.READ_METHODS and not _has_arguments(node):
                self.model.reads.append(Read(self._ref_bound(receiver), last, self._span(node),
                                             fn.id, tuple(fn.scopes)))
            if last in tfapi.REPLICA_RUN_METHODS or last in tfapi.REPLICA_CALL_METHODS \
                    or last in tfapi.CROSS_REPLICA_FN_METHODS:
                self._record_entry(node, receiver, last, fn)
            if last in tfapi.OBJECT_USE_METHODS:
                passed = self._passed_objects(node) if last == "compile" else \
                    self._variable_owners(node, last)
                self.model.uses.append(ObjectUse(self._ref_bound(receiver), last,
                                                 self._span(node), fn.id, tuple(fn.scopes),
                                                 passed))
        if last == "Checkpoint" or last in tfapi.SAVE_METHODS:
            self._record_save(node, func, attribute, last, fn)
        elif last in tfapi.CHECKPOINT_SAVE_METHODS and attribute is not None:
            self.model.reads.append(Read(self._ref_bound(attribute[0]), READ_WRITE,
                                         self._span(node), fn.id, tuple(fn.scopes)))
        if last[:1].isupper():
            self._record_construction(node, func, last, fn)
        elif last in _PARTIAL_NAMES and parts is not None:
            self._record_partial(node, parts, fn)
        elif callee is not None and (node.args or node.keywords):
            self._record_handover(node, callee, edge, fn)
        if last in tfapi.BATCH_NORMALIZATION_NAMES:
            parts = dotted_parts(func)
            if parts is not None:
                layer = LayerCall(None, self._arguments(node), self._span(node), fn.id,
                                  tuple(fn.scopes))
                self._pending_layer_calls.append((layer, self._ref(parts)))

    def _record_higher_order(self, node: ast.Call, func: ast.AST, attribute, last: str,
                             fn: Function) -> None:
        """`tf.cond(p, self._update, f)`, `tf.while_loop(cond, body, ...)`, `ds.map(parse)`:
        an edge from the caller to each callable handed over, shaped as the edge of a call
        of it (`f()`, `self.m()`, `obj.m()`), kept in `finish` if the callee is one that
        runs it (the lambdas among them have their edge already; `finish` names it)."""
        keywords = {k.arg: k.value for k in node.keywords if k.arg is not None}
        positional = node.args
        starred = next((i for i, a in enumerate(positional) if isinstance(a, ast.Starred)),
                       len(positional))
        found: List[ast.AST] = []
        for at, keyword in tfapi.HIGHER_ORDER_SLOTS_BY_NAME[last]:
            value = keywords.get(keyword)
            if value is None and at is not None and at < starred:
                value = positional[at]
            if value is not None:
                self._callables_in(value, found, 0)
        if not found:
            return
        parts = dotted_parts(func)
        span, scopes = self._span(node), tuple(fn.scopes)
        params = fn.info.params if fn.info is not None else ()
        pending: list = [self._ref(parts) if parts is not None else None,
                         intern(".".join(parts)) if parts is not None else "." + last,
                         attribute is not None and last in tfapi.HIGHER_ORDER_METHODS, [], [],
                         None]
        for element in found:
            if element.__class__ is ast.Lambda:
                self._higher_order_lambdas[id(element)] = pending
                continue
            callee = self._callable_bound(element)
            if callee is not None:
                pending[3].append(CallEdge(fn.id, callee, scopes, span))
                if fn.tests:
                    self._guarded_edges[id(pending[3][-1])] = tuple(fn.tests)
            if element.__class__ is _NAME and element.id in params:
                pending[5] = fn.id
        self._pending_higher_order.append(pending)

    def _callables_in(self, value: ast.AST, found: List[ast.AST], depth: int) -> None:
        """The callables an argument hands over: itself, the elements of a list, tuple or
        dict of them (`switch_case`), the second of each `(predicate, fn)` pair
        (`tf.case`), the function of a `functools.partial(f, ...)`."""
        kind = value.__class__
        if kind is _NAME or kind is _ATTRIBUTE or kind is ast.Lambda:
            found.append(value)
        elif depth > 1:
            return
        elif kind is ast.Tuple and depth and len(value.elts) == 2:  # type: ignore[attr-defined]
            self._callables_in(value.elts[1], found, depth + 1)  # type: ignore[attr-defined]
        elif kind is ast.List or kind is ast.Tuple:
            for element in value.elts:  # type: ignore[attr-defined]
                self._callables_in(_unstarred(element), found, depth + 1)
        elif kind is ast.Dict:
            for element in value.values:  # type: ignore[attr-defined]
                self._callables_in(element, found, depth + 1)
        elif kind is ast.Call and value.args:  # type: ignore[attr-defined]
            callee = _attribute_of(value.func)  # type: ignore[attr-defined]
            name = callee[1] if callee is not None else _name_of(value.func)  # type: ignore[attr-defined]
            if name == tfapi.PARTIAL_NAME:
                self._callables_in(value.args[0], found, depth + 1)  # type: ignore[attr-defined]

    def _callable_bound(self, element: ast.AST) -> Optional[Bound]:
        """The callee of an edge to `element` (a name or attribute), as `_record_call`
        makes it for a call of it."""
        attribute = _attribute_of(element)
        if attribute is not None and self._is_self(attribute[0]):
            return Bound(BOUND_METHOD, self._fn.klass, "", None, attribute[1])
        parts = dotted_parts(element)
        if parts is None:
            return None
        if attribute is not None:
            options, method = (self._ref_bound(attribute[0]),), attribute[1]
        else:
            options, method = (self._ref_bound(element),), "__call__"
        callee = Bound(BOUND_CALL, None, intern(".".join(parts)), None, method, options)
        self._pending_bounds.append((callee, self._ref(parts)))
        return callee

    def _record_construction(self, node: ast.Call, func: ast.AST, last: str,
                             fn: Function) -> None:
        """A call of what may be a class: the objects it hands over by name (`Trainer(model,
        optimizer)`), or a Keras object whose options the rules read (`SGD(0.1, momentum=m)`).
        By the naming convention, a class's name starts with a capital letter."""
        items = self._argument_items(node)
        passed = tuple(self._handed(value) if value.__class__ in _PASSABLE and not star
                       else None for _, _, value, star in items)
        options = last in tfapi.KERAS3_SLOT_OPTIONS
        if not options and not any(passed):
            return
        parts = dotted_parts(func)
        if parts is None:
            return
        callee = Bound(BOUND_CALL, None, intern(".".join(parts)), self._span(node))
        self._pending_bounds.append((callee, self._ref(parts)))
        # Only a Keras object's options are read as values; following an object into a
        # parameter needs each argument's keyword and star alone (exact spans cost more).
        args = self._arguments(node) if options else tuple(
            _argument_slot(keyword, star) for _, keyword, _, star in items)
        self.model.constructions.append(Construction(
            callee, args, passed, self._span(node), fn.id, tuple(fn.scopes)))

    def _record_handover(self, node: ast.Call, callee: Bound, edge: int, fn: Function) -> None:
        """A call that may run a project function or method (`step(x, acc)`, `self.m(acc)`,
        `trainer.fit(model)`) and hand it objects: recorded in `finish`, if its callee is
        not a library's."""
        self._handovers.append((callee, node, None, self._scope, self._seq, fn, None, edge))

    def _record_partial(self, node: ast.Call, parts: Tuple[str, ...], fn: Function) -> None:
        """`partial(step, a, accumulator=acc)`: a call of `step` with those arguments (kept
        if `partial` is `functools.partial`), recorded even when it hands nothing over: a
        call of the partial object passes its positional arguments after these."""
        if not node.args or isinstance(node.args[0], ast.Starred):
            return
        target = node.args[0]
        items: List[Tuple[Optional[str], Optional[ast.AST], str]] = [
            (keyword, value, star) for whole, keyword, value, star
            in self._argument_items(node) if whole is not target]
        callee = Bound(BOUND_CALL, None, self._code(target), None, "__call__",
                       (self._ref_bound(target),))
        self._handovers.append((callee, node, items, self._scope, self._seq, fn,
                                self._ref(parts), -1))

    def _record_entry_arguments(self, node: ast.Call, target: ast.AST,
                                spec: Tuple[int, int, int], positional: List[ast.AST],
                                keywords: Dict[Optional[str], ast.AST], fn: Function) -> None:
        """`strategy.run(step, args=(x, acc), kwargs={"k": v})`: a call `step(x, acc, k=v)`
        (`tfapi.ENTRY_ARGUMENTS` says where `args` and `kwargs` are)."""
        at, kwargs_at, leading = spec
        args = keywords.get("args", positional[at] if len(positional) > at else None)
        kwargs = keywords.get("kwargs",
                              positional[kwargs_at] if len(positional) > kwargs_at else None)
        items: List[Tuple[Optional[str], Optional[ast.AST], str]] = [(None, None, "")] * leading
        if isinstance(args, (ast.Tuple, ast.List)):
            items += [(None, e.value, "*") if isinstance(e, ast.Starred) else (None, e, "")
                      for e in args.elts]
        elif args is not None:
            items.append((None, args, "*"))
        if isinstance(kwargs, ast.Dict):
            for key, value in zip(kwargs.keys, kwargs.values):
                if key is None:
                    items.append((None, value, "**"))
                elif isinstance(key, ast.Constant) and isinstance(key.value, str):
                    items.append((key.value, value, ""))
        elif kwargs is not None:
            items.append((None, kwargs, "**"))
        callee = Bound(BOUND_CALL, None, self._code(target), None, "__call__",
                       (self._ref_bound(target),))
        self._handovers.append((callee, node, items, self._scope, self._seq, fn, None, -1))

    def _finish_handovers(self) -> None:
        """Record the calls of `_handovers` that may call the project's code: not a callee
        resolved into a library module (`tfapi.LIBRARY_MODULES`, unless this file is part
        of it), not a builtin (`len(x)`), not a `partial` other than functools'. Their
        arguments are looked at where they were written."""
        resolve, lookup = self._resolver.resolve, self._resolver.lookup
        package, libraries = self._package, tfapi.LIBRARY_MODULES
        builtins_seen = not self.model.star_imports
        walk_state = self._scope, self._seq, self._fn
        self._finishing = True
        self._handed_names.clear()  # (made while bindings were still being walked)
        passed_of, passable = self._handed, _PASSABLE
        handovers = self.model.handovers
        classes = self.model.classes
        # Classes whose methods are all this file's or a library's (`unittest.TestCase`):
        # `self.assertEqual(x, y)` runs no code of the run's unless the class defines it.
        closed = {cid for cid, info in classes.items()
                  if all(b.partition(".")[0] in libraries and not b.startswith(package + ".")
                         for b in info.bases)}
        for callee, node, items, scope, seq, fn, partial_ref, edge in self._handovers:
            if partial_ref is not None:
                if resolve(partial_ref) not in tfapi.PARTIAL_CALLS:
                    continue
            elif callee.kind == BOUND_METHOD:
                if callee.qname in closed and \
                        callee.attr not in classes[callee.qname].methods:
                    continue
            elif callee.kind == BOUND_CALL:
                qname = callee.qname
                if qname is not None:
                    top = qname.partition(".")[0]
                    if top in libraries and top != package:
                        continue
                elif builtins_seen and items is None and callee.attr == "__call__" and \
                        callee.text in _BUILTIN_NAMES and \
                        lookup(scope, callee.text, seq + 1) is None:
                    continue
            self._scope, self._seq, self._fn = scope, seq, fn
            if items is not None:
                self._handover(callee, items, node, fn, always=partial_ref is not None)
                continue
            if node.keywords:
                arguments = self._argument_items(node)
                passed = tuple(passed_of(value) if not star and value.__class__ in _PASSABLE
                               else None for _, _, value, star in arguments)
                if any(passed):
                    keywords = tuple(star or keyword or "" for _, keyword, _, star in arguments)
                    handovers.append((edge, _KEYWORDS_MADE.setdefault(keywords, keywords),
                                      passed))
                continue
            passed_list = [passed_of(a) if a.__class__ in passable else None
                           for a in node.args]  # (a starred one is not: None)
            if any(passed_list):
                keywords = tuple("*" if a.__class__ is ast.Starred else "" for a in node.args)
                handovers.append((edge, _KEYWORDS_MADE.setdefault(keywords, keywords),
                                  tuple(passed_list)))
        self._scope, self._seq, self._fn = walk_state

    def _handover(self, callee: Bound, items: Sequence[Tuple[Optional[str], Optional[ast.AST],
                                                            str]],
                  node: ast.Call, fn: Function, always: bool = False) -> None:
        """Record a call of `callee` with arguments (keyword, value, star), if one hands an
        object over (or `always`)."""
        passed = tuple(self._handed(value) if value is not None and not star and
                       value.__class__ in _PASSABLE else None for _, value, star in items)
        if always or any(passed):
            self.model.constructions.append(Construction(
                callee, tuple(_argument_slot(keyword, star) for keyword, _, star in items),
                passed, self._span(node), fn.id, tuple(fn.scopes)))

    def _inert(self, bound: Bound) -> bool:
        """Whether a resolved binding can denote no object linking follows (`usage.objects`):
        a local computed in place (`x = a + b`), what a library function returns
        (`x = tf.reduce_sum(y)`) -- not a construction, a variable's creation, a wrapped
        function or the current strategy."""
        if bound.creation is not None:
            return False
        if bound.kind == BOUND_LOCAL:
            return True
        qname = bound.qname
        if bound.kind != BOUND_CALL or not qname:
            return False
        top, _, rest = qname.partition(".")
        return top in tfapi.LIBRARY_MODULES and top != self._package and \
            not rest.rpartition(".")[2][:1].isupper() and \
            qname not in tfapi.FUNCTION_WRAPPERS and qname not in tfapi.CURRENT_STRATEGY_CALLS

    def _handed_attribute(self, node: ast.Attribute) -> Optional[Bound]:
        """`self.x` or `a.b` as an argument: one Bound per scope, as `_handed` makes for
        names (without a span: nothing reports where an argument is)."""
        value = node.value
        if self._is_self(value):
            key: Tuple[object, str] = (self._fn.klass, node.attr)
            bound = self._handed_names.get(key)
            if bound is None:
                bound = self._handed_names[key] = Bound(
                    BOUND_SELF_ATTR, self._fn.klass, intern(f"self.{node.attr}"), None,
                    node.attr)
            return bound
        parts = dotted_parts(node)
        if parts is None:
            return self._ref_bound(node)
        key = (id(self._scope), ".".join(parts))
        if key in self._handed_names:
            return self._handed_names[key]
        inner = self._handed(value)
        bound = self._handed_names[key] = None if inner is None else Bound(
            BOUND_ATTR, None, intern(key[1]), None, node.attr, (inner,))
        if bound is not None:
            self._pending_bounds.append((bound, self._ref(parts)))
        return bound

    def _handed(self, value: ast.AST) -> Optional[Bound]:
        """What an argument hands over: a name, an attribute or item, what a call returns,
        the elements of a list, tuple, set or dict's values; None for anything else."""
        kind = value.__class__
        if kind is _NAME:
            name = value.id  # type: ignore[attr-defined]
            key = (id(self._scope), name)
            handed = self._handed_names
            if key in handed:
                return handed[key]
            if name == self._fn.self_name and self._fn.klass is not None:
                return None  # (`self`)
            if not self._finishing:
                bound: Optional[Bound] = Bound(BOUND_NAMES, None, intern(name))
                self._pending_names.append((self._ref((name,)), bound))  # type: ignore[arg-type]
            else:  # every binding is known: the one it may denote, or a choice of them
                live = [b for b in self._bounds_of_name(PendingRef(self._scope, self._seq + 1,
                                                                   (name,)))
                        if not self._inert(b)]
                bound = None if not live else live[0] if len(live) == 1 else \
                    Bound(BOUND_NAMES, None, intern(name), None, None, tuple(live))
            self._handed_names[key] = bound
            return bound
        if kind is _ATTRIBUTE:
            return self._handed_attribute(value)  # type: ignore[arg-type]
        if kind is ast.Subscript:
            return self._ref_bound(value)
        if kind is ast.Call:
            # What is made here (`MirroredStrategy()`, `Adam()`, `tf.Variable(...)`), or the
            # current strategy; not what a function computes (`ops.cast(x)`).
            func = value.func  # type: ignore[attr-defined]
            last = func.attr if func.__class__ is _ATTRIBUTE else \
                func.id if func.__class__ is _NAME else ""
            if not last[:1].isupper() and id(value) not in self._creation_of_node and \
                    last not in _CURRENT_STRATEGY_NAMES:
                return None
            bound = self._bound_for(value, self._code(value))
            return None if bound.kind == BOUND_LOCAL and bound.creation is None else bound
        elements: List[ast.AST] = getattr(value, "values" if kind is ast.Dict else "elts", [])
        options = tuple(b for b in (self._handed(e) for e in elements
                                    if e is not None and e.__class__ in _PASSABLE) if b)
        if not options:
            return None
        return Bound(BOUND_CONTAINER, text=self._code(value), span=self._span(value),
                     options=options)

    def _passed_objects(self, node: ast.Call) -> Tuple[Tuple[str, Bound], ...]:
        """The objects `compile(...)` is handed, a list's elements one by one."""
        given = [(k.arg, k.value) for k in node.keywords
                 if k.arg in tfapi.COMPILE_OBJECT_ARGUMENTS]
        given += [(keyword, node.args[position])
                  for keyword, position in tfapi.COMPILE_OBJECT_ARGUMENTS.items()
                  if position is not None and position < len(node.args)]
        passed: List[Tuple[str, Bound]] = []
        for keyword, value in given:
            elements = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
            passed.extend((str(keyword), self._ref_bound(e)) for e in elements
                          if not isinstance(e, ast.Starred))
        return tuple(passed)

    def _variable_owners(self, node: ast.Call, last: str) -> Tuple[Tuple[str, Bound], ...]:
        """The objects whose variables an optimizer call is handed, with the argument's
        keyword: `model` of `apply_gradients(zip(grads, model.trainable_variables))`."""
        spec = tfapi.OPTIMIZER_VARIABLE_ARGUMENTS.get(last)
        if spec is None:
            return ()
        keyword, position = spec
        value = next((k.value for k in node.keywords if k.arg == keyword), None)
        if value is None and position < len(node.args) and \
                not any(isinstance(a, ast.Starred) for a in node.args[:position + 1]):
            value = node.args[position]
        owners: List[Tuple[str, Bound]] = []
        stack = [value] if value is not None else []
        while stack:
            item = stack.pop()
            if isinstance(item, ast.Attribute) and item.attr in tfapi.MODEL_VARIABLE_ATTRIBUTES:
                owners.append((keyword, self._ref_bound(item.value)))
            elif isinstance(item, ast.Call) and isinstance(item.func, ast.Name) and \
                    item.func.id in tfapi.VARIABLE_LIST_CALLS:
                stack.extend(a for a in reversed(item.args) if not isinstance(a, ast.Starred))
            elif isinstance(item, (ast.List, ast.Tuple)):
                stack.extend(e for e in reversed(item.elts) if not isinstance(e, ast.Starred))
            elif isinstance(item, ast.BinOp) and isinstance(item.op, ast.Add):
                stack.extend((item.right, item.left))  # `a.trainable_variables + b...`
        return tuple(owners)

    def _record_update(self, node, func, attribute, last: str, fn: Function) -> None:
        positional, _ = self._call_arguments(node)
        value = self._value(positional[0]) if positional else None
        receiver = self._ref_bound(attribute[0]) if attribute is not None else \
            Bound(BOUND_LOCAL, text=last)
        update = Update(receiver, last, value, self._span(node), fn.id, tuple(fn.scopes))
        if fn.tests:
            update.tests = tuple(fn.tests)
        params: tuple = ()
        other_params: tuple = ()
        if positional:
            update.depends, update.source, params = self._depends(positional[0])
        if last == "assign" and positional and attribute is not None:
            update.accumulates = self._running_sum_of(positional[0], attribute[0])
        # `tf.compat.v1.assign(ref, value)`, or a Keras optimizer's `self.assign(var, value)`:
        # the first argument is what changes.
        alternative = None
        if positional:
            second = self._value(positional[1]) if len(positional) > 1 else None
            sums = len(positional) > 1 and self._running_sum_of(positional[1], positional[0])
            depends, source, other_params = self._depends(positional[1]) \
                if len(positional) > 1 else (None, None, ())
            alternative = (self._ref_bound(positional[0]), second, sums, depends, source)
        parts = dotted_parts(func)
        ref = self._ref(parts) if parts is not None else None
        if attribute is not None and self._is_self(attribute[0]) and len(positional) >= 2:
            ref = None  # a Keras optimizer's `self.assign(variable, value)`: a method in effect
            update.receiver, update.value, update.accumulates, update.depends, \
                update.source = alternative  # type: ignore[misc]
            alternative = None
            params, other_params = other_params, ()
        self._pending_updates.append((update, ref, alternative))
        if params or other_params:
            self._update_params[id(update)] = (params, other_params)

    def _depends(self, value: ast.AST) -> Tuple[Optional[Tuple[Bound, ...]], Optional[Source],
                                                tuple]:
        """What outside state `value` reads, or None if it can differ between replicas
        (see invariance.py), with what makes it differ where that was found, and the
        parameters it reads that `finish` settles from the calls of their function
        (its node, the name, the node that reads it): the functions around it, innermost
        first, give its locals."""
        functions = [fn for fn in reversed(self._functions) if fn.node is not None]
        invariance = Invariance([self._definitions_of(fn) for fn in functions],
                                self._fn.self_name, [fn.own_calls for fn in functions])
        reads = invariance.reads(value)
        if reads is not None:
            return tuple(self._ref_bound(read) for read in reads), None, tuple(
                (functions[level].node, name, node) for level, name, node in invariance.params)
        if invariance.source is None:
            return None, None, ()
        kind, name, node = invariance.source
        return None, Source(kind, name, self._span(node)), ()

    def _definitions_of(self, fn: Function) -> Definitions:
        definitions = self._definitions.get(id(fn.node))
        if definitions is None:
            assert fn.node is not None
            definitions = self._definitions[id(fn.node)] = Definitions(fn.node, fn.walrus)
        return definitions

    # --- parameters settled from the calls the file shows -------------------------------------

    def _settle_parameters(self) -> None:
        """Each update value that reads parameters of functions whose every call the file
        may show is the same on every replica if every call passes them values that are:
        their outside state joins the update's `depends`, or else the value can differ,
        for the reason found in the caller (the replica's batch it passes) or, where no
        call says, for the parameter itself."""
        pending = self._pending_updates
        for i, (update, ref, alternative) in enumerate(pending):
            params, other_params = self._update_params.get(id(update), ((), ()))
            if params and update.depends is not None:
                ok, reads, source = self._passed(params)
                update.depends, update.source = (update.depends + tuple(reads), None) if ok \
                    else (None, source)
            if other_params and alternative is not None:
                bound, value, sums, depends, _ = alternative
                if depends is not None:
                    ok, reads, source = self._passed(other_params)
                    alternative = (bound, value, sums, depends + tuple(reads), None) if ok \
                        else (bound, value, sums, None, source)
                    pending[i] = (update, ref, alternative)

    def _passed(self, params) -> Tuple[bool, List[Bound], Optional[Source]]:
        """Whether the parameters read are the same on every replica (see above)."""
        found: List[Bound] = []
        for fn_node, name, node in params:
            ok, reads, source = self._parameter(fn_node, name)
            if not ok:
                return False, [], source or Source(SOURCE_INPUT, name, self._span(node))
            found.extend(reads)
        return True, found, None

    def _parameter(self, fn_node: ast.AST, name: str
                   ) -> Tuple[bool, List[Bound], Optional[Source]]:
        key = (id(fn_node), name)
        known = self._parameter_memo.get(key)
        if known is None:
            # The greatest fixpoint: a recursive call passing the parameter on keeps it.
            self._parameter_memo[key] = (True, [], None)
            known = self._parameter_memo[key] = self._settle_parameter(fn_node, name)
        return known

    def _settle_parameter(self, fn_node: ast.AST, name: str
                          ) -> Tuple[bool, List[Bound], Optional[Source]]:
        """What every call of the function passes for the parameter `name` (its default
        where a call passes none), as `_passed` says; False where a reference to the
        function is not a plain call, a call unpacks its arguments, or there is none."""
        fn = self._function_of[id(fn_node)]
        method = fn.info is not None and fn.info.klass is not None and fn.self_name is not None
        args = fn_node.args  # type: ignore[attr-defined]
        found, referred, sites = self._references_of(fn_node.name)  # type: ignore[attr-defined]
        if not found or referred:
            return False, [], None
        positional = [a.arg for a in args.posonlyargs + args.args]
        defaults = dict(zip(positional[len(positional) - len(args.defaults):], args.defaults))
        defaults.update((a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults)
                        if d is not None)
        where = positional.index(name) - (1 if method else 0) if name in positional else -1
        reads: List[Bound] = []
        for call, site in found:
            if method != isinstance(call.func, ast.Attribute) or None in site or any(
                    isinstance(a, ast.Starred) for a in call.args) or any(
                    k.arg is None for k in call.keywords):
                return False, [], None
            value: Optional[ast.AST] = None
            if 0 <= where < len(call.args):
                value, at = call.args[where], site
            else:
                value = next((k.value for k in call.keywords if k.arg == name), None)
                at = site
                if value is None:
                    value, at = defaults.get(name), sites.get(id(fn_node), ())
            if value is None or None in at:
                return False, [], None
            ok, more, source = self._invariant_at(value, at)
            if not ok:
                return False, [], source
            reads.extend(more)
        return True, reads, None

    def _invariant_at(self, value: ast.AST, site: tuple
                      ) -> Tuple[bool, List[Bound], Optional[Source]]:
        """`_depends` of a value in the functions `site` (innermost first), once walked."""
        functions = [self._function_of[id(node)] for node in site]
        fn = functions[0] if functions else self._functions[0]
        invariance = Invariance([self._definitions_of(f) for f in functions], fn.self_name,
                                [f.own_calls for f in functions])
        reads = invariance.reads(value)
        if reads is None:
            if invariance.source is None:
                return False, [], None
            kind, name, node = invariance.source
            return False, [], Source(kind, name, self._span(node))
        saved = self._fn, self._scope
        self._fn, self._scope = fn, self._module_scope  # names outside `site`: the module's
        try:
            bounds = [self._ref_bound(read) for read in reads]
        finally:
            self._fn, self._scope = saved
        ok, more, source = self._passed(
            [(site[level], name, node) for level, name, node in invariance.params])
        return ok, bounds + more if ok else [], source

    def _references_of(self, name: str):
        """The calls of `name` in the file (`f(...)`, `x.f(...)`) with the functions around
        each, innermost first (None for a comprehension: names the walk does not follow);
        whether it is referred to other than as the callee of a call; and the functions
        around each def. Only the nodes whose lines hold the word `name` are looked into
        (a decorator's lines are its def's; an f-string's parts' positions are not
        trusted before Python 3.12, so what is under one is all looked into)."""
        found = self._references.get(name)
        if found is not None:
            return found
        starts, lines = self._starts, []  # type: Tuple[List[int], List[int]]
        for at in _word_positions(self._text, name):
            line = bisect_right(starts, at)
            if not lines or lines[-1] != line:
                lines.append(line)
        calls: List[Tuple[ast.Call, tuple]] = []
        other = False
        sites: Dict[int, tuple] = {}
        callees: Set[int] = set()
        stack: List[Tuple[ast.AST, tuple, bool]] = \
            [(self._tree, (), True)] if self._tree and lines else []
        fields_of = _FIELDS
        while stack:
            node, site, pruned = stack.pop()
            kind = node.__class__
            if kind is ast.Constant:
                continue
            if pruned:
                first = getattr(node, "lineno", None)
                if first is not None:
                    decorators = getattr(node, "decorator_list", None)
                    if decorators:
                        first = min(first, min(d.lineno for d in decorators))
                    at = bisect_left(lines, first)
                    if at == len(lines) or lines[at] > node.end_lineno:  # type: ignore
                        continue
                if kind is ast.JoinedStr:
                    pruned = False
            if kind is ast.Call:
                func = node.func  # type: ignore[attr-defined]
                if (func.id if func.__class__ is _NAME else getattr(func, "attr", None)) \
                        == name:
                    callees.add(id(func))
                    calls.append((node, site))  # type: ignore[arg-type]
            elif kind is _NAME:
                if node.id == name and id(node) not in callees:  # type: ignore
                    other = True
                continue
            elif kind is ast.Attribute:
                if node.attr == name and id(node) not in callees:  # type: ignore
                    other = True
            elif kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda):
                sites[id(node)] = site
                site = (node,) + site
            elif kind in (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp):
                site = (None,) + site
            fields = fields_of.get(kind)
            if fields is None:
                fields = _fields_of(node)
            for field_name in fields:
                child = getattr(node, field_name, None)
                if child.__class__ is list:
                    stack.extend((item, site, pruned) for item in child
                                 if isinstance(item, ast.AST))
                elif isinstance(child, ast.AST):
                    stack.append((child, site, pruned))
        found = self._references[name] = (calls, other, sites)
        return found

    def _running_sum_of(self, node: ast.AST, target: ast.AST, depth: int = 0) -> bool:
        """Whether `node` is `target` plus or minus other terms (`total + x`,
        `tf.add(total.read_value(), x)`): what `assign` of it keeps is a running sum."""
        if depth > MAX_SUM_DEPTH:
            return False
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.Add):
                return self._running_sum_of(node.left, target, depth + 1) or \
                    self._running_sum_of(node.right, target, depth + 1)
            return isinstance(node.op, ast.Sub) and \
                self._running_sum_of(node.left, target, depth + 1)
        if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)):
            name = node.func.id if isinstance(node.func, ast.Name) else node.func.attr
            if name in tfapi.READ_METHODS and isinstance(node.func, ast.Attribute):
                return self._code(node.func.value) == self._code(target)
            if name in tfapi.SUM_PRESERVING_CALL_NAMES:
                terms = [e for a in node.args
                         for e in (a.elts if isinstance(a, (ast.List, ast.Tuple)) else (a,))]
                return any(self._running_sum_of(t, target, depth + 1) for t in terms)
            return False
        return self._code(node) == self._code(target)

    def _record_entry(self, node, receiver, last: str, fn: Function) -> None:
        positional, keyword_list = self._call_arguments(node)
        keywords = dict(keyword_list)
        # `strategy.extended.update(...)`, `strategy.extended.call_for_each_replica(...)`
        extended = _attribute_of(receiver)
        if extended is not None and extended[1] != "extended":
            extended = None
        if last in tfapi.CROSS_REPLICA_FN_METHODS:
            if last == "update" and extended is None:
                return
            index = tfapi.CROSS_REPLICA_FN_METHODS[last]
            target = keywords.get("merge_fn" if last == "merge_call" else "fn")
            if target is None and len(positional) > index:
                target = positional[index]
            kind, strategy = ENTRY_CROSS, None
        else:
            target = keywords.get("fn", positional[0] if positional else None)
            if last in tfapi.REPLICA_CALL_METHODS:
                if extended is None:
                    return
                receiver = extended[0]
            kind, strategy = ENTRY_REPLICA, self._ref_bound(receiver)
        if target is None:
            return
        if isinstance(target, ast.Lambda):
            self._entry_lambdas.add(id(target))
        self.model.entries.append(ReplicaEntry(kind, strategy, self._ref_bound(target),
                                               self._span(node), fn.id, tuple(fn.scopes)))
        spec = tfapi.ENTRY_ARGUMENTS.get(last)
        if spec is not None:
            self._record_entry_arguments(node, target, spec, positional, keywords, fn)

    def _record_save(self, node, func, attribute, last: str, fn: Function) -> None:
        parts = dotted_parts(func)
        span, scopes = self._span(node), tuple(fn.scopes)
        positional, keywords = self._call_arguments(node)
        if last == "Checkpoint":
            if parts is None:
                return
            # `Checkpoint(vs=[a, b])`, `Checkpoint(d={"a": a})`: each element is tracked
            values = [e for _, value in keywords for e in (
                value.elts if isinstance(value, (ast.List, ast.Tuple, ast.Set)) else
                [v for v in value.values if v is not None] if isinstance(value, ast.Dict)
                else [value]) if not isinstance(e, ast.Starred)]
            reads = [Read(self._ref_bound(value), READ_CHECKPOINT, span, fn.id, scopes)
                     for value in values]
            self._pending_checkpoints.append((self._ref(parts), reads))
            return
        function_style = Read(self._ref_bound(positional[0]), READ_SAVE, span, fn.id, scopes) \
            if positional else None
        method_style = Read(self._ref_bound(attribute[0]), READ_SAVE, span, fn.id, scopes) \
            if attribute is not None else None
        if parts is not None and function_style is not None:
            self._pending_saves.append((self._ref(parts), function_style, method_style))
        elif method_style is not None:
            self.model.reads.append(method_style)

    def _record_creation(self, node, func, attribute, last: str, fn: Function) -> None:
        method = last if last in tfapi.CREATION_METHODS else None
        on_self = bool(method and attribute is not None and (
            self._is_self(attribute[0]) or self._is_super(attribute[0])))
        receiver = self._ref_bound(attribute[0]) if method and attribute is not None \
            and not on_self else None
        args = self._arguments(node)
        parts = dotted_parts(func)
        creation = CreationCall(
            callee=None, method=method, on_self=on_self, klass=fn.klass if on_self else None,
            function=fn.id, args=args, span=self._span(node), func_span=self._span(func),
            func_text=".".join(parts) if parts else self._code(func), scopes=tuple(fn.scopes),
            receiver=receiver,
        )
        self._pending_creations.append((creation, self._ref(parts) if parts else None))
        self._creation_of_node[id(node)] = len(self.model.creations)
        self.model.creations.append(creation)

    def _record_attribute(self, node, value, member: str) -> None:
        """`self.x` (a load, counted) or `<enum class>.MEMBER` (an enum reference)."""
        if self._is_self(value):
            key = (self._fn.id, member)
            loads = self.model.self_loads
            loads[key] = loads.get(key, 0) + 1
            return
        if not "A" <= member[0] <= "Z" or not MEMBER_LIKE.match(member):
            return  # (the first test spares most attributes the regular expression)
        parts = dotted_parts(value)
        if parts is None:
            return
        span = self._span(node)  # the member ends the attribute, on its last line
        member_span = Span(span.end_line, span.end_column - len(member), span.end_line,
                           span.end_column)
        self._pending_enum_refs.append((self._ref(parts), member, span, member_span,
                                        ".".join(parts)))

    # --- after the walk ----------------------------------------------------------------------

    def _bounds_of_name(self, ref: PendingRef) -> List[Bound]:
        """Every binding a plain name may have where it is used (if/else branches)."""
        # The scope `NameResolver.lookup` finds the name in: every binding there.
        _, entries = self._resolver.visible(ref.scope, ref.parts[0])
        return [b.bound if b.alias_parts is None else self._resolved_bound(b) for b in entries]

    def _resolved_bound(self, binding: Binding) -> Bound:
        bound = binding.bound
        if binding.alias_parts is not None:
            qname = self._resolver.resolve_binding(binding)
            return Bound(BOUND_QNAME, qname, text=bound.text, span=bound.span) if qname else \
                Bound(BOUND_LOCAL, text=bound.text, span=bound.span)
        return bound

    def _link_higher_order(self) -> None:
        """Keep the edges of the calls whose callee runs the callables it is given: one of
        tfapi.HIGHER_ORDER_CALLS, a `Dataset`-style method on any object, or -- on the
        condition that it forwards them (`FileModel.forwarders`) -- a function of that
        name elsewhere (a project's own `smart_cond`)."""
        calls, higher_order = self.model.calls, self.model.higher_order
        forwarders = []
        for ref, text, method_style, edges, lambdas, forwarder in self._pending_higher_order:
            qname = self._resolver.resolve(ref) if ref is not None else None
            if qname in tfapi.HIGHER_ORDER_CALLS or method_style:
                wrapper = None
                if forwarder is not None:
                    forwarders.append(forwarder)
                for i in lambdas:
                    higher_order[i] = (text, None, qname)
            elif qname:
                wrapper = qname
            else:
                continue
            for edge in edges:
                higher_order[len(calls)] = (text, wrapper, qname)
                if self._guarded_edges and id(edge) in self._guarded_edges:
                    self.model.guarded_calls[len(calls)] = self._guarded_edges[id(edge)]
                calls.append(edge)
        self.model.forwarders = tuple(dict.fromkeys(forwarders))

    def finish(self) -> FileModel:
        if self._update_params:
            self._settle_parameters()  # makes bounds: before they are resolved
        if self._import_before is not None:
            self.model.import_line = self._import_before.line
        elif self._import_after is not None:
            self.model.import_line = self._import_after.end_line + 1
        resolve = self._resolver.resolve
        for value, ref in self._pending_values:
            value.qname = resolve(ref)
            if value.kind == QNAME and value.qname is None:
                value.kind = OTHER
        for bound, ref in self._pending_bounds:
            bound.qname = resolve(ref)
            if bound.kind == BOUND_QNAME and bound.qname is None:
                bound.kind = BOUND_LOCAL
        for ref, bound in self._pending_names:
            bound.options = tuple(b for b in self._bounds_of_name(ref) if b is not bound)
        for creation, creation_ref in self._pending_creations:
            creation.callee = resolve(creation_ref) if creation_ref is not None else None
        for update, update_ref, alternative in self._pending_updates:
            if update_ref is not None and alternative is not None and \
                    resolve(update_ref) in tfapi.UPDATE_FUNCTIONS:
                update.receiver, update.value, update.accumulates, update.depends, \
                    update.source = alternative
                update.function_style = True
            self.model.updates.append(update)
        for ref, reads in self._pending_checkpoints:
            if resolve(ref) in tfapi.CHECKPOINT_CLASSES:
                self.model.reads.extend(reads)
        for ref, function_style, method_style in self._pending_saves:
            if resolve(ref) in tfapi.SAVE_FUNCTIONS:
                self.model.reads.append(function_style)
            elif method_style is not None:
                self.model.reads.append(method_style)
        self._link_higher_order()
        for layer, ref in self._pending_layer_calls:
            layer.callee = resolve(ref)
            self.model.layer_calls.append(layer)
        for scope, entry, ref in self._pending_creator_scopes:
            if resolve(ref) in tfapi.VARIABLE_CREATOR_SCOPES:
                if entry is not None:
                    entry.creator = len(self.model.creator_scopes)
                self.model.creator_scopes.append(scope)
        member_of = self._creator_member
        for function_id, (node, method) in self._creator_candidates.items():
            # Members are named through module-level names (`tf.VariableSynchronization`):
            # resolved where the whole module is bound.
            _, ops = creators.effect_of(node, self._ref, method)
            self.model.creator_effects[function_id] = creators.resolved(ops, member_of)
        for info, refs in self._pending_bases:
            info.bases = tuple(q for q in (resolve(r) for r in refs) if q)
        if self._handovers:  # (once names and bases are resolved; adds some to resolve)
            resolved, named = len(self._pending_bounds), len(self._pending_names)
            self._finish_handovers()
            for bound, ref in self._pending_bounds[resolved:]:
                bound.qname = resolve(ref)
                if bound.kind == BOUND_QNAME and bound.qname is None:
                    bound.kind = BOUND_LOCAL
            for ref, bound in self._pending_names[named:]:
                bound.options = tuple(b for b in self._bounds_of_name(ref) if b is not bound)
        for ref, member, span, member_span, text in self._pending_enum_refs:
            qname = resolve(ref)
            if qname in tfapi.ENUM_CLASSES:
                self.model.enum_refs.append(EnumRef(qname, member, span, member_span, text))
        own = self.model.module + "."
        for name, entries in self._module_scope.bindings.items():
            bounds = self.model.globals[name] = [self._resolved_bound(b) for b in entries]
            first = bounds[0]
            if first.kind == BOUND_QNAME and first.qname \
                    and not first.qname.startswith(own):  # (its own classes and functions)
                self.model.exports[name] = self._resolver.canonical(first.qname)
        self.model.keras_families = tuple(sorted(self._keras_imports))
        return self.model


    def _creator_member(self, ref: object, setting: str) -> Optional[str]:
        """The member of `setting`'s enum a creator's placeholder names, if it is one."""
        assert isinstance(ref, PendingRef)
        enum_class, _, member = (self._resolver.resolve(ref) or "").rpartition(".")
        spec = tfapi.ENUM_CLASSES.get(enum_class)
        if spec is None or spec.setting != setting:
            return None
        return member if member in spec.members else spec.aliases.get(member)


# The value of an argument nobody reads (Construction.args of a class that is not a Keras
# object with options): one shared object, so models stay small.
_UNREAD = Value(OTHER, "", Span(0, 0, 0, 0))
# (keyword, star) -> the Argument that records only those: shared, never changed.
_SLOTS_MADE: Dict[Tuple[Optional[str], str], Argument] = {}
_PARTIAL_NAMES = frozenset(q.rpartition(".")[2] for q in tfapi.PARTIAL_CALLS)
# Each call's tuple of argument keywords (`FileModel.handovers`), one object per content.
_KEYWORDS_MADE: Dict[Tuple[str, ...], Tuple[str, ...]] = {}
_CURRENT_STRATEGY_NAMES = frozenset(q.rpartition(".")[2] for q in tfapi.CURRENT_STRATEGY_CALLS)


def _argument_slot(keyword: Optional[str], star: str) -> Argument:
    slot = _SLOTS_MADE.get((keyword, star))
    if slot is None:
        slot = _SLOTS_MADE[(keyword, star)] = Argument(keyword, _UNREAD, _UNREAD.span, star)
    return slot


def _leaf(builder: ModelBuilder, node: ast.AST) -> None:
    return None


# Nothing to record in these, and nothing below them: the walk does not even call itself
# for them (a quarter of the nodes it meets).
_LEAVES = frozenset({ast.Name, ast.Constant})


# Comparisons whose result is a Python bool whatever the operands are.
_PYTHON_COMPARISONS = frozenset({ast.Is, ast.IsNot, ast.In, ast.NotIn})
# Calls of builtins whose result is a Python value.
_PYTHON_PREDICATES = frozenset({"isinstance", "issubclass", "hasattr", "callable", "len",
                                "getattr", "any", "all", "bool", "type", "id"})


def _plain_test(node: ast.AST, params: Tuple[str, ...]) -> bool:
    """A test that reads like a Python value, whatever its names hold: a parameter of the
    function (`training`: the model takes parameters for Python values in tests), a
    literal, `x is None`, `k in d`, `isinstance(...)`, and `not`/`and`/`or` of them."""
    kind = node.__class__
    if kind is _NAME:
        return node.id in params  # type: ignore[attr-defined]
    if kind is ast.Constant:
        return True
    if kind is ast.UnaryOp:
        return node.op.__class__ is ast.Not and _plain_test(node.operand, params)  # type: ignore[attr-defined]
    if kind is ast.BoolOp:
        return all(_plain_test(value, params) for value in node.values)  # type: ignore[attr-defined]
    if kind is ast.Compare:
        return all(op.__class__ in _PYTHON_COMPARISONS for op in node.ops)  # type: ignore[attr-defined]
    if kind is ast.Call:
        return (_name_of(node.func) or "") in _PYTHON_PREDICATES  # type: ignore[attr-defined]
    return False


def _word_positions(text: str, word: str) -> Iterator[int]:
    """Where `word` stands as a whole word in `text` (what `\\bword\\b` finds). A literal
    search and a look at either side: a pattern that starts with `\\b` has no literal
    prefix to scan for, and tries every position of the file. That holds for a word of
    `\\w` characters only: an identifier may hold others (a combining mark, `·`, `℘`),
    where `\\b` means something else and matches may overlap; the pattern finds those."""
    if not _WORD.fullmatch(word):
        yield from (match.start() for match in re.finditer(rf"\b{re.escape(word)}\b", text))
        return
    size, at = len(word), text.find(word)
    while at >= 0:
        end = at + size
        if not (at and _is_word_char(text[at - 1])) and \
                not (end < len(text) and _is_word_char(text[end])):
            yield at
        at = text.find(word, end)


def _is_word_char(char: str) -> bool:
    """`\\w` of a `str` pattern."""
    return char.isalnum() or char == "_"


def _before(a: ast.AST, b: ast.AST) -> bool:
    return (a.lineno, a.col_offset) < (b.lineno, b.col_offset)  # type: ignore[attr-defined]


def _skip_comment(text: str, i: int) -> int:
    """Past a `#` comment starting at `i`, to its line's end."""
    while i < len(text) and text[i] not in "\r\n":
        i += 1
    return i


def _grouped(text: str, after: int, start: int, end: int, first: bool) -> Tuple[int, int]:
    """The offsets of an argument with the parentheses that group it: `(x)` in `f((x))`.
    Between `after` (the callee's end, or the previous argument's) and the argument, the
    text holds only commas, parentheses, white space and comments: every `(` there
    groups the argument, but the call's own (before the first argument)."""
    opening: List[int] = []
    i = after
    while i < start:
        char = text[i]
        if char == "#":
            i = _skip_comment(text, i)
            continue
        if char == "(":
            opening.append(i)
        i += 1
    groups = len(opening) - first
    if groups <= 0:  # (a lone generator argument's span takes the call's parentheses)
        return start, end
    closed = 0
    while closed < groups:  # on past the closing parenthesis of each group
        char = text[end]
        if char == "#":
            end = _skip_comment(text, end)
            continue
        closed += char == ")"
        end += 1
    return opening[-groups], end


def _trailing_comma(text: str, end: int) -> Optional[int]:
    """The offset of a comma after the last argument (`f(x=1,)`), when only spaces,
    tabs, form feeds and backslash-continuations stand between them; else None."""
    i = end
    while i < len(text):
        char = text[i]
        if char in " \t\f":
            i += 1
        elif char == "\\" and text.startswith(("\r\n", "\r", "\n"), i + 1):
            i += 3 if text.startswith("\r\n", i + 1) else 2
        else:
            return i if char == "," else None
    return None


def _single_string_literal(text: str) -> bool:
    """True for one string literal; False for implicitly concatenated ones ("a" "b"),
    which Python joins into one constant (the model keeps such a value opaque)."""
    i = 0
    while i < len(text) and text[i] not in "'\"":
        i += 1
    quote = text[i:i + 3] if text[i:i + 3] in ("'''", '"""') else text[i:i + 1]
    body_end = len(text) - len(quote)
    if not quote or body_end < i + len(quote) or not text.endswith(quote):
        return False
    j = i + len(quote)
    while j < body_end:
        if text[j] == "\\":
            j += 2  # an escaped character (in a raw string too, it cannot end the string)
            continue
        if text.startswith(quote, j):
            return False
        j += 1
    return j == body_end


def _is_preamble(statement: ast.AST) -> bool:
    if isinstance(statement, ast.Expr):
        return isinstance(statement.value, ast.Constant) and isinstance(statement.value.value, str)
    return (isinstance(statement, ast.ImportFrom) and statement.module == "__future__"
            and not statement.level)


def _signature(args: ast.arguments) -> Tuple[str, ...]:
    """`FunctionInfo.params`: positional names, then `*args` (or a bare `*` before
    keyword-only ones), keyword-only names, `**kwargs`."""
    names = [a.arg for a in args.posonlyargs] + [a.arg for a in args.args]
    if args.vararg is not None:
        names.append("*" + args.vararg.arg)
    elif args.kwonlyargs:
        names.append("*")
    names += [a.arg for a in args.kwonlyargs]
    if args.kwarg is not None:
        names.append("**" + args.kwarg.arg)
    return tuple(names)


def _param_names(args: ast.arguments) -> List[str]:
    names = [a.arg for a in args.posonlyargs] + [a.arg for a in args.args]
    if args.vararg is not None:
        names.append(args.vararg.arg)
    names += [a.arg for a in args.kwonlyargs]
    if args.kwarg is not None:
        names.append(args.kwarg.arg)
    return names


# Functions, not bound methods: a builder holding its own bound methods would be in a
# reference cycle, kept (with its model and all its bookkeeping) until the cycle collector
# runs, which a run pauses.
_B = ModelBuilder
_HANDLERS: Dict[type, Callable[[ModelBuilder, Any], None]] = {
    ast.Module: _B._module, ast.Import: _B._import_node, ast.ImportFrom: _B._import_from_node,
    ast.ClassDef: _B._class, ast.FunctionDef: _B._function, ast.AsyncFunctionDef: _B._function,
    ast.Lambda: _B._lambda, ast.ListComp: _B._comprehension, ast.SetComp: _B._comprehension,
    ast.GeneratorExp: _B._comprehension, ast.DictComp: _B._comprehension,
    ast.Return: _B._return, ast.Assign: _B._assign, ast.AnnAssign: _B._ann_assign,
    ast.AugAssign: _B._aug_assign, ast.NamedExpr: _B._named_expr, ast.For: _B._for,
    ast.AsyncFor: _B._for, ast.With: _B._with, ast.AsyncWith: _B._with,
    ast.ExceptHandler: _B._except_handler, ast.Call: _B._call, ast.Attribute: _B._attribute,
    ast.Dict: _B._dict, ast.Name: _leaf, ast.Constant: _leaf,
    ast.If: _B._branch, ast.While: _B._branch, ast.IfExp: _B._branch,
}


def build_model(tree: ast.Module, path: str, module_name: str,
                rewrites: Sequence[Tuple[str, str]], text: str) -> FileModel:
    """The model of a module from Python's tree of `text`."""
    builder = ModelBuilder(path, module_name, NameResolver(rewrites), text)
    # The walk takes two or three frames a level; Python builds trees up to about the
    # recursion limit deep (a chain of 900 `+` operands, or of `elif`s): room for those.
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 3 * limit + 100))
    try:
        builder.walk(tree)
    finally:
        sys.setrecursionlimit(limit)
    return builder.finish()
