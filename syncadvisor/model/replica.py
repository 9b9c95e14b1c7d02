"""Replica context: which code runs once per replica, and which across replicas.

Replica context is inferred as TensorFlow defines it: functions given to `strategy.run`
/ `experimental_run_v2` / `extended.call_for_each_replica` (by name, lambda, bound
method, through `tf.function`), the Keras methods that run once per replica under `fit`
(`train_step`, `call`, `update_state`, ...), and whatever they call. Module-level code
and what it calls is cross-replica, and so are functions given to `merge_call` and
`extended.update`. A function's contexts (`where`) are those it is entered in, and its
callers'; a function nothing in the run enters or calls: unknown.
"""
from __future__ import annotations

from collections import deque
from typing import Callable, Dict, FrozenSet, List, Optional, Set, Tuple

from ..records import record
from . import tfapi
from .calls import CallGraph
from .contexts import MAX_TARGETS, Strategies, Strategy
from .db import Db
from .facts import BOUND_CALL, BOUND_NAMES, ENTRY_CROSS, BranchTest, FileModel, Span
from .index import ProjectIndex, plain_items
from .objects import OBJ_VAR, Objects

REPLICA = "replica"
CROSS = "cross-replica"
UNKNOWN = "unknown"

# The Keras family and kind of a class, or (None, None): `variables.keras_class_kind`.
KerasKind = Callable[[str], Tuple[Optional[str], Optional[str]]]


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
    # (`Replica.tensor_test` decides), outermost first.
    tests: Tuple[BranchTest, ...] = ()
    caller_id: Optional[str] = None  # the calling function's id


# How many functions `call_path` searches a chain through (its work for each message).
MAX_ANCESTORS = 2000

MODULE_LEVEL = Where(CROSS, "module-level code")
# The replica contexts of code whose contexts cannot be told: an UNKNOWN one that stands
# for all (`contexts.CANNOT_TELL`, whose bounds it shares: a call that may run more than
# MAX_TARGETS functions, a function entered in more than MAX_WHERES contexts or called
# from code whose contexts cannot be told, a call chain deeper than `db.MAX_OPEN`).
WHERE_CANNOT_TELL = Where(UNKNOWN, "more callers than can be told apart")
WHERES_CANNOT_TELL: FrozenSet[Where] = frozenset({WHERE_CANNOT_TELL})
MAX_WHERES = 64
_CALLED_FROM_MODULE = "called from module-level code"
_NO_WHERE: FrozenSet[Where] = frozenset()


def entries(fm: FileModel):
    """A file's replica entries (`strategy.run(fn)`, `merge_call(fn)`), in order."""
    for entry in fm.entries:
        yield (), (entry, fm.path)


@plain_items
def classes_by_name(fm: FileModel):
    for cid, info in fm.classes.items():
        yield info.name, cid


TABLES = (("entries", entries), ("classes-by-name", classes_by_name))


