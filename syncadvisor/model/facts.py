"""The per-file semantic model: plain data, no tree nodes.

A `FileModel` is what one pass over a file's `ast` tree produces (builder.py). It
holds only records of strings, ints and tuples, so it can be cached and sent
between processes. Positions: 1-based lines, 0-based columns, in characters.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from ..records import field, fields, record

# A line number past 256 is a new int object (28 bytes) wherever it is made: in a
# parse's nodes, in each unpickled span. A run's spans hold hundreds of thousands of
# them, of a few thousand values: each span takes its lines from this table instead,
# one object per value (grown for a longer file). Lines are never negative (1-based,
# from Python's tree or from another span), so `_LINES[line] == line` always.
_LINES: List[int] = list(range(8192))


def _grow_lines(line: int) -> None:
    _LINES.extend(range(len(_LINES), 2 * line + 1))


class Span:
    """A node's position. A value: equal and hashed by its fields, never changed once
    made (the libcst builder fills in placeholders once, before anyone reads them).
    Not a frozen dataclass: a model holds hundreds of thousands, and a frozen
    dataclass is three times slower to make (`object.__setattr__` per field)."""

    __slots__ = ("line", "column", "end_line", "end_column")

    def __init__(self, line: int, column: int, end_line: int, end_column: int):
        try:
            self.line = _LINES[line]
            self.end_line = _LINES[end_line]
        except IndexError:
            _grow_lines(max(line, end_line))
            self.line, self.end_line = _LINES[line], _LINES[end_line]
        self.column = column
        self.end_column = end_column

    def _key(self) -> Tuple[int, int, int, int]:
        return self.line, self.column, self.end_line, self.end_column

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not Span:
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash((self.line, self.column, self.end_line, self.end_column))

    def __repr__(self) -> str:
        return (f"Span(line={self.line}, column={self.column}, end_line={self.end_line}, "
                f"end_column={self.end_column})")

    def __reduce__(self):
        return Span, (self.line, self.column, self.end_line, self.end_column)


# Value kinds
QNAME = "qname"  # a resolved dotted name, e.g. tensorflow.VariableSynchronization.ON_READ
STR = "str"
INT = "int"
FLOAT = "float"
BOOL = "bool"
NONE = "none"
CALL = "call"  # a call; `qname` is its resolved callee, if any
OTHER = "other"


@record(slots=True)
class Value:
    """An expression as far as the rules care: a literal, a name, a call, or opaque."""

    kind: str
    text: str
    span: Span
    qname: Optional[str] = None
    literal: object = None
    args: Tuple["Value", ...] = ()
    kwargs: Tuple[Tuple[str, "Value"], ...] = ()
    # For a QNAME that ends in an attribute: the span and text of everything
    # before the last dot (how the user spelled the enum class).
    prefix_text: Optional[str] = None

    def kwarg(self, name: str) -> Optional["Value"]:
        for key, value in self.kwargs:
            if key == name:
                return value
        return None


@record(slots=True)
class Argument:
    keyword: Optional[str]
    value: Value
    span: Span  # the whole argument, keyword and '=' included, comma excluded
    star: str = ""  # "*" or "**"
    # The `,` after the last argument (`f(x=1,)`), on its line, so that removing a lone
    # argument can take its comma with it.
    trailing_comma: Optional[Span] = None


# Bound kinds: what a name (or `self.attr`) is bound to.
BOUND_QNAME = "qname"  # a qualified name, `qname`
# The result of calling `qname` (`options`: its first argument, for wrappers such as
# tf.function).
BOUND_CALL = "call"
BOUND_METHOD = "method"  # the result of `self.<attr>()` in class `qname`
BOUND_SELF_ATTR = "self-attr"  # `self.<attr>` of class `qname`
BOUND_NAMES = "names"  # whatever another name is bound to (`options`)
BOUND_CONTAINER = "container"  # a list or tuple of `options`; attr EVERY_ITEM: a comprehension
EVERY_ITEM = "*"  # a comprehension's one option is every item of it
BOUND_ELEMENT = "element"  # an element of `options[0]` (`x[i]`, a loop variable)
BOUND_ATTR = "attr"  # `<options[0]>.<attr>`
BOUND_ITEM = "item"  # item number `attr` of what `options[0]` is (`a, b = f()`)
# Parameter `attr` of function `qname`: whatever the calls of that function pass for it
# (followed through `Construction` records).
BOUND_PARAM = "param"
BOUND_LOCAL = "local"  # anything else


@record(slots=True)
class Bound:
    """What a name (or `self.attr`) is bound to."""

    kind: str  # one of the BOUND_* kinds
    qname: Optional[str] = None
    text: str = ""  # the source text, for messages
    span: Optional[Span] = None
    attr: Optional[str] = None
    options: Tuple["Bound", ...] = ()
    creation: Optional[int] = None  # index into FileModel.creations when a call creates a variable


@record(slots=True)
class CreationCall:
    """A call that may create a variable, as written."""

    callee: Optional[str]  # resolved qualified name of a function-style call
    method: Optional[str]  # "add_weight"/"add_variable" for method-style calls
    on_self: bool  # method called on `self` inside a class
    klass: Optional[str]  # enclosing class id
    function: Optional[str]  # enclosing function id (None: module level)
    args: Tuple[Argument, ...]
    span: Span
    func_span: Span
    func_text: str
    scopes: Tuple[int, ...]  # lexical strategy scopes inside `function`, innermost last
    target: Optional[str] = None  # "name" or "self.attr" the result is bound to
    # What a method-style call not on `self` is called on (`dense` in `dense.add_weight()`):
    # the linking asks which classes it may be an instance of.
    receiver: Optional[Bound] = None


@record(slots=True)
class EnumRef:
    """`<enum class>.<MEMBER>` anywhere in the file."""

    enum_class: str  # canonical qualified name of the class
    member: str
    span: Span  # the whole attribute
    member_span: Span
    class_text: str  # how the class was spelled


@record(frozen=True)
class Preceding:
    """A statement before a `with X.scope():` in its block, as far as moving a statement
    into the block needs to know (TFS108's fix)."""

    line: int
    end_line: int
    binds: Tuple[str, ...]  # the names it may bind
    reads: Tuple[str, ...]  # the names it may read
    # `name = <call>` alone on its lines: the name, where the call starts (line, column),
    # and the lines as written; else None, (0, 0), "".
    target: Optional[str] = None
    value: Tuple[int, int] = (0, 0)
    text: str = ""


@record(slots=True)
class ScopeEntry:
    """One `with <receiver>.scope():` item."""

    receivers: Tuple[Bound, ...]  # every binding the receiver may have
    text: str  # the receiver as written
    span: Span  # the `X.scope()` call
    function: Optional[str]
    # A `with tf.variable_creator_scope(c):` item instead: its index in
    # `FileModel.creator_scopes` (-2 while the callee is not known to be one: then it is
    # no scope of anything the model follows).
    creator: int = -1
    # The `isinstance(<receiver>, classes)` tests the code under this entry passed
    # (True) or failed (False), outermost first: inside `if isinstance(strategy,
    # tf.distribute.TPUStrategy):` the receiver is one of those classes. A test inside the
    # `with` block is a copy of the entry with the test added, opened where the branch is.
    narrowed: Tuple[Tuple[Tuple[Bound, ...], bool], ...] = ()
    # The statements before the `with` in its block, nearest last; the line of its body's
    # first statement, on a line of its own, and that line's indentation as written (else
    # None); the names its items read.
    preceding: Tuple[Preceding, ...] = ()
    body: Optional[Tuple[int, str]] = None
    item_reads: Tuple[str, ...] = ()
    # The statements of the `with` block, outermost only, in order: where a fix may add a
    # statement to the block (a statement's span starts at its first token).
    statements: Tuple[Span, ...] = ()


@record(slots=True)
class CreatorScope:
    """A `tf.variable_creator_scope(creator)` call, in a `with` or not (`stack.enter_context
    (...)`): variables created while it is entered go through `creator`."""

    creator: Bound
    text: str  # the creator as written
    span: Span  # the call
    function: Optional[str]


# Update kinds of `Update.method`
ASSIGN_METHODS = ("assign", "assign_add", "assign_sub")

# Why a value can differ between replicas (`Source.kind`)
SOURCE_INPUT = "input"  # a parameter: what each replica is handed (its batch, its gradients)
SOURCE_RANDOM = "random"  # a random op
SOURCE_REPLICA_ID = "replica-id"  # the replica's id
SOURCE_STATE = "state"  # state whose copies can differ between replicas (found by linking)


@record(slots=True)
class Source:
    """The first thing found that makes a value differ between replicas."""

    kind: str  # one of the SOURCE_* kinds
    name: str  # the parameter, the random op or the state, as written
    span: Span  # where the value reads it


@record(slots=True)
class Update:
    """`v.assign_add(x)`, `tf.compat.v1.assign(v, x)`, `v.scatter_add(...)`."""

    receiver: Bound
    method: str
    value: Optional[Value]
    span: Span
    function: Optional[str]
    scopes: Tuple[int, ...]
    # `tf.compat.v1.scatter_add(v, ...)` (state_ops) works on the replica's own copy
    # through `v.handle`; only the methods go through the distributed variable.
    function_style: bool = False
    # `assign` of the variable plus other terms (`v.assign(v + x)`): a running sum.
    accumulates: bool = False
    # The outside state the value reads (`self.x`, module names), if the value is the same
    # on every replica as long as that state is; None: it can differ (invariance.py).
    depends: Optional[Tuple[Bound, ...]] = None
    # Where `depends` is None: what makes the value differ, if the walk found it.
    source: Optional[Source] = None
    # Indices into `FileModel.branch_tests` of the tests of the `if`/`while` statements
    # around the update in its function, outermost first.
    tests: Tuple[int, ...] = ()


# `BranchTest.keyword`: the statement a test belongs to.
TEST_IF = "if"  # an `if` statement, or a conditional expression
TEST_WHILE = "while"


@record(slots=True)
class BranchTest:
    """The test of an `if` or `while` (or `x if test else y`) that may be a tensor, around
    an update or a call: where AutoGraph converts the function (a `tf.function`, Keras
    `fit`), a tensor test makes the statement a `tf.cond` or `tf.while_loop`. Tests that
    read like Python values (a name, a literal, `x is None`, `isinstance(...)`) are not
    recorded; linking decides for the rest from what `reads` denote."""

    keyword: str  # TEST_IF or TEST_WHILE
    span: Span  # the test
    text: str  # the test as written, for messages
    # The operands whose values the test takes (through `not`, `and`/`or`, comparisons
    # other than `is`/`in`, arithmetic): names, attributes and calls.
    reads: Tuple[Bound, ...]


# Read kinds besides the read methods
READ_CHECKPOINT = "checkpoint"  # tracked by a checkpoint
READ_SAVE = "save"  # saved (SavedModel, Keras `save`/`save_weights`)
READ_WRITE = "write"  # `x.write(...)`: a save when `x` is a `tf.train.Checkpoint`


@record(slots=True)
class Read:
    """A read that reduces an ON_READ variable, or a save of it: `v.numpy()`,
    `tf.train.Checkpoint(v=v)`, `tf.saved_model.save(obj, ...)`, `obj.save(...)`."""

    receiver: Bound
    kind: str  # the read method (`numpy`, `read_value`, `value`), READ_CHECKPOINT or READ_SAVE
    span: Span
    function: Optional[str]
    scopes: Tuple[int, ...]


# Replica entry kinds
ENTRY_REPLICA = "replica"  # `fn` runs in replica context
ENTRY_CROSS = "cross"  # `fn` runs in cross-replica context


@record(slots=True)
class ReplicaEntry:
    """`strategy.run(fn)` and friends: `fn` runs in replica context; for `merge_call`
    and `extended.update` it runs in cross-replica context."""

    kind: str  # ENTRY_REPLICA or ENTRY_CROSS
    strategy: Optional[Bound]
    fn: Bound
    span: Span
    function: Optional[str]
    scopes: Tuple[int, ...]


@record(slots=True)
class ObjectUse:
    """A method call on an object that may be a Keras model or metric:
    `model.compile(...)`, `model.fit(...)`, `metric.update_state(...)`."""

    receiver: Bound
    method: str
    span: Span
    function: Optional[str]
    scopes: Tuple[int, ...]
    # The objects handed over (`compile(optimizer=opt, metrics=[m])`: opt, m), with the
    # argument each came in; for an optimizer's `apply_gradients`/`minimize`, the objects
    # whose variables it is handed (`zip(grads, model.trainable_variables)`: model).
    passed: Tuple[Tuple[str, Bound], ...] = ()


@record(slots=True)
class Construction:
    """A call of what may be a class (`Trainer(model, optimizer)`, `SGD(0.1, momentum=m)`),
    with its arguments as written: what each hands over, for following an object into
    the `__init__` parameter it lands in, and the literal options of a Keras object.
    Also a call whose callee is not the call's own: `functools.partial(step,
    accumulator=acc)`, recorded as a call of `step` (callee BOUND_CALL, attr `__call__`,
    options the function), and `strategy.run(step, args=(x, acc))`, as `step(x, acc)`.
    (Other calls that hand objects over are `FileModel.handovers`.)"""

    callee: Bound  # BOUND_CALL; `qname` the resolved callee
    args: Tuple[Argument, ...]
    # Per argument: what it may denote when it is a name, an attribute, a construction
    # or a container of them, else None.
    passed: Tuple[Optional[Bound], ...]
    span: Span
    function: Optional[str]
    scopes: Tuple[int, ...]


@record(slots=True)
class LayerCall:
    """A call that may construct a Keras layer we care about (BatchNormalization)."""

    callee: Optional[str]
    args: Tuple[Argument, ...]
    span: Span
    function: Optional[str]
    scopes: Tuple[int, ...]


@record(slots=True)
class CallEdge:
    caller: Optional[str]  # function id; None for module level
    callee: Bound
    scopes: Tuple[int, ...]
    span: Span


@record(slots=True)
class FunctionInfo:
    id: str
    name: str
    klass: Optional[str]
    span: Span
    returns: List[Bound] = field(default_factory=list)
    # Parameter names in order: positional ones (`self` included), `*args` (or a bare
    # `*` before keyword-only ones), keyword-only ones, `**kwargs`, stars as written.
    params: Tuple[str, ...] = ()
    # A `@staticmethod`: called on an instance, its first parameter takes the first argument.
    static: bool = False
    # Decorated with `tf.function` (tfapi.TRACING_DECORATORS), not compiled with XLA:
    # AutoGraph converts it, and TensorFlow runs it as a graph it traces first.
    traced: bool = False
    # Parameter -> the qualified name its annotation resolves to (`layer: keras.layers.Layer`):
    # the class of what callers pass, where no call is seen (a library's entry point).
    annotations: Dict[str, str] = field(default_factory=dict)


@record(slots=True)
class ClassInfo:
    id: str
    name: str
    bases: Tuple[str, ...]  # resolved qualified names (unresolvable ones left out)
    span: Span
    attrs: Dict[str, List[Bound]] = field(default_factory=dict)  # self.<attr> = ...
    methods: Tuple[str, ...] = ()


@record(slots=True)
class FileModel:
    path: str
    module: str
    creations: List[CreationCall] = field(default_factory=list)
    enum_refs: List[EnumRef] = field(default_factory=list)
    scopes: List[ScopeEntry] = field(default_factory=list)
    calls: List[CallEdge] = field(default_factory=list)
    functions: Dict[str, FunctionInfo] = field(default_factory=dict)
    classes: Dict[str, ClassInfo] = field(default_factory=dict)
    globals: Dict[str, List[Bound]] = field(default_factory=dict)  # module-level bindings
    updates: List[Update] = field(default_factory=list)
    reads: List[Read] = field(default_factory=list)
    entries: List[ReplicaEntry] = field(default_factory=list)
    uses: List[ObjectUse] = field(default_factory=list)
    layer_calls: List[LayerCall] = field(default_factory=list)
    constructions: List[Construction] = field(default_factory=list)
    # The other calls that may run a project function or method and hand it objects
    # (`step(x, acc)`, `self.update(acc)`, `trainer.fit(model)`): (index of the call in
    # `calls`, each argument's keyword -- "" positional, "*" and "**" starred -- and what
    # each may denote, as `Construction.passed`). Plain tuples: a run holds tens of
    # thousands.
    handovers: List[Tuple[int, Tuple[str, ...], Tuple[Optional[Bound], ...]]] = \
        field(default_factory=list)
    creator_scopes: List[CreatorScope] = field(default_factory=list)
    # Function id -> what it does to the variables it creates when used as a variable
    # creator (creators.py), for the functions shaped like one (`(next_creator, **kwargs)`,
    # calling `next_creator`); None: something the model cannot read.
    creator_effects: Dict[str, Optional[tuple]] = field(default_factory=dict)
    # (function id, attr) -> how often `self.<attr>` is loaded there
    self_loads: Dict[Tuple[Optional[str], str], int] = field(default_factory=dict)
    keras_families: Tuple[str, ...] = ()  # Keras families this file imports
    # Canonical modules of `from M import *`, in order: a name the module does not bind
    # itself may come from any of them (a re-exporting shim: `from tf_keras import *`).
    star_imports: Tuple[str, ...] = ()
    # Module-level name -> the canonical qualified name its first binding imports or
    # aliases (`keras` -> `tf_keras` for `import tf_keras as keras`): what another module
    # reaches through this one.
    exports: Dict[str, str] = field(default_factory=dict)
    # Index into `calls` -> (the higher-order callee as written, e.g. `tf.cond`; the
    # project function it resolves to, or None; its qualified name, where it resolves):
    # an edge to a callable handed to a higher-order call (tfapi.HIGHER_ORDER_CALLS),
    # which runs it in the caller's context. One whose callee is a project function holds
    # only if that function is in some file's `forwarders`.
    higher_order: Dict[int, Tuple[str, Optional[str], Optional[str]]] = field(
        default_factory=dict)
    # Functions that hand a parameter of theirs to a higher-order call as its callable (a
    # project's own `smart_cond` wrapping TensorFlow's).
    forwarders: Tuple[str, ...] = ()
    # The tests around updates and calls (`Update.tests`, `guarded_calls`), and, by index
    # into `calls`, the tests around a call in its caller, outermost first: only calls
    # under a recorded test have an entry.
    branch_tests: List[BranchTest] = field(default_factory=list)
    guarded_calls: Dict[int, Tuple[int, ...]] = field(default_factory=dict)
    import_line: int = 1  # where a fix may insert an import (after docstring, __future__)
    newline: str = "\n"  # the file's first line ending: what an inserted line ends with
    # Where the file's project sets TF_USE_LEGACY_KERAS ("pkg/backend.py:37"), which made
    # the run model it with `tf.keras` as Keras 2 (engine/legacy.py); None: it does not.
    legacy_keras: Optional[str] = None


# A run's call edges are half its models' objects (each a CallEdge, a Bound and a Span).
# A model pickles them as one flat tuple of their fields, written by the pickler's C
# code, not as an object per edge, each with its own `__reduce__` call. Invariants this
# relies on: a callee Bound belongs to its edge alone; a Span is a value.
_EDGE_FIELDS = 13
_new = object.__new__


def _flat_calls(calls: List[CallEdge]) -> tuple:
    flat: list = []
    add = flat.extend
    for edge in calls:
        callee, span = edge.callee, edge.span
        add((edge.caller, edge.scopes, span.line, span.column, span.end_line, span.end_column,
             callee.kind, callee.qname, callee.text, callee.span, callee.attr, callee.options,
             callee.creation))
    return tuple(flat)


def _calls_from_flat(flat: tuple) -> List[CallEdge]:
    calls: List[CallEdge] = []
    add = calls.append
    fields_ = iter(flat)
    for (caller, scopes, line, column, end_line, end_column, kind, qname, text, span, attr,
         options, creation) in zip(*[fields_] * _EDGE_FIELDS):
        callee = _new(Bound)
        callee.kind, callee.qname, callee.text, callee.span, callee.attr, callee.options, \
            callee.creation = kind, qname, text, span, attr, options, creation
        edge = _new(CallEdge)
        edge.caller, edge.callee, edge.scopes, edge.span = \
            caller, callee, scopes, Span(line, column, end_line, end_column)
        add(edge)
    return calls


def _model_reduce(self):
    reducer, args, state = _plain_model_reduce(self)
    state = list(state)
    state[_CALLS] = _flat_calls(self.calls)
    return reducer, args, tuple(state)


def _model_setstate(self, state) -> None:
    _plain_model_setstate(self, state)
    self.calls = _calls_from_flat(self.calls)


_CALLS = fields(FileModel).index("calls")
assert fields(CallEdge) == ("caller", "callee", "scopes", "span")
assert fields(Bound) == ("kind", "qname", "text", "span", "attr", "options", "creation")
_plain_model_reduce = FileModel.__reduce__
_plain_model_setstate = FileModel.__setstate__  # type: ignore[attr-defined]
FileModel.__reduce__ = _model_reduce  # type: ignore[method-assign]
FileModel.__setstate__ = _model_setstate  # type: ignore[attr-defined]
