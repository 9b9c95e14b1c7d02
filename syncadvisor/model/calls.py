"""The run's call graph, asked for one call or one function at a time.

`targets(path)` is, for each call of a file that may run project code, the functions it
runs: a project function by name, a class's `__init__`/`build` for a construction, a
method of `self`'s class, or `obj.method()` for an instance of a project class (through
`Objects.instances_of`). A callable handed to a higher-order call (`tf.cond(p, f, g)`) is
a call of it where the higher-order callee runs it: TensorFlow's, or a project function
that forwards it (`FileModel.forwarders`). `callers(function)` is the reverse, found from
the calls that name the function (tables by the name they call), so that asking who
calls one function never resolves the calls of the whole run.
"""
from __future__ import annotations

from typing import Dict, FrozenSet, Iterable, List, Optional, Tuple

from .db import Db
from .facts import BOUND_CALL, BOUND_METHOD, BOUND_NAMES, FileModel
from .index import ProjectIndex, plain_items
from .objects import Objects

# Methods Keras calls for you once a layer or model object exists.
CONSTRUCTION_METHODS = ("__init__", "build")

CallSite = Tuple[str, int]  # (path, index of the call in the file's `calls`)


@plain_items
def calls_by_name(fm: FileModel) -> Iterable[Tuple[object, CallSite]]:
    """The calls of a file that may run project code, by what they name: `f()` and `C()`
    by the qualified name, `self.m()` by ("self", m), `obj.m()` by ("attr", m)."""
    path = fm.path
    for i, edge in enumerate(fm.calls):
        callee = edge.callee
        if not callee.qname:
            if callee.kind == BOUND_CALL and callee.attr:
                yield ("attr", callee.attr), (path, i)
            continue
        if callee.kind == BOUND_CALL:
            yield callee.qname, (path, i)
            if callee.attr:
                yield ("attr", callee.attr), (path, i)
        elif callee.kind == BOUND_METHOD and callee.attr:
            yield ("self", callee.attr), (path, i)


TABLES = (("calls-by-name", calls_by_name),)


def _equal(old: object, new: object) -> bool:
    return old == new


