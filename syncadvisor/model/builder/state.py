"""The state of one walk over a module: where it is (scope, function, class), what it
has recorded and what waits for `finish.finish`; positions and text of nodes.

Spans are Python's positions, in characters (Python counts UTF-8 bytes); texts are
the source between them.
"""
from __future__ import annotations

import ast
from bisect import bisect_right
from sys import intern
from typing import Dict, List, Optional, Set, Tuple

from ...lines import line_starts, position
from .. import tfapi
from ..facts import (
    BOUND_LOCAL, Bound, CallEdge, ClassInfo, CreationCall, CreatorScope, FileModel,
    FunctionInfo, LayerCall, Read, ScopeEntry, Source, Span, Update, Value,
)
from ..invariance import Definitions
from ..names import MODULE, Binding, NameResolver, PendingRef, Scope
from .flow import Flow
from .syntax import NAME, NEWLINE, NON_ASCII, name_of


class Function:
    """Walk state for one function, or for the module (id None)."""

    __slots__ = ("id", "self_name", "klass", "scopes", "info", "stateless", "node", "walrus",
                 "next_creator", "own_calls", "tests", "guard", "narrowings")

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
        # Open branches of `isinstance(<text>, classes)` tests, outermost first: (the
        # subject as written, the classes, whether the test passed there).
        self.narrowings: List[Tuple[str, Tuple[Bound, ...], bool]] = []


