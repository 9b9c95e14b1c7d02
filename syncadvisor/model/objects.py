"""What a reference may denote, and what calls hand a function: objects followed through
names, attributes, containers, returns and parameters, across the modules of a run.

`objects(bound, path)` is every object a reference in file `path` may denote: a
variable made by a creation call, an instance of a class (with the call that made it),
a function. A parameter denotes what the calls of its function pass for it
(`arguments`), so `calls_of(function)` -- every call that may run a function, with what
each argument hands over -- and `objects` answer each other, in circles where a
function passes its own parameter on; the query engine answers such a circle as its
least fixpoint (`db.py`).
"""
from __future__ import annotations

from typing import Dict, FrozenSet, Iterable, List, Optional, Set, Tuple

from ..records import field, record
from . import tfapi
from .db import Db, Query
from .facts import (BOUND_ATTR, BOUND_CALL, BOUND_CONTAINER, BOUND_ELEMENT, BOUND_ITEM,
                    BOUND_LOCAL, BOUND_METHOD, BOUND_NAMES, BOUND_PARAM, BOUND_QNAME,
                    BOUND_SELF_ATTR,
                    EVERY_ITEM, Bound, CallEdge, Construction, FileModel, Span)
from .index import ProjectIndex, plain_items

_MAX_DEPTH = 8
_UNKNOWN_POSITION = 1 << 16  # past a `*args`: no positional parameter is known to be filled

VarKey = Tuple[str, int]  # (path, index into FileModel.creations)

# What a call hands over, as `FileModel.handovers` records it: (the call's index, -1 for a
# `Construction`; each argument's keyword, "" positional, "*"/"**" starred; what each may
# denote).
Handed = Tuple[int, Tuple[str, ...], Tuple[Optional[Bound], ...]]
# A call that may run a function: what it hands over, its file, and the parameter its
# first positional argument fills (1 where an instance fills `self`).
Caller = Tuple[Handed, str, int]

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


_NOTHING: FrozenSet[Obj] = frozenset()


# --- the tables of calls that hand objects over, one part per file --------------------

def _handed(fm: FileModel) -> Iterable[Tuple[Bound, Handed]]:
    """The calls of a file that hand objects over, constructions first."""
    for made in fm.constructions:
        yield made.callee, (-1, tuple(a.star or a.keyword or "" for a in made.args), made.passed)
    calls = fm.calls
    for handover in fm.handovers:
        yield calls[handover[0]].callee, handover


def handed_by_name(fm: FileModel):
    """`f(x)`, `C(x)`: by the qualified name they call."""
    for callee, handed in _handed(fm):
        if callee.kind == BOUND_CALL and callee.qname:
            yield callee.qname, (handed, fm.path)


def handed_by_self_method(fm: FileModel):
    """`self.m(x)`: by the method's name, with the class."""
    for callee, handed in _handed(fm):
        if callee.kind == BOUND_METHOD and callee.qname and callee.attr:
            yield callee.attr, (callee.qname, handed, fm.path)


def handed_by_method(fm: FileModel):
    """`obj.m(x)` (and `f(x)` where `f` is no project function or class: by `__call__`):
    by the method's name, with the callee."""
    for callee, handed in _handed(fm):
        if callee.kind == BOUND_CALL and callee.options:
            yield callee.attr or "__call__", (callee, handed, fm.path)


def constructions_by_callee(fm: FileModel):
    for construction in fm.constructions:
        if construction.callee.qname and construction.callee.kind == BOUND_CALL:
            yield construction.callee.qname, (construction, fm.path)


@plain_items
def handing(fm: FileModel):
    """The files that hand objects over in calls."""
    if fm.constructions or fm.handovers:
        yield (), fm.path


TABLES = (("handing", handing), ("handed-by-name", handed_by_name),
          ("handed-by-self-method", handed_by_self_method),
          ("handed-by-method", handed_by_method),
          ("constructions-by-callee", constructions_by_callee))


def _equal(old: object, new: object) -> bool:
    return old == new


def same_objects(old: FrozenSet[Obj], new: FrozenSet[Obj]) -> bool:
    """The same objects, each made by the same call (an edit makes its file's calls new
    records: an object made there is another object)."""
    if old != new:
        return False
    made = {(o.kind, o.key): id(o.origin[0]) for o in old if o.origin is not None}
    return made == {(o.kind, o.key): id(o.origin[0]) for o in new if o.origin is not None}


