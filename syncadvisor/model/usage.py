"""How variables are used: the updates and reads of each variable, in which replica and
strategy contexts, and what keeps a variable where a checkpoint can reach it.

Each update and read is tied to the variables its receiver may denote (`Objects`): a
name, `self.attr`, an element of a list built in a comprehension, a loop variable, a
function's return value -- across the modules of the run. An update through a helper's
parameter (`def assign(ref, value): ref.assign(value)`) touches what each call passes,
in that call's contexts.
"""
from __future__ import annotations

from typing import Any, Dict, FrozenSet, List, Optional, Sequence, Tuple

from ..records import record
from . import tfapi
from .contexts import At, Context, Strategies
from .db import Db
from .facts import (BOOL, BOUND_NAMES, BOUND_PARAM, CALL, FLOAT, INT, QNAME, READ_CHECKPOINT,
                    READ_SAVE, READ_WRITE, Bound, BranchTest, CreationCall, FileModel, ObjectUse,
                    Read, Source, Span, Value)
from .index import ProjectIndex, plain_items
from .objects import OBJ_INSTANCE, OBJ_VAR, Obj, Objects, VarKey
from .replica import CROSS, REPLICA, UNKNOWN, Replica, Where

__all__ = ["REPLICA", "CROSS", "UNKNOWN", "Where", "UpdateInfo", "ReadInfo", "Usage",
           "PYTHON_NUMBER", "CONSTANT", "PER_REPLICA", "REPLICA_INVARIANT", "MODULE_GLOBAL",
           "ESCAPES", "value_kind", "is_statistic", "statistic_name"]

# What a value written in replica context is.
PYTHON_NUMBER = "python-number"  # the same non-tensor on every replica
CONSTANT = "constant"  # the same tensor on every replica
PER_REPLICA = "per-replica"  # anything else: it can differ between replicas
# Computed from state that is the same on every replica (settled by linking).
REPLICA_INVARIANT = "replica-invariant"

# What tracks a variable (`Usage.holder`) where no class does: it is bound to a
# module-level name, reachable from anywhere.
MODULE_GLOBAL = "<module>"
# ... or it leaves the function that makes it, for places the run may not see.
ESCAPES = "<escapes>"


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
    # (`Replica.tensor_test` decides), outermost first.
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


def is_statistic(value: Optional[Value]) -> bool:
    """`tf.maximum(m, x)`, `tf.reduce_mean(x)`, `keras.ops.max(x)`: a statistic whose
    per-replica values do not add up to the whole's."""
    return statistic_name(value) in tfapi.STATISTIC_CALL_NAMES


def statistic_name(value: Optional[Value]) -> Optional[str]:
    """The last name of the function a value is the call of (`reduce_max`), if any."""
    if value is None or value.kind != CALL:
        return None
    return (value.qname or value.text.partition("(")[0]).rpartition(".")[2]


@plain_items
def updated(fm: FileModel):
    """The files that update or read variables."""
    if fm.updates or fm.reads:
        yield (), fm.path


@plain_items
def object_using(fm: FileModel):
    """The files that call methods on what may be Keras objects."""
    if fm.uses:
        yield (), fm.path


TABLES = (("using", updated), ("object-using", object_using))

# A call of the run that may reach a constructed object: the call (`ObjectUse`), its path,
# how many objects the reference there may denote, and whether the object is handed over
# in it (`model.compile(optimizer=optimizer)`) rather than called on.
ObjectCall = Tuple[ObjectUse, str, int, bool]

# (the variables, the replica contexts and the strategy contexts) an update or read
# touches them in.
Group = Tuple[List[VarKey], FrozenSet[Where], FrozenSet[Context]]