class Replica:
    def __init__(self, db: Db, index: ProjectIndex, objects: Objects, calls: CallGraph,
                 strategies: Strategies, keras_kind: KerasKind):
        self.index = index
        self.objects = objects
        self.calls = calls
        self.strategies = strategies
        self._keras_kind = keras_kind
        self.where = db.query("where", self._where, _NO_WHERE, same=_equal,
                              unknown=WHERES_CANNOT_TELL)
        self._entered = db.query("entered", self._entered_table, {})
        self.traced = db.query("traced", self._traced, False)
        self._entering = db.query("entering", self._entering_table, {})

    # --- where a function runs ---------------------------------------------------------

    def _where(self, function: str) -> FrozenSet[Where]:
        """The replica contexts a function is entered in, and those of its callers."""
        found: Set[Where] = set(self._entered().get(function, ()))
        keras = self._keras_where(function)
        if keras is not None:
            found.add(keras)
        callers = self.calls.callers(function)
        index = self.index
        targets = self.calls.targets
        for path, i in callers:
            if len(targets(path, i)) > MAX_TARGETS:
                return WHERES_CANNOT_TELL
            edge = index.file_at(path).calls[i]
            if edge.caller is None:
                found.add(Where(CROSS, _CALLED_FROM_MODULE, at=(path, edge.span)))
            else:
                source = self.where(edge.caller)
                if WHERE_CANNOT_TELL in source:
                    return WHERES_CANNOT_TELL
                found |= source
            if len(found) > MAX_WHERES:
                return WHERES_CANNOT_TELL
        if len(found) > MAX_WHERES:
            return WHERES_CANNOT_TELL
        if not callers and not found:
            found.add(Where(UNKNOWN))
        return frozenset(found)

    def _keras_where(self, function: str) -> Optional[Where]:
        """`Keras runs `Layer.call` once per replica` for a Keras class's own method
        that Keras runs per replica."""
        owner, _, method = function.rpartition(".")
        info = self.index.klass(owner)
        if info is None or method not in info.methods:
            return None
        family, kind = self._keras_kind(owner)
        if family is None or kind is None or \
                method not in tfapi.KERAS_REPLICA_METHODS.get(kind, ()):
            return None
        return Where(REPLICA, f"Keras runs `{info.name}.{method}` once per replica")

    def keras_traced_step(self, function: str) -> bool:
        """Whether `function` is a Keras model's step that `fit` (or `evaluate`,
        `predict`) runs once per replica, traced (tfapi.KERAS_TRACED_STEP_METHODS)."""
        method = function.rpartition(".")[2]
        return method in tfapi.KERAS_TRACED_STEP_METHODS and \
            self._keras_where(function) is not None

    def _entered_table(self) -> Dict[str, Tuple[Where, ...]]:
        """Function -> the replica contexts the run's entries (`strategy.run(fn)`,
        `merge_call(fn)`) enter it in."""
        table: Dict[str, List[Where]] = {}
        for entry, path in self.index.tables["entries"].get(()):
            functions = self.objects.functions_of(entry.fn, path)
            if not functions:
                continue
            if entry.kind == ENTRY_CROSS:
                where = Where(CROSS, "given to merge_call/extended.update", at=(path, entry.span))
            else:
                strategy = self.strategies.resolver.strategy_of(
                    (entry.strategy,), entry.strategy.text, path) if entry.strategy else None
                if strategy is None:
                    continue  # `session.run(...)` and other `.run`s
                where = Where(REPLICA, f"`{entry.strategy.text}.run`", strategy,
                              (path, entry.span))
            for fid in functions:
                table.setdefault(fid, []).append(where)
        return {fid: tuple(wheres) for fid, wheres in table.items()}

    def _entering_table(self) -> Dict[Where, Tuple[str, ...]]:
        """Replica context -> the functions the run's entries enter in it, in the run's
        order (the inverse of `_entered`)."""
        table: Dict[Where, Dict[str, None]] = {}
        for fid, wheres in self._entered().items():
            for where in wheres:
                table.setdefault(where, {})[fid] = None
        return {where: tuple(fids) for where, fids in table.items()}

    def where_at(self, function: Optional[str]) -> FrozenSet[Where]:
        if function is None:
            return frozenset({MODULE_LEVEL})
        found = self.where(function)
        return found if found else frozenset({Where(UNKNOWN)})

    # --- how a context reaches a function ----------------------------------------------

    def call_path(self, where: Where, function: Optional[str]) -> List[Hop]:
        """The calls by which code entered as `where` says reaches `function`: a shortest
        chain from a function `where` enters (breadth first over the calls, in the run's
        order). [] where it enters `function` itself or no chain is known, and where more
        than MAX_ANCESTORS functions may call `function` (cannot tell: a chain is only
        ever told in a message, and searching it costs each message that much)."""
        entered = self._functions_entered(where)
        if function is None or not entered or function in entered:
            return []
        ancestors = self._ancestors(function)
        if ancestors is None:
            return []
        parents: Dict[str, Tuple[str, str, int]] = {}
        seen = set(entered)
        queue = deque(f for f in entered if f in ancestors)
        while queue and function not in parents:
            caller = queue.popleft()
            for target, (path, i) in self.calls.callees(caller):
                if target not in seen and target in ancestors:
                    seen.add(target)
                    parents[target] = (caller, path, i)
                    queue.append(target)
        if function not in parents:
            return []
        hops: List[Hop] = []
        target = function
        while target in parents:
            caller, path, i = parents[target]
            fm = self.index.file_at(path)
            higher_order = fm.higher_order.get(i)
            through, through_qname = higher_order[::2] if higher_order else (None, None)
            tests = fm.guarded_calls.get(i)
            hops.append(Hop(self._name(caller), path, fm.calls[i].span, self._name(target),
                            through, through_qname,
                            tuple(fm.branch_tests[t] for t in tests) if tests else (),
                            caller))
            target = caller
        hops.reverse()
        return hops

    def _ancestors(self, function: str) -> Optional[Set[str]]:
        """`function` and every function some chain of calls runs it from; None where
        there are more than MAX_ANCESTORS."""
        found = {function}
        todo = [function]
        index = self.index
        while todo:
            for path, i in self.calls.callers(todo.pop()):
                caller = index.file_at(path).calls[i].caller
                if caller is not None and caller not in found:
                    found.add(caller)
                    todo.append(caller)
                    if len(found) > MAX_ANCESTORS:
                        return None
        return found

    def _functions_entered(self, where: Where) -> List[str]:
        """The functions `where` enters, in the run's order."""
        index = self.index
        if where.kind == CROSS and where.via == _CALLED_FROM_MODULE and where.at is not None:
            path, span = where.at
            calls = index.file_at(path).calls
            return [t for i in self.calls.calls_in(path, None) if calls[i].span == span
                    for t in self.calls.targets(path, i)]
        if where.at is None and where.kind == REPLICA:  # Keras's own: every class so named
            found = []
            for name, method in _keras_names(where.via):
                for cid in index.tables["classes-by-name"].get(name):
                    fid = f"{cid}.{method}"
                    if self._keras_where(fid) == where:
                        found.append(fid)
            return found
        return list(self._entering().get(where, ()))

    def _name(self, fid: str) -> str:
        fm = self.index.function_file(fid)
        return fm.functions[fid].name if fm is not None else fid.rpartition(".")[2]

    # --- traced code ---------------------------------------------------------------------

    def _traced(self, function: str) -> bool:
        """Whether code in `function` runs traced whatever runs it: it is decorated with
        `tf.function`, or something runs it and every call and `strategy.run` that may
        run it is made from code that runs traced. A function Keras runs (`train_step`
        under `fit`, traced unless `run_eagerly`) or nothing runs: no."""
        index = self.index
        fm = index.function_file(function)
        if fm is not None and fm.functions[function].traced:
            return True
        makers: List[Optional[str]] = []
        for path, i in self.calls.callers(function):
            makers.append(index.file_at(path).calls[i].caller)
        for where in self._entered().get(function, ()):
            if where.at is None:
                return False
            makers.append(self._entry_function(where.at))
        if not makers or self._keras_where(function) is not None:
            return False
        return all(maker is not None and self.traced(maker) for maker in makers)

    def _entry_function(self, at: Tuple[str, Span]) -> Optional[str]:
        """The function that makes the entry call (`strategy.run(...)`) at `at`."""
        path, span = at
        for entry in self.index.file_at(path).entries:
            if entry.span == span:
                return entry.function
        return None

    def traced_path(self, where: Where, function: Optional[str]) -> bool:
        """Whether code in `function`, entered as `where` says through the calls of
        `call_path(where, function)`, runs traced there: the `strategy.run` that entered
        it is made from traced code, or a function on the way is `tf.function`."""
        if function is None or where.kind != REPLICA or where.at is None:
            return False
        maker = self._entry_function(where.at)
        if maker is not None and self.traced(maker):
            return True
        on_the_way = [function] + [hop.caller_id for hop in self.call_path(where, function)]
        return any(self._decorated(fid) for fid in on_the_way if fid is not None)

    def _decorated(self, function: str) -> bool:
        fm = self.index.function_file(function)
        return fm is not None and fm.functions[function].traced

    # --- tests that may be tensors -------------------------------------------------------

    def tensor_test(self, test: BranchTest, path: str) -> bool:
        """Whether an `if`/`while` test in `path` may be a tensor, so that AutoGraph makes
        the statement a `tf.cond`/`tf.while_loop` where it converts the function: it
        takes the value of a variable, or of a call of tfapi.TENSOR_VALUED_CALLS, directly
        or through a local name bound to one. Parameters and other names are taken to be
        Python values (Keras passes `training` as a Python bool)."""
        for read in test.reads:
            for bound in (read, *read.options) if read.kind == BOUND_NAMES else (read,):
                if bound.kind == BOUND_CALL and tensor_valued(bound.qname):
                    return True
            if any(obj.kind == OBJ_VAR for obj in self.objects.objects(read, path)):
                return True
        return False


def _equal(old: object, new: object) -> bool:
    return old == new


def _keras_names(via: str) -> List[Tuple[str, str]]:
    """(class name, method) of "Keras runs `Name.method` once per replica"."""
    start, end = via.find("`"), via.rfind("`")
    if start < 0 or end <= start:
        return []
    name, _, method = via[start + 1:end].rpartition(".")
    return [(name, method)] if name and method else []


def tensor_valued(qname: Optional[str]) -> bool:
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