def same_items(old: tuple, new: tuple) -> bool:
    """The same records (by identity) with the same plain values beside them."""
    return len(old) == len(new) and all(
        len(a) == len(b) and all(x is y or (type(x) in _PLAIN and x == y) for x, y in zip(a, b))
        for a, b in zip(old, new))


_PLAIN = (str, int, type(None))


def _same_callers(old: Tuple[Caller, ...], new: Tuple[Caller, ...]) -> bool:
    """The same calls, by identity: what they hand over is the same objects."""
    return len(old) == len(new) and all(
        a[0] is b[0] and a[1] == b[1] and a[2] == b[2] for a, b in zip(old, new))


class Objects:
    """What references denote, and what calls hand functions."""

    def __init__(self, db: Db, index: ProjectIndex):
        self.db = db
        self.index = index
        # path -> id -> the bound of each `objects` key (id(bound), path)
        self._bounds: Dict[str, Dict[int, Bound]] = {}
        self._objects = db.query("objects", self._compute_objects, _NOTHING, same=same_objects)
        self.calls_of = db.query("calls_of", self._calls_of, (), same=_same_callers)
        self.arguments = db.query("arguments", self._arguments, (), same=same_items)
        self._value_callers = db.query("value_callers", self._values, {})
        # One function's part of it: an edit that changes another's keeps what read it.
        self._value_callers_of = db.query("value_callers_of", self._values_of, (),
                                          same=_same_callers)
        self._named_values = db.query("named_values", self._named, {})
        # The calls of parameters (the part of `value_callers` in a circle with
        # `arguments`): the same records while no file's own change, so that an edit
        # elsewhere does not answer the circle again.
        self._parameter_calls = db.query("parameter_calls", self._of_parameters, (),
                                         same=same_items)
        self._values_in = db.query("values_in", self._values_by_file, ({}, {}, []))
        self._subclasses = db.query("subclasses", self._subclass_table, {}, same=_equal)
        self._constructions_by_span = db.query("constructions_by_span", self._by_span, {})

    def dead(self, path: str) -> List[Tuple[Query, Tuple[int, str]]]:
        """The answers about `path`'s references, once its model is replaced: about
        objects that are gone (`Db.changed`)."""
        query = self._objects
        return [(query, (i, path)) for i in self._bounds.get(path, ())
                if (i, path) in query.memo]

    def forget(self, path: str) -> None:
        """`path`'s file was replaced: its references are no longer asked about."""
        self._bounds.pop(path, None)

    # --- what a reference may denote ------------------------------------------------

    def objects(self, bound: Bound, path: str) -> FrozenSet[Obj]:
        # What needs no other answer is found here, not kept (most references are a
        # variable's creation, a local, a library name or one other binding).
        kind = bound.kind
        if bound.creation is not None:
            return frozenset((Obj(OBJ_VAR, (path, bound.creation)),))
        if kind == BOUND_NAMES:
            options = bound.options
            if len(options) < 2:
                return self.objects(options[0], path) if options else _NOTHING
        elif kind == BOUND_LOCAL:
            return _NOTHING
        elif kind == BOUND_QNAME:
            qname = bound.qname
            index = self.index
            if not qname:
                return _NOTHING
            if not index.is_function(qname) and not index.module_global(qname):
                return _NOTHING
        elif kind == BOUND_CALL and bound.qname:
            qname = bound.qname
            index = self.index
            if not index.is_function(qname) and qname not in tfapi.FUNCTION_WRAPPERS:
                if index.is_class(qname) or qname.rpartition(".")[2][:1].isupper():
                    return frozenset((Obj(OBJ_INSTANCE, qname, (bound, path)),))
                return _NOTHING
        key = (id(bound), path)
        query = self._objects
        if self.db.track:  # (an answer checked in a new revision is answered again)
            self._keep(bound, path)
            return query(*key)
        found = query.memo.get(key)
        if found is None:
            self._keep(bound, path)
            return self.db.ask(query, key)
        return found

    def _keep(self, bound: Bound, path: str) -> None:
        kept = self._bounds.get(path)
        if kept is None:
            kept = self._bounds[path] = {}
        kept[id(bound)] = bound

    def _compute_objects(self, bound_id: int, path: str) -> FrozenSet[Obj]:
        bound = self._bounds[path][bound_id]
        self.db.depend(("file", path))
        found: Set[Obj] = set()
        self._collect(bound, path, found)
        return frozenset(found)

    def _collect(self, bound: Bound, path: str, found: Set[Obj]) -> None:
        index = self.index
        kind = bound.kind
        if bound.creation is not None:
            found.add(Obj(OBJ_VAR, (path, bound.creation)))
            return
        qname = bound.qname
        if kind in (BOUND_CALL, BOUND_ATTR) and qname:
            self._qname_result(bound, path, found)
            if kind == BOUND_CALL or index.is_function(qname) or index.is_class(qname):
                return
        if kind == BOUND_QNAME and qname:
            if index.is_function(qname):
                found.add(Obj(OBJ_FUNCTION, qname))
            globals_ = index.module_global(qname)
            if globals_:
                module_path = index.module_path(qname)
                for b in globals_:
                    found |= self.objects(b, module_path)
            return
        if kind == BOUND_CALL and bound.attr and bound.options:
            # obj.method(): whatever the method returns, for project classes.
            for obj in self.objects(bound.options[0], path):
                if obj.kind == OBJ_INSTANCE and index.is_class(str(obj.key)):
                    self._returns(index.method(str(obj.key), bound.attr), found)
            return
        if kind == BOUND_METHOD and qname and bound.attr:
            self._returns(index.method(qname, bound.attr), found)
            return
        if kind in (BOUND_NAMES, BOUND_CONTAINER, BOUND_ELEMENT):
            for option in bound.options:
                found |= self.objects(option, path)
            return
        if kind == BOUND_ITEM and bound.attr and bound.options:
            for item, item_path in self._items(bound.options[0], int(bound.attr), path, 0):
                found |= self.objects(item, item_path)
            return
        if kind == BOUND_SELF_ATTR and qname and bound.attr:
            self._attr_of_class(qname, bound.attr, found)
            return
        if kind == BOUND_PARAM and qname and bound.attr:
            arguments = self.arguments(qname, bound.attr)
            for argument, argument_path, _ in arguments:
                found |= self.objects(argument, argument_path)
            if not arguments:
                # No call seen (a library's entry point): its annotation names the class
                # of what it is given, as a class's constructor would, with no origin.
                annotated = self._annotation(qname, bound.attr)
                if annotated is not None:
                    found.add(Obj(OBJ_INSTANCE, annotated))
            return
        if kind == BOUND_ATTR and bound.attr and bound.options:
            for obj in self.objects(bound.options[0], path):
                if obj.kind == OBJ_INSTANCE and index.is_class(str(obj.key)):
                    self._attr_of_class(str(obj.key), bound.attr, found)

    def _annotation(self, function: str, param: str) -> Optional[str]:
        """The class a parameter's annotation names: a project class, or a library one
        (a capitalised last segment, as for a call), else None (`int`, `Optional[X]`)."""
        fm = self.index.function_file(function)
        if fm is None:
            return None
        annotated = fm.functions[function].annotations.get(param)
        if annotated is None or "." not in annotated:
            return None
        library_class = annotated.rpartition(".")[2][:1].isupper() and \
            not self.index.is_function(annotated)
        if self.index.is_class(annotated) or library_class:
            return annotated
        return None

    def _returns(self, fid: Optional[str], found: Set[Obj]) -> None:
        """What a project function may return."""
        fm = self.index.function_file(fid)
        if fm is None:
            return
        self.index.read(fm)
        for b in fm.functions[fid].returns:  # type: ignore[index]
            found |= self.objects(b, fm.path)

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
        elif bound.kind == BOUND_CALL and index.is_function(bound.qname):
            returns = self._function_returns(bound.qname)
        elif bound.kind == BOUND_METHOD and bound.qname and bound.attr:
            returns = self._function_returns(index.method(bound.qname, bound.attr))
        items: List[Tuple[Bound, str]] = []
        for b, p in returns:
            items.extend(self._items(b, i, p, depth + 1))
        return items

    def _function_returns(self, fid: Optional[str]) -> List[Tuple[Bound, str]]:
        fm = self.index.function_file(fid)
        if fm is None:
            return []
        self.index.read(fm)
        return [(b, fm.path) for b in fm.functions[fid].returns]  # type: ignore[index]

    def _attr_of_class(self, class_id: str, attr: str, found: Set[Obj]) -> None:
        index = self.index
        for cid in index.mro(class_id):
            fm = index.class_file(cid)
            info = index.klass(cid)
            if fm is None or info is None:
                continue
            index.read(fm)
            for b in info.attrs.get(attr, ()):
                found |= self.objects(b, fm.path)
        method = index.method(class_id, attr)
        if method:
            found.add(Obj(OBJ_FUNCTION, method))

    def _qname_result(self, bound: Bound, path: str, found: Set[Obj]) -> None:
        """The result of calling `bound.qname` (BOUND_CALL), or the name itself (BOUND_ATTR)."""
        index = self.index
        qname = bound.qname or ""
        if bound.kind == BOUND_ATTR:
            if index.is_function(qname):
                found.add(Obj(OBJ_FUNCTION, qname))
            return
        if index.is_function(qname):
            self._returns(qname, found)
        elif index.is_class(qname):
            found.add(Obj(OBJ_INSTANCE, qname, (bound, path)))
        elif qname in tfapi.FUNCTION_WRAPPERS:
            for option in bound.options:
                found |= self.objects(option, path)
        elif qname.rpartition(".")[2][:1].isupper():
            found.add(Obj(OBJ_INSTANCE, qname, (bound, path)))  # an instance of a library class

    def functions_of(self, bound: Bound, path: str) -> List[str]:
        return [str(o.key) for o in self.objects(bound, path) if o.kind == OBJ_FUNCTION]

    def variables_of(self, bound: Bound, path: str) -> List[VarKey]:
        return [o.key for o in self.objects(bound, path) if o.kind == OBJ_VAR]  # type: ignore[misc]

    def instances_of(self, bound: Bound, path: str) -> List[str]:
        return [str(o.key) for o in self.objects(bound, path) if o.kind == OBJ_INSTANCE]

    def constructions(self, bound: Bound, path: str) -> List[Obj]:
        return [o for o in self.objects(bound, path) if o.kind == OBJ_INSTANCE and o.origin]

    # --- what calls hand a function ----------------------------------------------------

    def arguments_for(self, function: str, param: str) -> List[Tuple[Bound, str]]:
        return [(passed, path) for passed, path, _ in self.arguments(function, param)]

    def arguments_with_calls(self, function: str, param: str
                             ) -> List[Tuple[Bound, str, Optional[CallEdge]]]:
        """`arguments_for`, each with the call edge that passes it where the call is one
        (None for a construction, a `partial` or a `strategy.run(fn, args=...)`)."""
        return [(passed, path, None if edge < 0 else self.index.file_at(path).calls[edge])
                for passed, path, edge in self.arguments(function, param)]

    def _arguments(self, function: str, param: str) -> Tuple[Tuple[Bound, str, int], ...]:
        """What the calls of a function pass for one of its parameters, as far as the
        model follows them: calls of a plain function by name, of a method on `self` or
        on an instance of its class, constructions of its class or of a subclass that
        inherits its `__init__`, calls through `functools.partial` and `strategy.run(fn,
        args=...)`; each argument a name, an attribute, a call or a container of them."""
        fm = self.index.function_file(function)  # (its signature is the ("fn", id) input)
        if fm is None:
            return ()
        params = fm.functions[function].params
        if param not in params:
            return ()
        # Positional arguments fill the names before the first starred one.
        positional = next((i for i, p in enumerate(params) if p.startswith("*")), len(params))
        found: List[Tuple[Bound, str, int]] = []
        for (edge, keywords, passed_all), path, shift in self.calls_of(function):
            position = shift
            for keyword, passed in zip(keywords, passed_all):
                if keyword == "":
                    hit = position < positional and params[position] == param
                    position += 1
                elif keyword[0] == "*":
                    if keyword == "*":
                        position = positional  # past a `*args`, positions are unknown
                    continue
                else:
                    hit = keyword == param
                if hit and passed is not None:
                    found.append((passed, path, edge))
        return tuple(found)

    def _calls_of(self, function: str) -> Tuple[Caller, ...]:
        """The calls that may run `function`, each with the parameter its first positional
        argument fills."""
        index = self.index
        by_name = index.tables["handed-by-name"]
        calls: List[Caller] = []
        if index.is_function(function) or index.is_class(function):
            calls.extend((handed, path, 0) for handed, path in by_name.get(function))
        owner, _, name = function.rpartition(".")
        if index.is_class(owner):
            bound_self = self._bound_self(function)
            if name == "__init__":
                for cls in self._constructed_by(function):
                    calls.extend((handed, path, 1) for handed, path in by_name.get(cls))
            method = index.method
            for cls, handed, path in index.tables["handed-by-self-method"].get(name):
                if method(cls, name) == function:
                    calls.append((handed, path, bound_self))
            for callee, handed, path in index.tables["handed-by-method"].get(name):
                if name == "__call__" or index.is_function(callee.qname) or \
                        index.is_class(callee.qname):
                    continue
                classes = self.instances_of(callee.options[0], path)
                if any(method(cls, name) == function for cls in classes if index.is_class(cls)):
                    calls.append((handed, path, bound_self))
        calls.extend(self._value_callers_of(function))
        return tuple(calls)

    def _values_of(self, function: str) -> Tuple[Caller, ...]:
        return self._named_values().get(function, ()) + \
            self._value_callers().get(function, ())

    def _constructed_by(self, init: str) -> List[str]:
        """The constructed classes whose `__init__` is `init`: its class and the
        subclasses that inherit it, in the order the run first constructs them."""
        index = self.index
        owner = init.rpartition(".")[0]
        by_name = index.tables["handed-by-name"]
        classes = [c for c in self._subclasses().get(owner, ()) if by_name.get(c) and
                   index.method(c, "__init__") == init]
        return sorted(classes, key=by_name.rank)

    def subclasses(self, class_id: str) -> List[str]:
        """The project classes whose MRO holds `class_id`, itself included."""
        return self._subclasses().get(class_id, [])

    def _subclass_table(self) -> Dict[str, List[str]]:
        """Class -> the project classes whose MRO holds it, itself included."""
        table: Dict[str, List[str]] = {}
        for cid in self.index.class_ids():
            for ancestor in self.index.mro(cid):
                table.setdefault(ancestor, []).append(cid)
        return table

    def _bound_self(self, function: str) -> int:
        """How many parameters an instance or class fills before the arguments: none for
        a static method."""
        fm = self.index.function_file(function)
        return 0 if fm is not None and fm.functions[function].static else 1

    def _values(self) -> Dict[str, Tuple[Caller, ...]]:
        """Function id -> the calls of parameters that run it (`def train(step_fn, acc):
        step_fn(acc)`), once per function passed for the parameter: those ask what calls
        pass, which asks this, so they are a query of their own. With the calls of
        values that names say are the function (`_named`), `value_callers_of`."""
        table: Dict[str, List[Caller]] = {}
        seen: Set[Tuple[int, str, int]] = set()
        for handed, path, param in self._parameter_calls():
            for passed, passed_path in self.arguments_for(str(param.qname), str(param.attr)):
                for fid, shift in self.callables(passed, passed_path, 0):
                    if (id(handed), fid, shift) not in seen:
                        seen.add((id(handed), fid, shift))
                        table.setdefault(fid, []).append((handed, path, shift))
        return {fid: tuple(calls) for fid, calls in table.items()}

    def _named(self) -> Dict[str, Tuple[Caller, ...]]:
        """Function id -> the calls of values that names say are it (`fn(x)`,
        `strategy.run(fn, ...)`, `partial(fn, ...)`, `callables`): those of every file's
        values by name first, then those of functions kept on `self` (`self.step_fn(x)`),
        made of each file's own (`_values_in`)."""
        direct: Dict[str, List[Caller]] = {}
        stored: Dict[str, List[Caller]] = {}
        for path in self.index.tables["handing"].get(()):
            named, kept, _ = self._values_in(path)
            for fid, calls in named.items():
                direct.setdefault(fid, []).extend(calls)
            for fid, calls in kept.items():
                stored.setdefault(fid, []).extend(calls)
        for fid, calls in stored.items():
            direct.setdefault(fid, []).extend(calls)
        return {fid: tuple(calls) for fid, calls in direct.items()}

    def _of_parameters(self) -> Tuple[Tuple[Handed, str, Bound], ...]:
        """The calls of parameters in every file, with the parameter."""
        return tuple(call for path in self.index.tables["handing"].get(())
                     for call in self._values_in(path)[2])

    def _values_by_file(self, path: str) -> Tuple[Dict[str, List[Caller]],
                                                  Dict[str, List[Caller]],
                                                  List[Tuple[Handed, str, Bound]]]:
        """The calls of values in one file: (by name, of functions kept on `self`, of
        parameters)."""
        index = self.index
        fm = index.file_at(path)
        named: Dict[str, List[Caller]] = {}
        kept: Dict[str, List[Caller]] = {}
        params: List[Tuple[Handed, str, Bound]] = []
        for callee, handed in _handed(fm):
            if callee.kind == BOUND_METHOD and callee.qname and callee.attr:
                cls, attr = callee.qname, callee.attr
                owner = index.class_file(cls)
                if owner is None or index.method(cls, attr) is not None:
                    continue
                for bound in index.class_attr(cls, attr):  # `self.step_fn(x)`
                    for fid, shift in self.callables(bound, owner.path, 0):
                        kept.setdefault(fid, []).append((handed, path, shift))
                continue
            if callee.kind != BOUND_CALL or not callee.options or \
                    callee.attr not in (None, "__call__") or \
                    index.is_function(callee.qname) or index.is_class(callee.qname):
                continue
            target = callee.options[0]
            if target.kind == BOUND_NAMES and len(target.options) == 1:
                target = target.options[0]
            if target.kind == BOUND_PARAM and target.qname and target.attr:
                params.append((handed, path, target))
            else:
                for fid, shift in self.callables(target, path, 0):
                    named.setdefault(fid, []).append((handed, path, shift))
        return named, kept, params

    def callables(self, bound: Bound, path: str, depth: int) -> List[Tuple[str, int]]:
        """The project functions a callable may be, as far as names say, each with the
        parameter a call's first positional argument fills: a function by name, a method
        of `self`, a function kept on `self`, `tf.function(fn)`, `functools.partial(fn,
        a)` (its positional arguments fill the first ones)."""
        if depth > _MAX_DEPTH:
            return []
        index = self.index
        kind, qname = bound.kind, bound.qname
        if kind == BOUND_NAMES:
            return [c for option in bound.options for c in self.callables(option, path, depth + 1)]
        if kind == BOUND_QNAME and qname:
            if index.is_function(qname):
                return [(qname, 0)]
            bounds = index.module_global(qname)
            if bounds:
                module_path = index.module_path(qname)
                return [c for b in bounds for c in self.callables(b, module_path, depth + 1)]
            return []
        if kind == BOUND_SELF_ATTR and qname and bound.attr:
            fid = index.method(qname, bound.attr)
            if fid:
                return [(fid, self._bound_self(fid))]
            owner = index.class_file(qname)
            if owner is None:
                return []
            return [c for b in index.class_attr(qname, bound.attr)
                    for c in self.callables(b, owner.path, depth + 1)]
        if kind == BOUND_CALL and qname and bound.options:
            if qname in tfapi.PARTIAL_CALLS:
                made = self.construction_at(path, bound.span) if bound.span else None
                if made is None or not made.callee.options:
                    return []
                given = 0
                for argument in made.args:
                    if argument.star == "*":
                        given = _UNKNOWN_POSITION
                    elif argument.keyword is None and not argument.star:
                        given += 1
                return [(fid, shift + given) for fid, shift in
                        self.callables(made.callee.options[0], path, depth + 1)]
            if qname in tfapi.FUNCTION_WRAPPERS:
                return self.callables(bound.options[0], path, depth + 1)
        return []

    # --- constructions -------------------------------------------------------------------

    def constructions_of(self, class_id: str) -> List[Tuple[Construction, str]]:
        """The calls in this run that construct an instance of a project class or of one
        of its subclasses (as far as the model records calls: `Construction`), grouped by
        the class constructed, in the order the run first constructs each."""
        index = self.index
        table = index.tables["constructions-by-callee"]
        found: List[Tuple[Construction, str]] = []
        for cls in sorted((c for c in self._subclasses().get(class_id, ()) if table.get(c)),
                          key=table.rank):
            found.extend(table.get(cls))
        return found

    def construction_at(self, path: str, span: Span) -> Optional[Construction]:
        return self._constructions_by_span(path).get(span)

    def _by_span(self, path: str) -> Dict[Span, Construction]:
        fm = self.index.file_at(path)
        return {c.span: c for c in fm.constructions}