class Usage:
    def __init__(self, db: Db, index: ProjectIndex, objects: Objects, strategies: Strategies,
                 replica: Replica):
        self.index = index
        self.objects = objects
        self.strategies = strategies
        self.replica = replica
        self.update_table = db.query("update_table", self._updates, {})
        self.read_table = db.query("read_table", self._reads, {})
        # One variable's updates and reads: what a linked site reads of the tables, so
        # that an edit elsewhere leaves it alone (the same records, in the same order).
        self.updates_of = db.query("updates_of", self._updates_of, (), same=_same_items)
        self.reads_of = db.query("reads_of", self._reads_of, (), same=_equal_items)
        # File -> the variables with an update placed in it: made there, or reached
        # through a call made there (`Where.at`).
        self.update_places = db.query("update_places", self._places, {})
        self.updated_at = db.query("updated_at", self._updated_at, (), same=_equal_items)
        self.holders = db.query("holders", self._holders, {})
        # (their answers name variables by creation site, not position: an edit that
        # moves code keeps them equal, and what read them is not answered again)
        self._class_holds = db.query("class_holds", self._held_by_class, (),
                                     same=_equal_items)
        self._global_holds = db.query("global_holds", self._held_by_globals, (),
                                      same=_equal_items)
        self.trackable = db.query("trackable", self._trackable, False)
        self._file_updates = db.query("file_updates", self._updates_in, ())
        self._file_reads = db.query("file_reads", self._reads_in, ())
        self._edges_by_span = db.query("edges_by_span", self._edges_of, {})
        self.object_calls = db.query("object_calls", self._object_calls, {})

    # --- calls on objects --------------------------------------------------------------

    def _object_calls(self) -> Dict[Tuple[str, Span], Tuple[Obj, List[ObjectCall]]]:
        """Each constructed object the run's object calls may reach, by the path and span
        of the call that makes it -> the object and those calls, in the run's order."""
        found: Dict[Tuple[str, Span], Tuple[Obj, List[ObjectCall]]] = {}
        for path in self.index.tables["object-using"].get(()):
            for use in self.index.file_at(path).uses:
                reached = [(use.receiver, False)] + [(b, True) for _, b in use.passed]
                for bound, handed in reached:
                    objects = self.objects.constructions(bound, path)
                    for obj in objects:
                        if obj.origin is None:
                            continue
                        made, made_path = obj.origin
                        if made.span is None:
                            continue
                        entry = found.setdefault((made_path, made.span), (obj, []))
                        entry[1].append((use, path, len(objects), handed))
        return found

    # --- updates -----------------------------------------------------------------------

    def _updates(self) -> Dict[VarKey, List[UpdateInfo]]:
        """Variable -> its updates, in the run's order, as each file's updates say them
        (before linking settles their value kinds: `Project.site`)."""
        result: Dict[VarKey, List[UpdateInfo]] = {}
        for path in self.index.tables["using"].get(()):
            for keys, info in self._file_updates(path):
                for key in keys:
                    result.setdefault(key, []).append(info)
        return result

    def _updates_of(self, path: str, index: int) -> Tuple[UpdateInfo, ...]:
        return tuple(self.update_table().get((path, index), ()))

    def _places(self) -> Dict[str, List[VarKey]]:
        places: Dict[str, List[VarKey]] = {}
        for key, updates in self.update_table().items():
            for path in {p for u in updates
                         for p in (u.path, *(w.at[0] for w in u.where if w.at))}:
                places.setdefault(path, []).append(key)
        return places

    def _updated_at(self, path: str) -> Tuple[VarKey, ...]:
        """The variables with an update placed in `path`, in the run's order."""
        order = self.index.order
        return tuple(sorted(self.update_places().get(path, ()),
                            key=lambda key: (order(key[0]), key[1])))

    def _updates_in(self, path: str) -> Tuple[Tuple[Tuple[VarKey, ...], UpdateInfo], ...]:
        fm = self.index.file_at(path)
        found = []
        for update in fm.updates:
            for keys, where, contexts in self._targets(update.receiver, update.function,
                                                       update.scopes, fm.path):
                info = UpdateInfo(fm.path, update.method, update.value,
                                  value_kind(update.value), update.span, update.function,
                                  where, contexts, update.function_style,
                                  update.accumulates, update.depends, update.source)
                if update.tests:
                    info.tests = tuple(fm.branch_tests[t] for t in update.tests)
                found.append((tuple(keys), info))
        return tuple(found)

    def _targets(self, bound: Bound, function: Optional[str], scopes: Tuple[int, ...],
                 path: str) -> List[Group]:
        """The variables an update or read of `bound` in `function` may touch, each group
        with the replica-ness and strategy contexts it touches them in. One of its own
        function's parameter (`def assign(ref, value): ref.assign(value)`, a helper every
        module calls) touches what each call passes in that call's contexts, not in those
        of every call of the helper: a variable handed over in cross-replica code is not
        updated in replica context because another caller runs in it."""
        receiver = bound
        if receiver.kind == BOUND_NAMES and len(receiver.options) == 1:
            receiver = receiver.options[0]
        where_at, contexts_at = self.replica.where_at, self.strategies.contexts_at
        if receiver.kind != BOUND_PARAM or receiver.qname != function or function is None \
                or scopes or not receiver.attr:
            keys = self.objects.variables_of(bound, path)
            if not keys:
                return []
            return [(keys, where_at(function), contexts_at(path, function, scopes))]
        groups: List[Group] = []
        for passed, passed_path, edge in self.objects.arguments_with_calls(function,
                                                                           receiver.attr):
            keys = self.objects.variables_of(passed, passed_path)
            if not keys:
                continue
            if edge is None:  # a construction, `partial` or `strategy.run`: the callee's own
                groups.append((keys, where_at(function), contexts_at(path, function, ())))
                continue
            groups.append((keys, where_at(edge.caller),
                           contexts_at(passed_path, edge.caller, edge.scopes)))
        return groups

    # --- reads -------------------------------------------------------------------------

    def _reads(self) -> Dict[VarKey, List[ReadInfo]]:
        """Variable -> its reads and saves, in the run's order."""
        result: Dict[VarKey, List[ReadInfo]] = {}
        # (path, span of a `tf.train.Checkpoint(...)` call) -> the variables it tracks
        tracked: Dict[Tuple[str, Span], List[VarKey]] = {}
        saves: List[Tuple[Read, str]] = []
        for path in self.index.tables["using"].get(()):
            for keys, info, read in self._file_reads(path):
                if read is not None:
                    saves.append((read, path))
                if info is None:
                    continue
                for key in keys:
                    result.setdefault(key, []).append(info)
                if info.kind == READ_CHECKPOINT:
                    tracked.setdefault((path, info.span), []).extend(keys)
        for read, path in saves:  # `checkpoint.save(...)`: a save of what it tracks
            for obj in self.objects.objects(read.receiver, path):
                if obj.kind == OBJ_INSTANCE and obj.key in tfapi.CHECKPOINT_CLASSES \
                        and obj.origin is not None and obj.origin[0].span is not None:
                    info = ReadInfo(path, READ_SAVE, read.span,
                                    self.replica.where_at(read.function))
                    for key in tracked.get((obj.origin[1], obj.origin[0].span), ()):
                        result.setdefault(key, []).append(info)
        return result

    def _reads_of(self, path: str, index: int) -> Tuple[ReadInfo, ...]:
        return tuple(self.read_table().get((path, index), ()))

    def _reads_in(self, path: str) -> Tuple[Tuple[Tuple[VarKey, ...], Optional[ReadInfo],
                                                  Optional[Read]], ...]:
        """(variables, the read, a save to look into) for each read of a file."""
        fm = self.index.file_at(path)
        found: List[Tuple[Tuple[VarKey, ...], Optional[ReadInfo], Optional[Read]]] = []
        for read in fm.reads:
            save = read if read.kind in (READ_SAVE, READ_WRITE) else None
            if read.kind == READ_WRITE:
                found.append(((), None, save))  # a save only of a checkpoint (see `_reads`)
                continue
            if read.kind in tfapi.READ_METHODS:  # a read of the variable itself
                for keys, where, _ in self._targets(read.receiver, read.function,
                                                    read.scopes, fm.path):
                    found.append((tuple(keys), ReadInfo(fm.path, read.kind, read.span, where),
                                  None))
                if save is not None:
                    found.append(((), None, save))
                continue
            info = ReadInfo(fm.path, read.kind, read.span, self.replica.where_at(read.function))
            found.append((tuple(self._read_variables(read, fm.path)), info, save))
        return tuple(found)

    def _read_variables(self, read: Read, path: str) -> List[VarKey]:
        keys: List[VarKey] = []
        for obj in self.objects.objects(read.receiver, path):
            if obj.kind == OBJ_VAR:
                keys.append(obj.key)  # type: ignore[arg-type]
            elif obj.kind == OBJ_INSTANCE and self.index.is_class(str(obj.key)) and \
                    read.kind in (READ_CHECKPOINT, READ_SAVE):
                keys.extend(self.variables_held_by(str(obj.key)))
        return keys

    def variables_held_by(self, class_id: str) -> List[VarKey]:
        """Variables stored on `self` by a class (what saving an instance writes)."""
        keys: List[VarKey] = []
        index = self.index
        for cid in index.mro(class_id):
            fm = index.class_file(cid)
            info = index.klass(cid)
            if fm is None or info is None:
                continue
            index.read(fm)
            for bounds in info.attrs.values():
                for b in bounds:
                    keys.extend(self.objects.variables_of(b, fm.path))
        return keys

    # --- what a checkpoint can reach -----------------------------------------------------

    def _trackable(self, class_id: str) -> bool:
        """Whether instances of a project class are TensorFlow trackables, whose `self`
        attributes a checkpoint or SavedModel reaches: any base from a library (a Keras
        layer, model, metric or optimizer, a `tf.Module`, an AutoTrackable, or a base not
        seen here) counts; only classes built from project classes, `object`, the plain
        modules of `tfapi.PLAIN_BASE_MODULES` and Keras' plain classes
        (`tfapi.UNTRACKED_KERAS_SEGMENTS`: a loss, a callback) do not."""
        return any(base.partition(".")[0] not in tfapi.PLAIN_BASE_MODULES
                   and not _untracked_keras_class(base)
                   for base in self.index.external_bases(class_id))

    def _holders(self) -> Dict[VarKey, str]:
        """Variables a checkpoint or SavedModel can reach -> what holds them: the id of a
        trackable class that stores them on `self`, or MODULE_GLOBAL."""
        held: Dict[VarKey, str] = {}
        index = self.index
        # (assembled from one answer per class and per file: an edit answers again only
        # those that read what it changed, not every class's attributes of the run)
        for class_id in list(index.class_ids()):
            for key in self._class_holds(class_id):
                held.setdefault(key, class_id)
        for path in index.paths():
            for key in self._global_holds(path):
                held.setdefault(key, MODULE_GLOBAL)
        return held

    def _held_by_class(self, class_id: str) -> Tuple[VarKey, ...]:
        """The variables a trackable class stores on `self` (none for another class)."""
        return tuple(self.variables_held_by(class_id)) if self.trackable(class_id) else ()

    def _held_by_globals(self, path: str) -> Tuple[VarKey, ...]:
        """The variables a file's module globals are bound to."""
        fm = self.index.file_at(path)
        return tuple(key for bounds in fm.globals.values() for bound in bounds
                     for key in self.objects.variables_of(bound, fm.path))

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
        index = self.index
        owner = call.function
        while "." in owner and not index.is_class(owner):
            owner = owner.rpartition(".")[0]
        klass = owner if index.is_class(owner) else None
        if call.target is not None and call.target.startswith("self."):
            return klass if klass is not None and self.trackable(klass) else None
        fm = index.function_file(call.function)
        if fm is not None and any(key in self.objects.variables_of(b, fm.path)
                                  for b in index.read(fm).functions[call.function].returns):
            return ESCAPES
        if call.target is None:
            if klass is not None:
                return klass if self.trackable(klass) else None
            return ESCAPES
        return None

    def creation_contexts(self, bound: Bound, path: str) -> FrozenSet[Context]:
        """Strategy contexts where the object a call-bound names was constructed."""
        place = self.call_place(bound, path)
        return self.strategies.contexts_at(*place) if place is not None else frozenset()

    def call_place(self, bound: Bound, path: str) -> Optional[At]:
        """Where the call a call-bound names is made: (path, function, scopes)."""
        found = self._edges_by_span(path).get(bound.span) if bound.span is not None else None
        return (path, *found) if found is not None else None

    def _edges_of(self, path: str) -> Dict[Span, Tuple[Optional[str], Tuple[int, ...]]]:
        return {edge.span: (edge.caller, edge.scopes) for edge in self.index.file_at(path).calls}


def _untracked_keras_class(qname: str) -> bool:
    """Whether a library class is one of Keras' plain (not trackable) classes."""
    if not any(qname.startswith(prefix) for prefix, _ in tfapi.KERAS_FAMILY_PREFIXES):
        return False
    return any(segment in tfapi.UNTRACKED_KERAS_SEGMENTS for segment in qname.split("."))


def _same_items(old: Sequence[Any], new: Sequence[Any]) -> bool:
    """The same objects, in the same order."""
    return len(old) == len(new) and all(a is b for a, b in zip(old, new))


def _equal_items(old: Sequence[Any], new: Sequence[Any]) -> bool:
    return len(old) == len(new) and all(a is b or a == b for a, b in zip(old, new))
