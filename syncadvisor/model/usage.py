"""How variables are used, and in which context: replica or cross-replica.

Replica context is inferred, as TensorFlow defines it: functions given to
`strategy.run` / `experimental_run_v2` / `extended.call_for_each_replica` (by
name, lambda, bound method, through `tf.function`), the Keras methods that run
once per replica under `fit` (`train_step`, `call`, `update_state`, ...), and
whatever they call. Module-level code and what it calls is cross-replica, and so
are functions given to `merge_call` and `extended.update`.

Each update and read is tied to the variables its receiver may denote: a name,
`self.attr`, an element of a list built in a comprehension, a loop variable, a
function's return value -- across the modules of the run.
"""
from __future__ import annotations

from collections import defaultdict, deque
from typing import Dict, FrozenSet, Iterable, List, Optional, Set, Tuple

from ..records import field, record
from . import tfapi
from .contexts import Context, ContextAnalysis, ProjectIndex, Strategy
from .facts import (BOOL, BOUND_ATTR, BOUND_CALL, BOUND_CONTAINER, BOUND_ELEMENT, BOUND_ITEM,
                    BOUND_METHOD, BOUND_NAMES, BOUND_PARAM, BOUND_QNAME, BOUND_SELF_ATTR, CALL,
                    ENTRY_CROSS, EVERY_ITEM, FLOAT, INT, QNAME, READ_CHECKPOINT, READ_SAVE,
                    READ_WRITE, Bound, BranchTest, Construction, CreationCall, FileModel, Read,
                    Source, Span, Value)

REPLICA = "replica"
CROSS = "cross-replica"
UNKNOWN = "unknown"

# What a value written in replica context is.
PYTHON_NUMBER = "python-number"  # the same non-tensor on every replica
CONSTANT = "constant"  # the same tensor on every replica
PER_REPLICA = "per-replica"  # anything else: it can differ between replicas
# Computed from state that is the same on every replica (settled by linking).
REPLICA_INVARIANT = "replica-invariant"

_MAX_DEPTH = 10

VarKey = Tuple[str, int]  # (path, index into FileModel.creations)


@record(frozen=True)
class Where:
    """A replica-ness context, with how the code got there (for messages)."""

    kind: str  # REPLICA, CROSS or UNKNOWN
    via: str = ""  # e.g. "`strategy.run`"; `at` says where
    strategy: Optional[Strategy] = None  # for strategy.run: which strategy
    at: Optional[Tuple[str, Span]] = None  # the call that entered this context


@record(frozen=True)
class Hop:
    """One call on the way from where a context was entered to an update (messages)."""

    caller: str  # the calling function's name
    path: str
    span: Span  # the call
    callee: str  # the called function's name ("<lambda>" for a lambda)
    through: Optional[str] = None  # the higher-order callee that runs it (`tf.cond`)
    through_qname: Optional[str] = None  # ... its qualified name, where it resolves
    # The `if`/`while` tests around the call in the caller that may be tensors
    # (`UsageAnalysis.tensor_test` decides), outermost first.
    tests: Tuple[BranchTest, ...] = ()


@record
class UpdateInfo:
    """An update of a variable, classified."""

    path: str
    method: str
    value: Optional[Value]
    value_kind: str
    span: Span
    function: Optional[str]
    where: FrozenSet[Where]
    # Strategy contexts at the update (the `with X.scope()` around it, or its callers').
    contexts: FrozenSet[Context] = frozenset()
    function_style: bool = False  # tf.compat.v1.assign(v, ...) rather than v.assign(...)
    accumulates: bool = False  # `assign` of the variable plus other terms: a running sum
    # The state a PER_REPLICA value reads if it is the same everywhere while that state
    # is (facts.Update.depends); linking settles it to REPLICA_INVARIANT or keeps it.
    depends: Optional[Tuple[Bound, ...]] = None
    # What makes a PER_REPLICA value differ, where known (facts.Update.source, or the
    # state that linking found out of sync).
    source: Optional[Source] = None
    # The `if`/`while` tests around the update in its function that may be tensors
    # (`UsageAnalysis.tensor_test` decides), outermost first.
    tests: Tuple[BranchTest, ...] = ()

    @property
    def replica_context(self) -> Optional[bool]:
        kinds = {w.kind for w in self.where}
        if REPLICA in kinds:
            return True
        if kinds == {CROSS}:
            return False
        return None

    def in_replica(self) -> List[Where]:
        return sorted((w for w in self.where if w.kind == REPLICA), key=_where_order)

    def in_cross_replica(self) -> List[Where]:
        return sorted((w for w in self.where if w.kind == CROSS), key=_where_order)