class CallGraph:
    def __init__(self, db: Db, index: ProjectIndex, objects: Objects):
        self.index = index
        self.objects = objects
        self._track = db.track
        self._file_targets = db.query("targets", self._targets_in, {}, same=_equal)
        self._named_callers = db.query("callers", self._callers_by_name, (), same=_equal)
        self._shared_callers = db.query("callers_by_method_name", self._callers_by_method_name,
                                        {}, same=_equal)
        self._reverse = db.query("reverse", self._reverse_table, {})
        self._by_caller = db.query("calls_by_caller", self._calls_by_caller, {})

    def targets(self, path: str, i: int) -> Tuple[str, ...]:
        """The project functions call `i` of `path` may run."""
        return self._file_targets(path).get(i, ())

    def callers(self, function: str) -> Tuple[CallSite, ...]:
        """The calls of the run that may run `function`, in the run's order. A run that
        asks about every file finds them from every call's targets at once; one that
        keeps files up to date (the language server), from the calls that name the
        function, so that an edit resolves again only what named what it changed. Both
        are the calls whose `targets` hold `function`."""
        if self._track:
            return self._named_callers(function)
        return self._reverse().get(function, ())

    def _targets_in(self, path: str) -> Dict[int, Tuple[str, ...]]:
        """Call index -> the project functions that call of `path` may run, for the calls
        that may run any."""
        index = self.index
        fm = index.file_at(path)
        dropped = self._dropped(fm)
        table: Dict[int, Tuple[str, ...]] = {}
        method, is_function, is_class = index.method, index.is_function, index.is_class
        is_method_name = index.is_method_name
        for i, edge in enumerate(fm.calls):
            if i in dropped:
                continue
            callee = edge.callee
            qname, kind = callee.qname, callee.kind
            targets: Tuple[str, ...] = ()
            if qname:
                if kind == BOUND_CALL:
                    if is_function(qname):
                        targets = (qname,)
                    elif is_class(qname):
                        targets = tuple(t for t in (method(qname, m)
                                                    for m in CONSTRUCTION_METHODS) if t)
                elif kind == BOUND_METHOD and callee.attr:
                    fid = method(qname, callee.attr)
                    targets = (fid,) if fid else ()
            if not targets and kind == BOUND_CALL and is_method_name(callee.attr):
                targets = self._instance_callees(fm, i)
            if targets:
                table[i] = targets
        return table

    def _dropped(self, fm: FileModel) -> FrozenSet[int]:
        """The higher-order edges of a file that do not hold: their callee is a project
        function that does not forward its callables (FileModel.higher_order)."""
        if not fm.higher_order:
            return frozenset()
        return frozenset(i for i, (_, wrapper, _) in fm.higher_order.items()
                         if wrapper is not None and not self.index.is_forwarder(wrapper))

    def _instance_callees(self, fm: FileModel, i: int) -> Tuple[str, ...]:
        """`obj.method()` where obj may be an instance of a project class that has a
        method of that name (the caller has checked that some class has one)."""
        callee = fm.calls[i].callee
        receiver = callee.options[0] if callee.options else None
        if receiver is None or (receiver.kind == BOUND_NAMES and not receiver.options):
            return ()  # `len(x)`: a name bound nowhere in the file is no instance
        index = self.index
        targets: List[str] = []
        for cls in self.objects.instances_of(receiver, fm.path):
            if index.is_class(cls) and callee.attr:
                fid = index.method(cls, callee.attr)
                if fid:
                    targets.append(fid)
        return tuple(targets)

    def _reverse_table(self) -> Dict[str, Tuple[CallSite, ...]]:
        table: Dict[str, List[CallSite]] = {}
        for path in self.index.files:
            for i, targets in self._file_targets(path).items():
                for target in targets:
                    table.setdefault(target, []).append((path, i))
        return {fid: tuple(sites) for fid, sites in table.items()}

    def _callers_by_name(self, function: str) -> Tuple[CallSite, ...]:
        index = self.index
        table = index.tables["calls-by-name"]
        names: List[object] = [function]
        owner, _, name = function.rpartition(".")
        found = set()
        if index.is_class(owner):
            if name in CONSTRUCTION_METHODS:
                names.extend(self.objects.subclasses(owner))
            # The calls of a method name (`self.call()`, `layer.call()`) are candidates for
            # every class's method of that name: they are resolved once per name, not once
            # per method (a name defined in thousands of classes, as Keras' `call` is).
            for key in (("self", name), ("attr", name)):
                found.update(self._shared_callers(key).get(function, ()))
        targets = self.targets
        found.update(site for key in names for site in table.get(key)
                     if site not in found and function in targets(*site))
        return tuple(sorted(found, key=lambda site: (index.order(site[0]), site[1])))

    def _callers_by_method_name(self, key: Tuple[str, str]) -> Dict[str, Tuple[CallSite, ...]]:
        """Function -> the calls named by `key` (("self", m) or ("attr", m)) that may run it."""
        table: Dict[str, List[CallSite]] = {}
        targets = self.targets
        for site in self.index.tables["calls-by-name"].get(key):
            for target in targets(*site):
                table.setdefault(target, []).append(site)
        return {fid: tuple(sites) for fid, sites in table.items()}

    def _calls_by_caller(self, path: str) -> Dict[Optional[str], Tuple[int, ...]]:
        """A file's calls by the function that makes them (None: module level)."""
        table: Dict[Optional[str], List[int]] = {}
        for i, edge in enumerate(self.index.file_at(path).calls):
            table.setdefault(edge.caller, []).append(i)
        return {caller: tuple(calls) for caller, calls in table.items()}

    def calls_in(self, path: str, caller: Optional[str]) -> Tuple[int, ...]:
        """The calls `caller` makes in `path` (None: its module-level code)."""
        return self._by_caller(path).get(caller, ())

    def callees(self, function: str) -> List[Tuple[str, CallSite]]:
        """(callee, the call) for each project function `function`'s own calls may run,
        in the order of its calls."""
        fm = self.index.function_file(function)
        if fm is None:
            return []
        targets = self._file_targets(fm.path)
        return [(target, (fm.path, i)) for i in self.calls_in(fm.path, function)
                for target in targets.get(i, ())]