class Walk:
    """What the walk of one module knows and has recorded so far; the functions of this
    package take it as their first argument."""

    def __init__(self, path: str, module: str, resolver: NameResolver, text: str):
        self.model = FileModel(path=path, module=module)
        self.resolver = resolver
        self.module_scope = Scope(MODULE, None)
        self.scope = self.module_scope
        self.seq = 0
        self.functions: List[Function] = [Function(None, None, None, None)]
        self.fn = self.functions[-1]
        self.classes: List[ClassInfo] = []
        self.qualname: List[str] = []
        self.lambda_ids: Dict[int, str] = {}
        self.import_after: Optional[Span] = None  # the preamble's last statement
        self.import_before: Optional[Span] = None  # the first other statement
        # Resolved in `finish`, once every binding is known.
        self.pending_values: List[Tuple[Value, PendingRef]] = []
        self.pending_bounds: List[Tuple[Bound, PendingRef]] = []
        self.pending_names: List[Tuple[PendingRef, Bound]] = []
        self.pending_creations: List[Tuple[CreationCall, Optional[PendingRef]]] = []
        self.pending_enum_refs: List[Tuple[PendingRef, str, Span, Span, str]] = []
        self.pending_bases: List[Tuple[ClassInfo, List[PendingRef]]] = []
        self.pending_annotations: List[Tuple[FunctionInfo, str, PendingRef]] = []
        self.keras_imports: set = set()
        # Local names that may stand for a variable-creating callable (`Variable as V`).
        self.creation_aliases: set = set()
        self.creation_of_node: Dict[int, int] = {}  # id(call node) -> creation index
        self.entry_lambdas: set = set()  # lambdas passed to strategy.run & co
        # Calls that may be higher-order (tfapi.HIGHER_ORDER_SLOTS_BY_NAME), kept until their
        # callee is resolved: [callee ref, callee text, method-style, edges to the callables
        # given by name, indices of the edges of the lambdas given, the function if it
        # forwards a parameter of its own]; and id(lambda) -> the record of its call.
        self.pending_higher_order: List[list] = []
        self.higher_order_lambdas: Dict[int, list] = {}
        # id(edge) -> the tests around it, for those edges (appended in `finish`)
        self.guarded_edges: Dict[int, Tuple[int, ...]] = {}
        self.definitions: Dict[int, Definitions] = {}  # id(def node) -> its locals
        self.tree: Optional[ast.AST] = None
        self.function_of: Dict[int, Function] = {}  # id(def or lambda node) -> its state
        # id(update) -> the parameters its value and its alternative value read, of
        # functions whose callers the file may show (`settle_parameters`)
        self.update_params: Dict[int, Tuple[tuple, tuple]] = {}
        self.parameter_memo: Dict[Tuple[int, str], Tuple[bool, List[Bound],
                                                         Optional[Source]]] = {}
        self.references: Dict[str, Tuple[List[Tuple[ast.Call, tuple]], bool,
                                         Dict[int, tuple]]] = {}
        # Calls whose meaning depends on what their callee resolves to.
        self.pending_updates: List[Tuple[Update, Optional[PendingRef], Optional[Tuple[
            Bound, Optional[Value], bool, Optional[Tuple[Bound, ...]], Optional[Source]]]]] = []
        self.pending_checkpoints: List[Tuple[PendingRef, List[Read]]] = []
        self.pending_saves: List[Tuple[PendingRef, Read, Optional[Read]]] = []
        self.pending_layer_calls: List[Tuple[LayerCall, PendingRef]] = []
        # Calls that may hand objects over to a project function (`FileModel.handovers`,
        # `Construction`): what `finish` needs to record them once their callee is
        # resolved, for those that may call the project's code -- (callee, the call, its
        # arguments as (keyword, value, star) or None for the call's own, the scope,
        # sequence number and function they are in, the `partial` name to check, the
        # index of the call's edge or -1 for a `Construction`).
        self.handovers: List[Tuple[Bound, ast.Call, Optional[List[Tuple[
            Optional[str], Optional[ast.AST], str]]], Scope, int, Function,
            Optional[PendingRef], int]] = []
        # (id(scope), name) -> the Bound of that name as an argument: one per scope, as
        # every use of a name in a scope may denote what each of its bindings there does.
        self.handed_names: Dict[Tuple[object, str], Optional[Bound]] = {}
        self.finishing = False  # (in `finish`: every binding of the module is known)
        self.package = module.partition(".")[0]
        # `tf.variable_creator_scope(...)` calls (with the `with` item of each that is one)
        # and the programs of the functions shaped like a creator, to resolve.
        self.pending_creator_scopes: List[Tuple[CreatorScope, Optional[ScopeEntry],
                                                PendingRef]] = []
        self.creator_items: set = set()  # id(call node) of the `with` items among them
        # id of a function shaped like a creator that calls its first parameter -> its
        # node and whether it is a method: its program is read in `finish`
        self.creator_candidates: Dict[str, Tuple[ast.AST, bool]] = {}
        self.text = text
        self.starts = line_starts(text)
        # line -> its UTF-8, for the lines with a non-ASCII character (columns differ there)
        self.wide: Dict[int, bytes] = {}
        if not text.isascii():
            for run in NON_ASCII.finditer(text):
                line = bisect_right(self.starts, run.start())
                if line not in self.wide:
                    end = self.starts[line] if line < len(self.starts) else len(text)
                    self.wide[line] = text[self.starts[line - 1]:end].encode(
                        "utf-8", "surrogatepass")
        # id(binding) -> the literal it binds (`STRATEGY = "one"`: builder/constants.py),
        # and the names a `global`/`nonlocal` statement lets other code rebind.
        self.literals: Dict[int, object] = {}
        # The source's lines, once a `with X.scope():` asks (builder/blocks.py).
        self.lines: Optional[List[str]] = None
        self.rebindable: Set[str] = set()
        first = NEWLINE.search(text)
        self.model.newline = first.group() if first else "\n"

    def column(self, line: int, byte_column: int) -> int:
        """Python counts columns in UTF-8 bytes; spans count characters."""
        encoded = self.wide.get(line)
        if encoded is None:
            return byte_column
        return len(encoded[:byte_column].decode("utf-8", "ignore"))

    def span(self, node: ast.AST) -> Span:
        line, end_line = node.lineno, node.end_lineno  # type: ignore[attr-defined]
        wide = self.wide
        if not wide or (line not in wide and end_line not in wide):
            return Span(line, node.col_offset, end_line, node.end_col_offset)  # type: ignore[attr-defined]
        return Span(line, self.column(line, node.col_offset),  # type: ignore[attr-defined]
                    end_line, self.column(end_line, node.end_col_offset))  # type: ignore[attr-defined]

    def offsets(self, node: ast.AST) -> Tuple[int, int]:
        span = self.span(node)
        starts = self.starts
        return starts[span.line - 1] + span.column, starts[span.end_line - 1] + span.end_column

    def code(self, node: ast.AST) -> str:
        start, end = self.offsets(node)
        # Interned: the same names recur thousands of times in a file, and a pickle
        # writes an object it has seen once as a reference (smaller, faster models).
        return intern(self.text[start:end])

    def text_span(self, start: int, end: int) -> Span:
        line, column = position(self.starts, start)
        end_line, end_column = position(self.starts, end)
        return Span(line, column, end_line, end_column)

    def name_span(self, node: ast.AST, keyword: str) -> Span:
        """The span of the name in `class Name` / `def name`."""
        start, _ = self.offsets(node)
        text = self.text
        after = text.find(keyword, start) + len(keyword)
        at = text.find(node.name, after)  # type: ignore[attr-defined]
        line, column = position(self.starts, at)
        return Span(line, column, line, column + len(node.name))  # type: ignore[attr-defined]

    def is_self(self, node: ast.AST) -> bool:
        fn = self.fn  # (`self_name` is None outside methods: no name equals it)
        return node.__class__ is NAME and node.id == fn.self_name and fn.klass is not None

    def is_super(self, node: ast.AST) -> bool:
        """`super()` in a method: its methods are the class's own, as `self`'s are."""
        return (isinstance(node, ast.Call) and self.fn.klass is not None
                and name_of(node.func) == "super" and not node.args and not node.keywords)

    def next_seq(self) -> int:
        self.seq += 1
        return self.seq

    def ref(self, parts: Tuple[str, ...]) -> PendingRef:
        return PendingRef(self.scope, self.next_seq(), parts)

    def push_function(self, fn: Function) -> None:
        self.functions.append(fn)
        self.fn = fn  # the innermost: read at every call, name and attribute

    def pop_function(self) -> None:
        self.functions.pop()
        self.fn = self.functions[-1]

    def self_head(self, parts: Tuple[str, ...]) -> bool:
        fn = self.fn
        return fn.self_name is not None and fn.klass is not None and parts[0] == fn.self_name

    def bind(self, name: str, bound: Bound, alias: Optional[Tuple[str, ...]] = None
             ) -> Binding:
        binding = Binding(self.next_seq(), bound, alias, self.scope if alias else None)
        self.scope.bind(name, binding)
        self.flow().bound(name, binding)
        target = alias[-1] if alias else (bound.qname or "").rpartition(".")[2]
        if target in tfapi.CREATION_CALLEE_NAMES and target != name:
            self.creation_aliases.add(name)
        return binding

    def flow(self) -> Flow:
        """What reaches the walk's position in the code of the scope it is in."""
        scope = self.scope
        found = scope.flow
        if found is None:
            found = scope.flow = Flow()
        return found

    def bind_local(self, name: str) -> None:
        self.bind(name, Bound(BOUND_LOCAL, text=name))

    def lambda_id(self, node: object) -> str:
        lambda_id = self.lambda_ids.get(id(node))
        if lambda_id is None:
            owner = self.fn.id or self.model.module
            lambda_id = self.lambda_ids[id(node)] = f"{owner}.<lambda{len(self.lambda_ids)}>"
        return lambda_id

    def qualified(self, name: str) -> str:
        return ".".join([self.model.module] + self.qualname + [name])

    def pop_scope(self) -> None:
        self.scope = self.scope.parent or self.module_scope

    def add_call(self, edge: CallEdge, fn: Function) -> int:
        """Append a call of `fn`'s own code (`edge.caller` is `fn.id`), guarded by the
        tests open in `fn`; its index."""
        calls = self.model.calls
        i = len(calls)
        if fn.guard:
            self.model.guarded_calls[i] = fn.guard
        calls.append(edge)
        return i