def _where_order(where: Where) -> Tuple[str, int, int, str]:
    """Where's order in messages: by the call that entered the context (the first one
    names a function run from several), not by the set's order, which varies by run."""
    if where.at is None:
        return "", 0, 0, where.via
    path, span = where.at
    return path, span.line, span.column, where.via


@record
class ReadInfo:
    path: str
    kind: str
    span: Span
    where: FrozenSet[Where]

    @property
    def cross_replica(self) -> bool:
        """A read that combines the copies: a save, or a read in cross-replica context.
        Building a `tf.train.Checkpoint` reads nothing; it only makes the variable tracked
        (READ_CHECKPOINT), and its `save`/`write` is the save."""
        return self.kind == READ_SAVE or (self.kind != READ_CHECKPOINT and
                                          any(w.kind == CROSS for w in self.where))


def value_kind(value: Optional[Value]) -> str:
    if value is None:
        return PER_REPLICA
    if value.kind in (INT, FLOAT, BOOL):
        return PYTHON_NUMBER
    if value.kind == CALL and value.qname in tfapi.CONSTANT_FACTORIES and all(
            a.kind in (INT, FLOAT, BOOL, QNAME) for a in value.args):
        return CONSTANT
    if value.kind == QNAME and value.qname and "." in value.qname:
        return CONSTANT  # a module-level constant such as np.pi
    return PER_REPLICA


def _tensor_valued(qname: Optional[str]) -> bool:
    """A call of tfapi.TENSOR_VALUED_CALLS: its result is a tensor."""
    if not qname or qname in tfapi.PYTHON_VALUED_CALLS:
        return False
    if qname in tfapi.TENSOR_VALUED_CALLS:
        return True
    head, dot, _ = qname.rpartition(".")
    while dot:
        if head + "." in tfapi.TENSOR_VALUED_CALLS:
            return True
        head, dot, _ = head.rpartition(".")
    return False


def is_statistic(value: Optional[Value]) -> bool:
    """`tf.maximum(m, x)`, `tf.reduce_mean(x)`, `keras.ops.max(x)`: a statistic whose
    per-replica values do not add up to the whole's."""
    return statistic_name(value) in tfapi.STATISTIC_CALL_NAMES


def statistic_name(value: Optional[Value]) -> Optional[str]:
    """The last name of the function a value is the call of (`reduce_max`), if any."""
    if value is None or value.kind != CALL:
        return None
    return (value.qname or value.text.partition("(")[0]).rpartition(".")[2]


# What tracks a variable (`VariableSite.holder`) where no class does: it is bound to a
# module-level name, reachable from anywhere.
MODULE_GLOBAL = "<module>"
# ... or it leaves the function that makes it, for places the run may not see.
ESCAPES = "<escapes>"


# Obj kinds: what a reference may denote.
OBJ_VAR = "var"  # a variable: `key` is its VarKey
OBJ_INSTANCE = "instance"  # an instance of a class: `key` is the class's qualified name
OBJ_FUNCTION = "function"  # a function: `key` is its id


@record(frozen=True)
class Obj:
    kind: str  # OBJ_VAR, OBJ_INSTANCE or OBJ_FUNCTION
    key: object  # VarKey, class qualified name, or function id
    # For an instance: the call that constructed it, and its file.
    origin: Optional[Tuple[Bound, str]] = field(default=None, compare=False, hash=False)


class UsageAnalysis:
    def __init__(self, index: ProjectIndex, contexts: ContextAnalysis, keras_kind):
        self.index = index
        self.contexts = contexts
        self._keras_kind = keras_kind  # class id -> (family, kind) or (None, None)
        self._memo: Dict[Tuple[int, str], FrozenSet[Obj]] = {}
        self._open: Set[Tuple[int, str]] = set()  # references `objects` is working out
        self.where: Dict[str, Set[Where]] = defaultdict(set)
        # Every name a project class's method has: `obj.name()` can run a project method
        # only if `name` is one (most method calls are on library objects).
        self._method_names = frozenset(
            name for owner, _, name in (fid.rpartition(".") for fid in index.functions)
            if owner in index.classes)
        # Where -> the functions it enters (seeds of the propagation); path -> {index of a
        # call in the file's `calls`: the project functions it runs}; what `call_path`
        # searches, with its forward edges and searches, made when first asked for.
        self._entered: Dict[Where, List[str]] = defaultdict(list)
        self._call_targets: Dict[str, Dict[int, List[str]]] = {}
        self._forward: Optional[Dict[str, List[Tuple[str, str, int]]]] = None
        self._parents: Dict[Where, Dict[str, Tuple[str, str, int]]] = {}
        # path -> [(i, the project methods `obj.method()` call `i` may run)], for calls
        # the context analysis's own table leaves out
        self.instance_calls: Dict[str, List[Tuple[int, List[str]]]] = {}
        # path -> {span: (caller, scopes)} of the file's calls, made when first asked for
        self._edges_by_span: Dict[str, Dict[Span, Tuple[Optional[str], Tuple[int, ...]]]] = {}
        index.set_instances(self._instances_whole)
        self._propagate()

    # --- what a reference may denote --------------------------------------------

    def objects(self, bound: Bound, path: str, depth: int = 0) -> FrozenSet[Obj]:
        key = (id(bound), path)
        cached = self._memo.get(key)
        if cached is not None:
            return cached
        if depth > _MAX_DEPTH:
            return frozenset()
        self._memo[key] = frozenset()  # cycles resolve to nothing
        self._open.add(key)
        result = frozenset(self._objects(bound, path, depth))
        self._open.discard(key)
        self._memo[key] = result
        return result

    def _objects(self, bound: Bound, path: str, depth: int) -> Iterable[Obj]:
        index = self.index
        kind = bound.kind
        if bound.creation is not None:
            yield Obj(OBJ_VAR, (path, bound.creation))
            return
        if kind in (BOUND_CALL, BOUND_ATTR) and bound.qname:
            yield from self._qname_result(bound, path, depth)
            if kind == BOUND_CALL or bound.qname in index.functions or bound.qname in index.classes:
                return
        if kind == BOUND_QNAME and bound.qname:
            qname = bound.qname
            if qname in index.functions:
                yield Obj(OBJ_FUNCTION, qname)
            globals_ = index.module_global(qname)
            if globals_:
                module_path = index.modules[qname.rpartition(".")[0]].path
                for b in globals_:
                    yield from self.objects(b, module_path, depth + 1)
            return
        if kind == BOUND_CALL and bound.attr and bound.options:
            # obj.method(): whatever the method returns, for project classes.
            for obj in self.objects(bound.options[0], path, depth + 1):
                if obj.kind == OBJ_INSTANCE and obj.key in index.classes:
                    fid = index.method(str(obj.key), bound.attr)
                    if fid:
                        fm = index.functions[fid]
                        for b in fm.functions[fid].returns:
                            yield from self.objects(b, fm.path, depth + 1)
            return
        if kind == BOUND_METHOD and bound.qname and bound.attr:
            fid = index.method(bound.qname, bound.attr)
            if fid:
                fm = index.functions[fid]
                for b in fm.functions[fid].returns:
                    yield from self.objects(b, fm.path, depth + 1)
            return
        if kind in (BOUND_NAMES, BOUND_CONTAINER, BOUND_ELEMENT):
            for option in bound.options:
                yield from self.objects(option, path, depth + 1)
            return
        if kind == BOUND_ITEM and bound.attr and bound.options:
            for item, item_path in self._items(bound.options[0], int(bound.attr), path, depth):
                yield from self.objects(item, item_path, depth + 1)
            return
        if kind == BOUND_SELF_ATTR and bound.qname and bound.attr:
            yield from self._attr_of_class(bound.qname, bound.attr, depth)
            return
        if kind == BOUND_PARAM and bound.qname and bound.attr:
            for argument, argument_path in index.arguments_for(bound.qname, bound.attr):
                yield from self.objects(argument, argument_path, depth + 1)
            return
        if kind == BOUND_ATTR and bound.attr and bound.options:
            for obj in self.objects(bound.options[0], path, depth + 1):
                if obj.kind == OBJ_INSTANCE and obj.key in index.classes:
                    yield from self._attr_of_class(str(obj.key), bound.attr, depth)

    def constructions_of(self, class_id: str) -> List[Tuple[Construction, str]]:
        return self.index.constructions_of(class_id)

    def construction_at(self, path: str, span: Span) -> Optional[Construction]:
        return self.index.construction_at(path, span)

    def _items(self, bound: Bound, i: int, path: str, depth: int) -> List[Tuple[Bound, str]]:
        """Item `i` of a tuple a bound may be: `return seen, flag` -> `seen` for i=0."""
        if depth > _MAX_DEPTH:
            return []
        index = self.index
        if bound.kind == BOUND_CONTAINER:
            if bound.attr == EVERY_ITEM and bound.options:  # `a, b = [make(w) for w in ws]`
                return [(bound.options[0], path)]
            return [(bound.options[i], path)] if i < len(bound.options) else []
        returns: List[Tuple[Bound, str]] = []
        if bound.kind == BOUND_NAMES:
            returns = [(b, path) for b in bound.options]
        elif bound.kind == BOUND_CALL and bound.qname in index.functions:
            fm = index.functions[bound.qname]
            returns = [(b, fm.path) for b in fm.functions[bound.qname].returns]
        elif bound.kind == BOUND_METHOD and bound.qname and bound.attr:
            fid = index.method(bound.qname, bound.attr)
            if fid:
                fm = index.functions[fid]
                returns = [(b, fm.path) for b in fm.functions[fid].returns]
        items: List[Tuple[Bound, str]] = []
        for b, p in returns:
            items.extend(self._items(b, i, p, depth + 1))
        return items

    def _attr_of_class(self, class_id: str, attr: str, depth: int) -> Iterable[Obj]:
        index = self.index
        for cid in index.mro(class_id):
            fm = index.class_files[cid]
            for b in index.classes[cid].attrs.get(attr, ()):
                yield from self.objects(b, fm.path, depth + 1)
        method = index.method(class_id, attr)
        if method:
            yield Obj(OBJ_FUNCTION, method)

    def _qname_result(self, bound: Bound, path: str, depth: int) -> Iterable[Obj]:
        """The result of calling `bound.qname` (BOUND_CALL), or the name itself (BOUND_ATTR)."""
        index = self.index
        qname = bound.qname or ""
        if bound.kind == BOUND_ATTR:
            if qname in index.functions:
                yield Obj(OBJ_FUNCTION, qname)
            return
        if qname in index.functions:
            fm = index.functions[qname]
            for b in fm.functions[qname].returns:
                yield from self.objects(b, fm.path, depth + 1)
        elif qname in index.classes:
            yield Obj(OBJ_INSTANCE, qname, (bound, path))
        elif qname in tfapi.FUNCTION_WRAPPERS:
            for option in bound.options:
                yield from self.objects(option, path, depth + 1)
        elif qname.rpartition(".")[2][:1].isupper():
            yield Obj(OBJ_INSTANCE, qname, (bound, path))  # an instance of a library class

    def functions_of(self, bound: Bound, path: str) -> List[str]:
        return [str(o.key) for o in self.objects(bound, path) if o.kind == OBJ_FUNCTION]

    def variables_of(self, bound: Bound, path: str) -> List[VarKey]:
        return [o.key for o in self.objects(bound, path) if o.kind == OBJ_VAR]  # type: ignore[misc]

    def instances_of(self, bound: Bound, path: str) -> List[str]:
        return [str(o.key) for o in self.objects(bound, path) if o.kind == OBJ_INSTANCE]

    def _instances_whole(self, bound: Bound, path: str) -> Tuple[List[str], bool]:
        """`instances_of`, and whether it is the answer for good: not for a reference
        whose objects are being worked out, which a cycle through it asks (nothing yet).
        Any other answer is kept (`objects`), cycles inside it cut as they will be."""
        return self.instances_of(bound, path), (id(bound), path) not in self._open

    def constructions(self, bound: Bound, path: str) -> List[Obj]:
        return [o for o in self.objects(bound, path) if o.kind == OBJ_INSTANCE and o.origin]

    # --- replica context ----------------------------------------------------------

    def where_at(self, function: Optional[str]) -> FrozenSet[Where]:
        if function is None:
            return frozenset({Where(CROSS, "module-level code")})
        found = self.where.get(function)
        return frozenset(found) if found else frozenset({Where(UNKNOWN)})

    def _propagate(self) -> None:
        index = self.index
        seeds: List[Tuple[str, Where]] = []
        for fm in index.files:
            for entry in fm.entries:
                seeds.extend(self._entry_seeds(entry, fm))
        for cid, info in index.classes.items():
            family, kind = self._keras_kind(cid)
            if family is None or kind is None:
                continue
            for method in tfapi.KERAS_REPLICA_METHODS.get(kind, ()):
                if method in info.methods:
                    why = f"Keras runs `{info.name}.{method}` once per replica"
                    seeds.append((f"{cid}.{method}", Where(REPLICA, why)))
        outgoing: Dict[Optional[str], List[str]] = defaultdict(list)
        has_caller: Set[str] = set()
        for fm in index.files:
            table = self._call_targets[fm.path] = self._targets_of_calls(fm)
            for i, targets in table.items():
                edge = fm.calls[i]
                for target in targets:
                    outgoing[edge.caller].append(target)
                    has_caller.add(target)
                    if edge.caller is None:
                        seeds.append((target, Where(CROSS, "called from module-level code",
                                                    at=(fm.path, edge.span))))
        entered = {fid for fid, _ in seeds}
        for fid in index.functions:
            if fid not in has_caller and fid not in entered:
                seeds.append((fid, Where(UNKNOWN)))
        queue: deque = deque()
        for fid, where in seeds:
            self._entered[where].append(fid)
            if where not in self.where[fid]:
                self.where[fid].add(where)
                queue.append(fid)
        while queue:
            caller = queue.popleft()
            source = self.where[caller]
            for target in outgoing.get(caller, ()):
                before = len(self.where[target])
                self.where[target] |= source
                if len(self.where[target]) != before:
                    queue.append(target)

    def call_path(self, where: Where, function: Optional[str]) -> List[Hop]:
        """The calls by which code entered as `where` says reaches `function`: a shortest
        chain from a function `where` enters. [] where it enters `function` itself or no
        chain is known. Searched only for what a message names, once per `where`."""
        entered = self._entered.get(where)
        if function is None or not entered or function in entered:
            return []
        parents = self._parents.get(where)
        if parents is None:
            parents = self._parents[where] = self._search(entered)
        chain: List[Tuple[str, str, int]] = []
        node = function
        while node in parents:
            chain.append(parents[node])
            node = parents[node][0]
        if node not in entered:
            return []
        hops: List[Hop] = []
        target = function
        for caller, path, i in chain:
            fm = self.index.file_at(path)
            higher_order = fm.higher_order.get(i)
            through, through_qname = higher_order[::2] if higher_order else (None, None)
            tests = fm.guarded_calls.get(i)
            hops.append(Hop(self._name(caller), path, fm.calls[i].span, self._name(target),
                            through, through_qname,
                            tuple(fm.branch_tests[t] for t in tests) if tests else ()))
            target = caller
        hops.reverse()
        return hops

    def tensor_test(self, test: BranchTest, path: str) -> bool:
        """Whether an `if`/`while` test in `path` may be a tensor, so that AutoGraph makes
        the statement a `tf.cond`/`tf.while_loop` where it converts the function: it
        takes the value of a variable, or of a call of tfapi.TENSOR_VALUED_CALLS, directly
        or through a local name bound to one. Parameters and other names are taken to be
        Python values (Keras passes `training` as a Python bool)."""
        for read in test.reads:
            for bound in (read, *read.options) if read.kind == BOUND_NAMES else (read,):
                if bound.kind == BOUND_CALL and _tensor_valued(bound.qname):
                    return True
            if any(obj.kind == OBJ_VAR for obj in self.objects(read, path)):
                return True
        return False

    def _name(self, fid: str) -> str:
        fm = self.index.functions.get(fid)
        return fm.functions[fid].name if fm is not None else fid.rpartition(".")[2]

    def _search(self, entered: List[str]) -> Dict[str, Tuple[str, str, int]]:
        """Breadth first from `entered` over the call edges: function -> (its caller, the
        call's path and index) on a shortest chain."""
        forward = self._forward
        if forward is None:
            forward = self._forward = defaultdict(list)
            for fm in self.index.files:
                calls = fm.calls
                for i, targets in self._call_targets.get(fm.path, {}).items():
                    caller = calls[i].caller
                    if caller is not None:
                        for target in targets:
                            forward[caller].append((target, fm.path, i))
        parents: Dict[str, Tuple[str, str, int]] = {}
        seen = set(entered)
        queue = deque(entered)
        while queue:
            caller = queue.popleft()
            for target, path, i in forward.get(caller, ()):
                if target not in seen:
                    seen.add(target)
                    parents[target] = (caller, path, i)
                    queue.append(target)
        return parents

    def _targets_of_calls(self, fm: FileModel) -> Dict[int, List[str]]:
        table: Dict[int, List[str]] = {}
        callees, method_names = dict(self.contexts.callee_table[fm.path]), self._method_names
        dropped = self.contexts.dropped_calls.get(fm.path, ())
        for i, edge in enumerate(fm.calls):
            targets = callees.get(i)
            if targets is None:
                if i in dropped:
                    continue
                callee = edge.callee  # `obj.method()`, obj maybe a project class's instance
                if callee.attr not in method_names or callee.kind != BOUND_CALL:
                    continue
                receiver = callee.options[0] if callee.options else None
                if receiver is None or (receiver.kind == BOUND_NAMES and not receiver.options):
                    continue  # `len(x)`: a name bound nowhere in the file is no instance
                targets = self._instance_callees(callee, fm.path)
                if not targets:
                    continue
                self.instance_calls.setdefault(fm.path, []).append((i, targets))
            table[i] = targets
        return table

    def _instance_callees(self, bound: Bound, path: str) -> List[str]:
        """`obj.method()` where obj is an instance of a project class (the caller has
        checked that a project method has the name)."""
        if not bound.options:
            return []
        targets = []
        for cls in self.instances_of(bound.options[0], path):
            if cls in self.index.classes and bound.attr:
                fid = self.index.method(cls, bound.attr)
                if fid:
                    targets.append(fid)
        return targets

    def _entry_seeds(self, entry, fm: FileModel) -> List[Tuple[str, Where]]:
        functions = self.functions_of(entry.fn, fm.path)
        if not functions:
            return []
        if entry.kind == ENTRY_CROSS:
            where = Where(CROSS, "given to merge_call/extended.update", at=(fm.path, entry.span))
        else:
            strategy = self.contexts.resolver.strategy_of((entry.strategy,), entry.strategy.text,
                                                          fm.path) if entry.strategy else None
            if strategy is None:
                return []  # `session.run(...)` and other `.run`s
            where = Where(REPLICA, f"`{entry.strategy.text}.run`", strategy, (fm.path, entry.span))
        return [(fid, where) for fid in functions]

    # --- per variable -------------------------------------------------------------

    def updates(self) -> Dict[VarKey, List[UpdateInfo]]:
        result: Dict[VarKey, List[UpdateInfo]] = defaultdict(list)
        for fm in self.index.files:
            for update in fm.updates:
                for keys, where, contexts in self._targets(update.receiver, update.function,
                                                           update.scopes, fm.path):
                    info = UpdateInfo(fm.path, update.method, update.value,
                                      value_kind(update.value), update.span, update.function,
                                      where, contexts, update.function_style,
                                      update.accumulates, update.depends, update.source)
                    if update.tests:
                        info.tests = tuple(fm.branch_tests[t] for t in update.tests)
                    for key in keys:
                        result[key].append(info)
        return result

    def _targets(self, bound: Bound, function: Optional[str], scopes: Tuple[int, ...],
                 path: str) -> List[Tuple[List[VarKey], FrozenSet[Where], FrozenSet[Context]]]:
        """The variables an update or read of `bound` in `function` may touch, each group
        with the replica-ness and strategy contexts it touches them in. One of its own
        function's parameter (`def assign(ref, value): ref.assign(value)`, a helper every
        module calls) touches what each call passes in that call's contexts, not in those
        of every call of the helper: a variable handed over in cross-replica code is not
        updated in replica context because another caller runs in it."""
        receiver = bound
        if receiver.kind == BOUND_NAMES and len(receiver.options) == 1:
            receiver = receiver.options[0]
        if receiver.kind != BOUND_PARAM or receiver.qname != function or function is None \
                or scopes or not receiver.attr:
            keys = self.variables_of(bound, path)
            if not keys:
                return []
            return [(keys, self.where_at(function),
                     self.contexts.contexts_at(path, function, scopes))]
        groups: List[Tuple[List[VarKey], FrozenSet[Where], FrozenSet[Context]]] = []
        for passed, passed_path, edge in self.index.arguments_with_calls(function,
                                                                         receiver.attr):
            keys = self.variables_of(passed, passed_path)
            if not keys:
                continue
            if edge is None:  # a construction, `partial` or `strategy.run`: the callee's own
                groups.append((keys, self.where_at(function),
                               self.contexts.contexts_at(path, function, ())))
                continue
            groups.append((keys, self.where_at(edge.caller),
                           self.contexts.contexts_at(passed_path, edge.caller, edge.scopes)))
        return groups

    def reads(self) -> Dict[VarKey, List[ReadInfo]]:
        result: Dict[VarKey, List[ReadInfo]] = defaultdict(list)
        # (path, span of a `tf.train.Checkpoint(...)` call) -> the variables it tracks
        tracked: Dict[Tuple[str, Span], List[VarKey]] = defaultdict(list)
        saves: List[Tuple[Read, str]] = []
        for fm in self.index.files:
            for read in fm.reads:
                if read.kind in (READ_SAVE, READ_WRITE):
                    saves.append((read, fm.path))
                if read.kind == READ_WRITE:
                    continue  # a save only of a checkpoint (below)
                if read.kind in tfapi.READ_METHODS:  # a read of the variable itself
                    for keys, where, _ in self._targets(read.receiver, read.function,
                                                        read.scopes, fm.path):
                        info = ReadInfo(fm.path, read.kind, read.span, where)
                        for key in keys:
                            result[key].append(info)
                    continue
                info = ReadInfo(fm.path, read.kind, read.span, self.where_at(read.function))
                keys = self._read_variables(read, fm.path)
                for key in keys:
                    result[key].append(info)
                if read.kind == READ_CHECKPOINT:
                    tracked[(fm.path, read.span)].extend(keys)
        for read, path in saves:  # `checkpoint.save(...)`: a save of what it tracks
            for obj in self.objects(read.receiver, path):
                if obj.kind == OBJ_INSTANCE and obj.key in tfapi.CHECKPOINT_CLASSES \
                        and obj.origin is not None and obj.origin[0].span is not None:
                    info = ReadInfo(path, READ_SAVE, read.span, self.where_at(read.function))
                    for key in tracked.get((obj.origin[1], obj.origin[0].span), ()):
                        result[key].append(info)
        return result

    def _read_variables(self, read: Read, path: str) -> List[VarKey]:
        keys = []
        for obj in self.objects(read.receiver, path):
            if obj.kind == OBJ_VAR:
                keys.append(obj.key)
            elif obj.kind == OBJ_INSTANCE and obj.key in self.index.classes and \
                    read.kind in (READ_CHECKPOINT, READ_SAVE):
                keys.extend(self._variables_held_by(str(obj.key)))
        return keys  # type: ignore[return-value]

    def _variables_held_by(self, class_id: str) -> List[VarKey]:
        """Variables stored on `self` by a class (what saving an instance writes)."""
        keys: List[VarKey] = []
        for cid in self.index.mro(class_id):
            fm = self.index.class_files[cid]
            for bounds in self.index.classes[cid].attrs.values():
                for b in bounds:
                    keys.extend(self.variables_of(b, fm.path))
        return keys

    # --- what a checkpoint can reach -----------------------------------------------

    def trackable(self, class_id: str) -> bool:
        """Whether instances of a project class are TensorFlow trackables, whose `self`
        attributes a checkpoint or SavedModel reaches: any base from a library (a Keras
        layer, model, metric or optimizer, a `tf.Module`, an AutoTrackable, or a base not
        seen here) counts; only classes built from project classes, `object` and the
        plain modules of `tfapi.PLAIN_BASE_MODULES` do not."""
        return any(base.partition(".")[0] not in tfapi.PLAIN_BASE_MODULES
                   for base in self.index.external_bases(class_id))

    def holders(self) -> Dict[VarKey, str]:
        """Variables a checkpoint or SavedModel can reach -> what holds them: the id of a
        trackable class that stores them on `self`, or MODULE_GLOBAL."""
        held: Dict[VarKey, str] = {}
        for class_id in self.index.classes:
            if self.trackable(class_id):
                for key in self._variables_held_by(class_id):
                    held.setdefault(key, class_id)
        for fm in self.index.files:
            for bounds in fm.globals.values():
                for bound in bounds:
                    for key in self.variables_of(bound, fm.path):
                        held.setdefault(key, MODULE_GLOBAL)
        return held

    def lexical_holder(self, call: CreationCall, key: VarKey) -> Optional[str]:
        """What holds a variable by where it is created, when no binding says: module-level
        code (MODULE_GLOBAL), a Keras `self.add_weight`, a method of a trackable class
        storing it on `self` (`self._slots.append(tf.Variable(...))`), or ESCAPES where it
        leaves its function (returned, or passed to a call) for places not all seen here.
        None: a `self` attribute of a plain object, or a local that stays in its function --
        nothing a checkpoint can reach."""
        if call.function is None:
            return MODULE_GLOBAL
        if call.on_self and call.klass is not None:
            return call.klass
        owner = call.function
        while "." in owner and owner not in self.index.classes:
            owner = owner.rpartition(".")[0]
        klass = owner if owner in self.index.classes else None
        if call.target is not None and call.target.startswith("self."):
            return klass if klass is not None and self.trackable(klass) else None
        fm = self.index.functions.get(call.function)
        if fm is not None and any(key in self.variables_of(b, fm.path)
                                  for b in fm.functions[call.function].returns):
            return ESCAPES
        if call.target is None:
            if klass is not None:
                return klass if self.trackable(klass) else None
            return ESCAPES
        return None

    def creation_contexts(self, bound: Bound, path: str) -> FrozenSet[Context]:
        """Strategy contexts where the object a call-bound names was constructed."""
        if bound.span is None:
            return frozenset()
        table = self._edges_by_span.get(path)
        if table is None:
            table = self._edges_by_span[path] = {
                edge.span: (edge.caller, edge.scopes) for edge in self.index.file_at(path).calls}
        found = table.get(bound.span)
        if found is None:
            return frozenset()
        caller, scopes = found
        return self.contexts.contexts_at(path, caller, scopes)
