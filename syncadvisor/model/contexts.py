"""Which strategy a piece of code runs under, across the modules of one run.

A strategy is seen where it is constructed (`tf.distribute.MirroredStrategy()`
under any alias, possibly behind a function that returns it, a module global
imported elsewhere, or `self.strategy`), and it applies inside
`with <strategy>.scope():` blocks. A function's context is the union of the
contexts it is called from, through calls, class instantiations and imports;
a function nobody in this run calls has an unknown context.
"""
from __future__ import annotations

import weakref
from collections import defaultdict, deque
from typing import (Callable, Collection, Dict, FrozenSet, Iterable, Iterator, List, Optional,
                    Set, Tuple)

from ..findings import Related
from ..records import record
from . import tfapi
from .facts import (BOUND_ATTR, BOUND_CALL, BOUND_METHOD, BOUND_NAMES, BOUND_PARAM, BOUND_QNAME,
                    BOUND_SELF_ATTR, Bound, CallEdge, ClassInfo, Construction, CreatorScope,
                    FileModel, Span)

_MAX_DEPTH = 8
_UNKNOWN_POSITION = 1 << 16  # past a `*args`: no positional parameter is known to be filled
_REPLICA_METHODS = frozenset().union(*tfapi.KERAS_REPLICA_METHODS.values())
_KERAS_PREFIXES = tuple(prefix for prefix, _ in tfapi.KERAS_FAMILY_PREFIXES)
# Methods Keras calls for you once a layer or model object exists.
_CONSTRUCTION_METHODS = ("__init__", "build")

# What a call hands over, as `FileModel.handovers` records it: (the call's index, -1 for a
# `Construction`; each argument's keyword, "" positional, "*"/"**" starred; what each may
# denote).
Handed = Tuple[int, Tuple[str, ...], Tuple[Optional[Bound], ...]]

# path -> [(index of a call in the file's `calls`, the project functions it runs)]
CalleeTable = Dict[str, List[Tuple[int, List[str]]]]

# A rule context's record of a phrase of a message and the place it names.
Note = Callable[[str, Related], None]

# What classes an object may be an instance of, and whether that answer is final (not one
# asked from inside a cycle through the object): `ProjectIndex.set_instances`.
Instances = Callable[[Bound, str], Tuple[List[str], bool]]


@record(frozen=True)
class Creator:
    """A variable creator in effect (`tf.variable_creator_scope(creator)`)."""

    text: str  # as written, e.g. "replica_local_creator"
    path: str
    line: int  # of the `variable_creator_scope` call
    ops: Optional[tuple]  # its program (creators.py); None: one the run cannot read


@record(frozen=True)
class StrategyOption:
    kind: str  # a tfapi strategy kind, or tfapi.ANY_STRATEGY (or _CURRENT, while linking)
    path: Optional[str] = None
    line: Optional[int] = None
    # A project subclass of the strategy class (`Replicator` for `class Replicator(tf.
    # distribute.MirroredStrategy)`), and the creators its own `scope()` enters inside
    # the strategy's, innermost (first to run) first.
    subclass: Optional[str] = None
    creators: Tuple[Creator, ...] = ()
    # For _CURRENT: the `tf.distribute.get_strategy()` call, whose contexts say which.
    at: Optional[Span] = None


# The strategy `tf.distribute.get_strategy()` returns where it is called: whatever scope
# its callers are in, the default strategy outside any. Settled once contexts propagate
# (`ContextAnalysis._settle_current`); never seen outside this module.
_CURRENT = "the current strategy"


@record(frozen=True)
class Strategy:
    """A strategy object as the code names it, with the kinds it may be."""

    text: str  # e.g. "strategy"
    options: Tuple[StrategyOption, ...]

    @property
    def kinds(self) -> FrozenSet[str]:
        return frozenset(o.kind for o in self.options)


NO_STRATEGY = "none"  # the default strategy: visibly outside any scope
UNKNOWN = "unknown"  # no caller in this run
IN_STRATEGY = "strategy"


@record(frozen=True)
class Context:
    kind: str
    strategy: Optional[Strategy] = None
    # Variable creators entered inside the strategy's scope (or, outside any, around the
    # code), innermost (first to run) first: a variable created here goes through them
    # before the strategy sees it. Those entered outside the scope run after the strategy
    # has validated the choice, and are not kept.
    creators: Tuple[Creator, ...] = ()

    def with_creators(self, inner: Tuple[Creator, ...]) -> "Context":
        """This context with `inner` entered inside it. A creator already in effect is not
        entered twice: a recursive call under a creator gives its callee finitely many
        contexts."""
        if not inner:
            return self
        added = tuple(c for c in inner if c not in self.creators)
        return Context(self.kind, self.strategy, added + self.creators) if added else self


CTX_NONE = Context(NO_STRATEGY)
CTX_UNKNOWN = Context(UNKNOWN)


class ProjectIndex:
    """Modules, functions and classes of every file in the run, by qualified name."""

    def __init__(self, files: Iterable[FileModel]):
        self.files: List[FileModel] = list(files)
        self.modules: Dict[str, FileModel] = {}
        self.functions: Dict[str, FileModel] = {}
        self.classes: Dict[str, ClassInfo] = {}
        self.class_files: Dict[str, FileModel] = {}
        # Functions that hand a parameter to a higher-order call (FileModel.forwarders).
        self.forwarders: Set[str] = set()
        # Memos: linking asks the same few classes about the same methods again and
        # again (every call `obj.m()` of the run).
        self._mro: Dict[str, List[str]] = {}
        self._method: Dict[Tuple[str, str], Optional[str]] = {}
        self._constructions_of: Dict[str, List[Tuple[Construction, str]]] = {}
        self._constructions: Optional[Tuple[Dict[str, List[Tuple[Construction, str]]],
                                            Dict[Tuple[str, Span], Construction]]] = None
        # The calls that hand objects over (`_grouped_calls`), made when first asked for.
        self._by_name: Optional[Dict[str, List[Tuple[Handed, str]]]] = None
        self._by_self_method: Optional[Dict[str, List[Tuple[str, Handed, str]]]] = None
        self._method_calls: Dict[str, List[Tuple[Bound, Handed, str]]] = defaultdict(list)
        self._value_calls: List[Tuple[Bound, Handed, str]] = []
        self._inits: Optional[Dict[str, List[str]]] = None
        self._values: Optional[Dict[str, List[Tuple[Handed, str, int]]]] = None
        self._values_done = False  # (`_values` is filled while it is asked for)
        self._calls_memo: Dict[str, List[Tuple[Handed, str, int]]] = {}
        self._instances: Optional[Callable[[], Optional[Instances]]] = None
        self._asking: Set[Tuple[str, str]] = set()  # parameters being followed
        self._by_path: Optional[Dict[str, FileModel]] = None
        self._following = False  # while calls of parameters are added to `_calls_into`
        for fm in self.files:
            self.modules.setdefault(fm.module, fm)
            if fm.forwarders:
                self.forwarders.update(fm.forwarders)
            for fid in fm.functions:
                self.functions[fid] = fm
            for cid, info in fm.classes.items():
                self.classes[cid] = info
                self.class_files[cid] = fm

    def module_global(self, qname: str) -> Optional[List[Bound]]:
        """Bindings of `pkg.mod.name` when `pkg.mod` is a module of this run."""
        module, _, name = qname.rpartition(".")
        fm = self.modules.get(module)
        if fm is None:
            return None
        return fm.globals.get(name)

    def mro(self, class_id: str) -> List[str]:
        """The class and its project base classes, nearest first (not to be changed)."""
        order = self._mro.get(class_id)
        if order is None:
            order = self._mro[class_id] = self._linearised(class_id)
        return order

    def _linearised(self, class_id: str) -> List[str]:
        order: List[str] = []
        queue = deque([class_id])
        while queue and len(order) < 32:
            cid = queue.popleft()
            if cid in order or cid not in self.classes:
                continue
            order.append(cid)
            queue.extend(self.base_classes(cid))
        return order

    def external_bases(self, class_id: str) -> List[str]:
        """Qualified names of the non-project classes a project class derives from, as
        named outside the project (`external_name`)."""
        result: List[str] = []
        for cid in self.mro(class_id):
            result.extend(b for b in self.base_classes(cid) if b not in self.classes)
        return result

    def base_classes(self, class_id: str) -> List[str]:
        """A project class's bases, each followed through the project's modules."""
        classes = self.classes
        return [b if b in classes else self.external_name(b) for b in classes[class_id].bases]

    def external_name(self, qname: str) -> str:
        """What a name reached through the project's own modules stands for: `pkg.compat.
        layers.Layer`, where `pkg/compat.py` does `from tf_keras import *` (or `import
        tf_keras as keras`, reached as `pkg.compat.keras.layers.Layer`), is `tf_keras.
        layers.Layer`. A name the module binds itself is followed through its first
        binding; one it does not, through its first star import. A name of the project's
        own (a class, a function) or outside the project stays as it is."""
        for _ in range(_MAX_DEPTH):
            followed = self._followed(qname, self._module_prefix(qname))
            if followed is None:
                return qname
            qname = followed
        return qname

    def _module_prefix(self, qname: str) -> Optional[str]:
        """The longest module of the index that `qname` is a name in."""
        modules = self.modules
        parts = qname.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:cut])
            if module in modules:
                return module
        return None

    def _followed(self, qname: str, module: Optional[str]) -> Optional[str]:
        """`qname`, a name in `module` of the index, one binding further; None where
        it goes no further."""
        if module is None or module not in self.modules:
            return None
        fm = self.modules[module]
        rest = qname[len(module) + 1:].split(".")
        name = rest[0]
        if name in fm.globals:
            target = fm.exports.get(name)
        else:
            target = f"{fm.star_imports[0]}.{name}" if fm.star_imports else None
        if target is None:
            return None
        followed = ".".join([target] + rest[1:])
        return None if followed == qname else followed

    def _followed_names(self) -> Iterator[str]:
        """The names whose meaning linking may take from another module (`external_name`),
        where it can change what the rules see: the bases of the classes Keras may run
        per replica (a method of `tfapi.KERAS_REPLICA_METHODS`) or that create variables,
        and of their project ancestors; the callees of function-style creations; and, in
        a file that calls a creation method on an object (`dense.add_weight(...)`), the
        classes it instantiates. Other names (a helper's class, a call of a function)
        would cost a parse of the module they lead into for nothing the rules read."""
        interesting: Set[str] = set()
        for fm in self.files:
            for cid, info in fm.classes.items():
                if _REPLICA_METHODS.intersection(info.methods):
                    interesting.add(cid)
            receivers = False
            for creation in fm.creations:
                if creation.callee:
                    yield creation.callee
                if creation.klass:
                    interesting.add(creation.klass)
                elif creation.function:
                    owner = creation.function.rpartition(".")[0]
                    if owner in self.classes:
                        interesting.add(owner)
                receivers = receivers or creation.receiver is not None
            if receivers:
                for edge in fm.calls:
                    qname = edge.callee.qname
                    if qname and edge.callee.kind == BOUND_CALL and \
                            qname.rpartition(".")[2][:1].isupper():
                        yield qname
        for cid in interesting:
            for ancestor in self.mro(cid):
                yield from self.classes[ancestor].bases

    def modules_reached(self, unmodelled: Collection[str]) -> Set[str]:
        """The modules among `unmodelled` (of files in the run that are not in the index)
        that the names linking follows (`_followed_names`) lead into, directly or through
        modules of the index: those whose bindings `external_name` would need."""
        reached: Set[str] = set()
        if not unmodelled:
            return reached
        modules = self.modules
        # Module names have at most this many dots: no longer prefix is worth a lookup.
        depth = max(m.count(".") for m in (*modules, *unmodelled)) + 1
        seen: Set[str] = set()
        for qname in self._followed_names():
            if qname.startswith(_KERAS_PREFIXES):
                continue  # a Keras name: its name says what it is (checking Keras itself)
            for _ in range(_MAX_DEPTH):
                if qname in seen:
                    break
                seen.add(qname)
                parts = qname.split(".")
                module = None
                for cut in range(min(len(parts) - 1, depth), 0, -1):
                    prefix = ".".join(parts[:cut])
                    if prefix in unmodelled:
                        reached.add(prefix)
                    if prefix in modules or prefix in unmodelled:
                        module = prefix
                        break
                followed = self._followed(qname, module)
                if followed is None:
                    break
                qname = followed
        return reached

    def method(self, class_id: str, name: str) -> Optional[str]:
        key = (class_id, name)
        if key in self._method:
            return self._method[key]
        found = None
        for cid in self.mro(class_id):
            fid = f"{cid}.{name}"
            if fid in self.functions:
                found = fid
                break
        self._method[key] = found
        return found

    def arguments_for(self, function: str, param: str) -> List[Tuple[Bound, str]]:
        return [(passed, path) for passed, path, _ in self._arguments(function, param)]

    def arguments_with_calls(self, function: str, param: str
                             ) -> List[Tuple[Bound, str, Optional[CallEdge]]]:
        """`arguments_for`, each with the call edge that passes it where the call is one
        (None for a construction, a `partial` or a `strategy.run(fn, args=...)`)."""
        found: List[Tuple[Bound, str, Optional[CallEdge]]] = []
        for passed, path, edge in self._arguments(function, param):
            if edge < 0:
                found.append((passed, path, None))
                continue
            found.append((passed, path, self.file_at(path).calls[edge]))
        return found

    def file_at(self, path: str) -> FileModel:
        """The model of the run's file at `path`."""
        if self._by_path is None:
            self._by_path = {fm.path: fm for fm in self.files}
        return self._by_path[path]

    def _arguments(self, function: str, param: str) -> List[Tuple[Bound, str, int]]:
        """What the calls of a function pass for one of its parameters, as far as the
        model follows them (`Construction` records): calls of a plain function by name,
        of a method on `self` or on an instance of its class (`instances`, once set),
        constructions of its class or of a subclass that inherits its `__init__`, calls
        through `functools.partial` and `strategy.run(fn, args=...)`; each argument a
        name, an attribute, a call or a container of them."""
        fm = self.functions.get(function)
        if fm is None:
            return []
        params = fm.functions[function].params
        if param not in params or (function, param) in self._asking:
            return []  # (a function called through its own parameter: what is known so far)
        # Positional arguments fill the names before the first starred one.
        positional = next((i for i, p in enumerate(params) if p.startswith("*")), len(params))
        found: List[Tuple[Bound, str, int]] = []
        self._asking.add((function, param))
        try:
            calls = self._calls_of(function)
        finally:
            self._asking.discard((function, param))
        for (edge, keywords, passed_all), path, shift in calls:
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
        return found

    def set_instances(self, instances: Instances) -> None:
        """Learn what classes an object may be an instance of (a `UsageAnalysis`'s bound
        method), to follow `obj.method(x)` into the method's parameters. Held weakly: the
        index must not keep its analysis alive in a reference cycle."""
        self._instances = weakref.WeakMethod(instances)

    def _calls_of(self, function: str) -> List[Tuple[Handed, str, int]]:
        """The calls that may run `function`, each with the parameter its first positional
        argument fills (1 where the instance fills `self`). Kept once every table it reads
        is whole and every receiver's classes are final (not asked from inside a cycle
        through that receiver): asked for again for each parameter of each reference."""
        calls = self._calls_memo.get(function)
        if calls is not None:
            return calls
        final = True
        by_name, by_self_method = self._grouped_calls()
        calls = [(handed, path, 0) for handed, path in by_name.get(function, ())]
        owner, _, name = function.rpartition(".")
        if owner in self.classes:
            bound_self = self._bound_self(function)
            if name == "__init__":
                for cls in self._constructed_by_init().get(function, ()):
                    calls.extend((handed, path, 1) for handed, path in by_name[cls])
            method = self.method
            for cls, handed, path in by_self_method.get(name, ()):
                if method(cls, name) == function:
                    calls.append((handed, path, bound_self))
            instances = self._instances() if self._instances is not None else None
            if instances is not None and not self._following:
                for receiver, handed, path in self._method_calls.get(name, ()):
                    classes, whole = instances(receiver, path)
                    final = final and whole
                    if any(method(cls, name) == function
                           for cls in classes if cls in self.classes):
                        calls.append((handed, path, bound_self))
        calls.extend(self._calls_of_values().get(function, ()))
        if final and self._values_done and self._instances is not None and \
                not self._following:
            self._calls_memo[function] = calls
        return calls

    def _grouped_calls(self) -> Tuple[Dict[str, List[Tuple[Handed, str]]],
                                      Dict[str, List[Tuple[str, Handed, str]]]]:
        """The calls that hand objects over, grouped once by what they name: (callee's
        qualified name -> calls, method name -> `self.<method>(...)` calls with the class);
        `obj.<method>(...)` calls go to `_method_calls`, calls of a callable value
        (`fn(x)`, `strategy.run(fn, ...)`) to `_value_calls`."""
        if self._by_name is not None and self._by_self_method is not None:
            return self._by_name, self._by_self_method
        by_name: Dict[str, List[Tuple[Handed, str]]] = defaultdict(list)
        by_self_method: Dict[str, List[Tuple[str, Handed, str]]] = defaultdict(list)
        method_calls, value_calls = self._method_calls, self._value_calls
        functions, classes = self.functions, self.classes

        def group(callee: Bound, handed: Handed, path: str) -> None:
            qname, attr, kind = callee.qname, callee.attr, callee.kind
            if kind == BOUND_METHOD:
                if qname and attr:
                    by_self_method[attr].append((qname, handed, path))
            elif kind != BOUND_CALL:
                return
            elif qname in functions or qname in classes:
                by_name[qname].append((handed, path))
            elif attr in (None, "__call__"):
                if callee.options:
                    value_calls.append((callee.options[0], handed, path))
            elif callee.options:
                method_calls[attr].append((callee.options[0], handed, path))

        for fm in self.files:
            path = fm.path
            for made in fm.constructions:
                group(made.callee, (-1, tuple(a.star or a.keyword or "" for a in made.args),
                                    made.passed), path)
            calls = fm.calls
            for handover in fm.handovers:
                group(calls[handover[0]].callee, handover, path)
        self._by_name, self._by_self_method = by_name, by_self_method
        return by_name, by_self_method

    def _constructed_by_init(self) -> Dict[str, List[str]]:
        """`__init__` id -> the constructed classes whose `__init__` it is."""
        if self._inits is None:
            self._inits = defaultdict(list)
            for qname in self._grouped_calls()[0]:
                if qname in self.classes:
                    fid = self.method(qname, "__init__")
                    if fid:
                        self._inits[fid].append(qname)
        return self._inits

    def _calls_of_values(self) -> Dict[str, List[Tuple[Handed, str, int]]]:
        """Function id -> the calls that run it as a value, made once: `fn(x)`,
        `strategy.run(fn, ...)`, `partial(fn, ...)` where names say what `fn` is
        (`_callables`), `self.step_fn(x)` for a function kept on `self`, and the calls of
        a parameter (`def train(step_fn, acc): step_fn(acc)`) under the functions passed
        for it, in a few rounds (a function handed down through several parameters). What
        objects denote is not asked meanwhile: the table is not complete yet."""
        if self._values is not None:
            return self._values
        table = self._values = defaultdict(list)
        _, by_self_method = self._grouped_calls()
        params: List[Tuple[Handed, str, Bound]] = []
        for target, handed, path in self._value_calls:
            if target.kind == BOUND_NAMES and len(target.options) == 1:
                target = target.options[0]
            if target.kind == BOUND_PARAM and target.qname and target.attr:
                params.append((handed, path, target))
            else:
                for fid, shift in self._callables(target, path, 0):
                    table[fid].append((handed, path, shift))
        stored = {attr for info in self.classes.values() for attr in info.attrs}
        for attr in stored.intersection(by_self_method):
            for cls, handed, path in by_self_method[attr]:
                if self.method(cls, attr) is None and cls in self.class_files:
                    owner = self.class_files[cls].path
                    for bound in self.class_attr(cls, attr):
                        for fid, shift in self._callables(bound, owner, 0):
                            table[fid].append((handed, path, shift))
        seen: Set[Tuple[int, str, int]] = set()
        self._following = True
        try:
            for _ in range(3):
                added = False
                for handed, path, param in params:
                    for passed, passed_path in self.arguments_for(str(param.qname),
                                                                  str(param.attr)):
                        for fid, shift in self._callables(passed, passed_path, 0):
                            if (id(handed), fid, shift) not in seen:
                                seen.add((id(handed), fid, shift))
                                table[fid].append((handed, path, shift))
                                added = True
                if not added:
                    break
        finally:
            self._following = False
        self._values_done = True
        return table

    def _bound_self(self, function: str) -> int:
        """How many parameters an instance or class fills before the arguments: none for
        a static method."""
        return 0 if self.functions[function].functions[function].static else 1

    def _callables(self, bound: Bound, path: str, depth: int) -> List[Tuple[str, int]]:
        """The project functions a callable may be, as far as names say, each with the
        parameter a call's first positional argument fills: a function by name, a method
        of `self`, a function kept on `self`, `tf.function(fn)`, `functools.partial(fn,
        a)` (its positional arguments fill the first ones)."""
        if depth > _MAX_DEPTH:
            return []
        kind, qname = bound.kind, bound.qname
        if kind == BOUND_NAMES:
            return [c for option in bound.options for c in self._callables(option, path, depth + 1)]
        if kind == BOUND_QNAME and qname:
            if qname in self.functions:
                return [(qname, 0)]
            bounds = self.module_global(qname)
            if bounds:
                module_path = self.modules[qname.rpartition(".")[0]].path
                return [c for b in bounds for c in self._callables(b, module_path, depth + 1)]
            return []
        if kind == BOUND_SELF_ATTR and qname and bound.attr:
            fid = self.method(qname, bound.attr)
            if fid:
                return [(fid, self._bound_self(fid))]
            owner = self.class_files.get(qname)
            if owner is None:
                return []
            return [c for b in self.class_attr(qname, bound.attr)
                    for c in self._callables(b, owner.path, depth + 1)]
        if kind == BOUND_CALL and qname and bound.options:
            if qname in tfapi.PARTIAL_CALLS:
                record = self.construction_at(path, bound.span) if bound.span else None
                if record is None or not record.callee.options:
                    return []
                given = 0
                for argument in record.args:
                    if argument.star == "*":
                        given = _UNKNOWN_POSITION
                    elif argument.keyword is None and not argument.star:
                        given += 1
                return [(fid, shift + given) for fid, shift in
                        self._callables(record.callee.options[0], path, depth + 1)]
            if qname in tfapi.FUNCTION_WRAPPERS:
                return self._callables(bound.options[0], path, depth + 1)
        return []

    def constructions_of(self, class_id: str) -> List[Tuple[Construction, str]]:
        """The calls in this run that construct an instance of a project class or of one
        of its subclasses (as far as the model records calls: `Construction`)."""
        if not self._constructions_of:  # once: each constructed class, to its ancestors
            table = self._constructions_of
            table[""] = []  # (filled: not again, though nothing is constructed)
            for qname, calls in self._construction_table()[0].items():
                if qname in self.classes:
                    for ancestor in self.mro(qname):
                        table.setdefault(ancestor, []).extend(calls)
        return self._constructions_of.get(class_id, [])

    def construction_at(self, path: str, span: Span) -> Optional[Construction]:
        return self._construction_table()[1].get((path, span))

    def _construction_table(self) -> Tuple[Dict[str, List[Tuple[Construction, str]]],
                                           Dict[Tuple[str, Span], Construction]]:
        """(callee qualified name -> its constructions with their files, (path, span) ->
        the construction there), made when first asked for."""
        if self._constructions is None:
            by_callee: Dict[str, List[Tuple[Construction, str]]] = defaultdict(list)
            by_span: Dict[Tuple[str, Span], Construction] = {}
            for fm in self.files:
                for construction in fm.constructions:
                    if construction.callee.qname and construction.callee.kind == BOUND_CALL:
                        by_callee[construction.callee.qname].append((construction, fm.path))
                    by_span[(fm.path, construction.span)] = construction
            self._constructions = (by_callee, by_span)
        return self._constructions

    def class_attr(self, class_id: str, attr: str) -> List[Bound]:
        bounds: List[Bound] = []
        for cid in self.mro(class_id):
            bounds.extend(self.classes[cid].attrs.get(attr, ()))
        return bounds


class StrategyResolver:
    def __init__(self, index: ProjectIndex):
        self._index = index
        # While scopes are resolved: `get_strategy()` is _CURRENT, to settle (else: any).
        self.current = False

    def strategy_of(self, bounds: Iterable[Bound], text: str, path: str) -> Optional[Strategy]:
        options: List[StrategyOption] = []
        for bound in bounds:
            options.extend(self._options(bound, path, 0))
        if not options and any(h in text.lower() for h in tfapi.STRATEGY_NAME_HINTS):
            options.append(StrategyOption(tfapi.ANY_STRATEGY))
        if not options:
            return None
        unique = tuple(dict.fromkeys(options))
        return Strategy(text, unique)

    def _options(self, bound: Bound, path: str, depth: int) -> List[StrategyOption]:
        if depth > _MAX_DEPTH:
            return []
        index = self._index
        qname = bound.qname
        if bound.kind == BOUND_CALL and qname:
            if qname in tfapi.STRATEGY_CONSTRUCTORS:
                line = bound.span.line if bound.span else None
                return [StrategyOption(tfapi.STRATEGY_CONSTRUCTORS[qname], path, line)]
            if qname in tfapi.CURRENT_STRATEGY_CALLS:
                if self.current and bound.span is not None:
                    return [StrategyOption(_CURRENT, path, bound.span.line, at=bound.span)]
                return [StrategyOption(tfapi.ANY_STRATEGY)]
            if qname in index.classes:
                return self._subclass(qname, bound, path)
        elif bound.kind == BOUND_QNAME and qname and \
                any(qname.startswith(p) for p in tfapi.NOT_STRATEGY_PREFIXES):
            return []
        options: List[StrategyOption] = []
        for followed, followed_path in self._followed(bound, path, depth):
            options.extend(self._options(followed, followed_path, depth + 1))
        return options

    def _classes(self, bound: Bound, path: str, depth: int) -> List[str]:
        """The project classes of which `bound` may be an instance, as far as names,
        attributes, parameters and returns show (no instance analysis yet)."""
        if depth > _MAX_DEPTH:
            return []
        if bound.kind == BOUND_CALL and bound.qname in self._index.classes:
            return [str(bound.qname)]
        classes: List[str] = []
        for followed, followed_path in self._followed(bound, path, depth):
            classes.extend(c for c in self._classes(followed, followed_path, depth + 1)
                           if c not in classes)
        return classes

    def _followed(self, bound: Bound, path: str, depth: int) -> List[Tuple[Bound, str]]:
        """What a name, a `self` attribute, a parameter, a module global, an attribute of
        a project object (`self.args.strategy`) or the result of a project function or
        method stands for, one binding further, with the file each binding is in."""
        index = self._index
        kind, qname, attr = bound.kind, bound.qname, bound.attr
        if kind == BOUND_NAMES:
            return [(b, path) for b in bound.options]
        fid = qname if kind == BOUND_CALL and qname in index.functions else \
            index.method(qname, attr) if kind == BOUND_METHOD and qname and attr else None
        if fid is not None:
            fm = index.functions[fid]
            return [(b, fm.path) for b in fm.functions[fid].returns]
        if kind == BOUND_QNAME and qname:
            bounds = index.module_global(qname)
            owner = index.modules[qname.rpartition(".")[0]].path if bounds else ""
            return [(b, owner) for b in bounds or ()]
        if kind == BOUND_SELF_ATTR and qname and attr and qname in index.class_files:
            return [(b, index.class_files[qname].path) for b in index.class_attr(qname, attr)]
        if kind == BOUND_PARAM and qname and attr:
            return index.arguments_for(qname, attr)
        if kind == BOUND_ATTR and attr and bound.options:
            return [(b, index.class_files[cls].path)
                    for cls in self._classes(bound.options[0], path, depth + 1)
                    for b in index.class_attr(cls, attr)]
        return []

    def _subclass(self, class_id: str, bound: Bound, path: str) -> List[StrategyOption]:
        """A project class derived from a strategy class is that strategy."""
        index = self._index
        kind = next((tfapi.STRATEGY_CONSTRUCTORS[b] for b in index.external_bases(class_id)
                     if b in tfapi.STRATEGY_CONSTRUCTORS), None)
        if kind is None:
            return []
        line = bound.span.line if bound.span else None
        scope = index.method(class_id, tfapi.STRATEGY_SCOPE_METHOD)
        creators: Tuple[Creator, ...] = ()
        if scope is not None:
            fm = index.functions[scope]
            # Entered one after the other in `scope()`: the last one is the innermost.
            creators = tuple(reversed([self.creator(s, fm) for s in fm.creator_scopes
                                       if s.function == scope]))
        return [StrategyOption(kind, path, line, index.classes[class_id].name, creators)]

    def creator(self, scope: CreatorScope, fm: FileModel) -> Creator:
        """The creator a `variable_creator_scope` call enters, with its program when it
        is a function of the run the model reads."""
        return Creator(scope.text, fm.path, scope.span.line,
                       self._creator_ops(scope.creator, fm.path, 0))

    def _creator_ops(self, bound: Bound, path: str, depth: int) -> Optional[tuple]:
        index = self._index
        if bound.kind == BOUND_QNAME and bound.qname:
            fm = index.functions.get(bound.qname) or index.functions.get(
                index.external_name(bound.qname))
            if fm is not None:
                name = bound.qname if bound.qname in fm.functions else \
                    index.external_name(bound.qname)
                return fm.creator_effects.get(name)
            return None
        if bound.kind == BOUND_NAMES and len(bound.options) == 1 and depth < _MAX_DEPTH:
            return self._creator_ops(bound.options[0], path, depth + 1)
        return None

class ContextAnalysis:
    """Strategy contexts of every function and scope in the run."""

    def __init__(self, index: ProjectIndex):
        self.index = index
        self.resolver = StrategyResolver(index)
        # (path, scope index) -> the strategy of that `with X.scope()`, None if not one.
        self.scope_strategy: Dict[Tuple[str, int], Optional[Strategy]] = {}
        self._function_contexts: Optional[Dict[str, Set[Context]]] = None
        # path -> [(index of a call in the file's `calls`, its callees)], calls with any
        self.callee_table: CalleeTable = {}
        # path -> the indices of its higher-order edges that do not hold: their callee is
        # a function that does not forward its callables (FileModel.higher_order).
        self.dropped_calls: Dict[str, Set[int]] = {}
        # ... and the calls `obj.method()` of a project class's instance, which only the
        # usage analysis resolves (`add_instance_calls`, before any context is asked for)
        self._instance_calls: CalleeTable = {}
        # (path, scope index) -> the creator of a `with tf.variable_creator_scope(...)`
        self.scope_creator: Dict[Tuple[str, int], Creator] = {}
        self._settling = False  # (while contexts propagate)
        self.resolver.current = True
        for fm in index.files:
            for i, entry in enumerate(fm.scopes):
                if entry.creator != -1:
                    if entry.creator >= 0:
                        self.scope_creator[(fm.path, i)] = self.resolver.creator(
                            fm.creator_scopes[entry.creator], fm)
                    continue
                self.scope_strategy[(fm.path, i)] = self.resolver.strategy_of(
                    entry.receivers, entry.text, fm.path)
            self.callee_table[fm.path] = self._callees_of_calls(fm)
        self.resolver.current = False
        # Whether a scope's strategy is still a `get_strategy()` to settle (`_settle_current`).
        self._unsettled = any(strategy is not None and _CURRENT in strategy.kinds
                              for strategy in self.scope_strategy.values())

    def add_instance_calls(self, table: CalleeTable) -> None:
        """`model.compile()` runs `Model.compile` of the project in the caller's context."""
        assert self._function_contexts is None, "contexts already propagated"
        self._instance_calls = table

    @property
    def function_contexts(self) -> Dict[str, Set[Context]]:
        if self._function_contexts is None:
            self._settling = True
            try:
                self._function_contexts = defaultdict(set)
                self._propagate(self._function_contexts)
                for _ in range(_MAX_DEPTH):  # a `get_strategy()` under one: in rounds
                    if not self._settle_current():
                        break
                    self._function_contexts = defaultdict(set)
                    self._propagate(self._function_contexts)
            finally:
                self._settling = False
        return self._function_contexts

    def _settle_current(self) -> bool:
        """Replace in each scope the strategy a `tf.distribute.get_strategy()` returns
        by the strategies current where it is called: its callers' scopes (or an outer
        scope), none outside any (the default strategy: such a scope changes nothing), any
        strategy where nothing in the run calls it. A scope whose `get_strategy()` is
        called under another such scope waits for that one. Whether any scope changed."""
        pending = {key: strategy for key, strategy in self.scope_strategy.items()
                   if strategy is not None and _CURRENT in strategy.kinds}
        if not pending:
            self._unsettled = False
            return False
        calls: Dict[Tuple[str, Span], Tuple[Optional[str], Tuple[int, ...]]] = {}
        for fm in self.index.files:
            if any(path == fm.path for path, _ in pending):
                for edge in fm.calls:
                    if edge.callee.qname in tfapi.CURRENT_STRATEGY_CALLS:
                        calls[(fm.path, edge.span)] = (edge.caller, edge.scopes)
        settled: Dict[Tuple[str, int], Optional[Strategy]] = {}
        for (path, index), strategy in pending.items():
            options: List[StrategyOption] = []
            waits = False
            for option in strategy.options:
                if option.kind != _CURRENT:
                    options.append(option)
                    continue
                caller, scopes = calls.get((str(option.path), option.at),  # type: ignore[arg-type]
                                           (None, ()))
                scopes = tuple(i for i in scopes if not (option.path == path and i == index))
                for context in self.contexts_at(str(option.path), caller, scopes):
                    if context.kind == UNKNOWN:
                        options.append(StrategyOption(tfapi.ANY_STRATEGY))
                    elif context.kind == IN_STRATEGY and context.strategy is not None:
                        if _CURRENT in context.strategy.kinds:
                            waits = True
                        options.extend(context.strategy.options)
            if not waits:
                settled[(path, index)] = Strategy(strategy.text, tuple(dict.fromkeys(
                    options))) if options else None
        if not settled:  # (only scopes waiting on each other: what they are is unknown)
            for key, strategy in pending.items():
                settled[key] = Strategy(strategy.text, tuple(dict.fromkeys(
                    StrategyOption(tfapi.ANY_STRATEGY) if o.kind == _CURRENT else o
                    for o in strategy.options)))
        self.scope_strategy.update(settled)
        return True

    def _lexical(self, path: str, scopes: Tuple[int, ...]
                 ) -> Tuple[Optional[Context], Tuple[Creator, ...]]:
        """(the context given by the innermost strategy scope among `scopes`, with the
        creators entered inside it; the creators entered where there is none)."""
        if not scopes:
            return None, ()
        if self._unsettled and not self._settling:
            _ = self.function_contexts  # (settles the scopes of `get_strategy()` first)
        inner: List[Creator] = []
        for i in reversed(scopes):
            strategy = self.scope_strategy.get((path, i))
            if strategy is not None:
                return Context(IN_STRATEGY, strategy, tuple(inner)), ()
            creator = self.scope_creator.get((path, i))
            if creator is not None:
                inner.append(creator)
        return None, tuple(inner)

    def scope_context(self, path: str, scopes: Tuple[int, ...]) -> Optional[Context]:
        """The context given by the innermost strategy scope among `scopes`."""
        return self._lexical(path, scopes)[0]

    def contexts_at(self, path: str, function: Optional[str],
                    scopes: Tuple[int, ...]) -> FrozenSet[Context]:
        lexical, creators = self._lexical(path, scopes)
        if lexical is not None:
            return frozenset({lexical})
        if function is None:
            return frozenset({CTX_NONE.with_creators(creators)})
        found = self.function_contexts.get(function)
        if not found:
            return frozenset({CTX_UNKNOWN.with_creators(creators)})
        return frozenset(c.with_creators(creators) for c in found)

    def _callees_of_calls(self, fm: FileModel) -> List[Tuple[int, List[str]]]:
        """[(i, the project functions call `i` may run)] for the calls that may run
        any: `self.m()` (BOUND_METHOD), a project function, or a project class's
        `__init__`/`build`. One loop, no call per edge: a link asks this of every call
        of the run."""
        table: List[Tuple[int, List[str]]] = []
        index = self.index
        functions, classes, method = index.functions, index.classes, index.method
        for i, edge in enumerate(fm.calls):
            callee = edge.callee
            qname, kind = callee.qname, callee.kind
            if not qname:
                continue
            if kind == BOUND_CALL:
                if qname in functions:
                    table.append((i, [qname]))
                elif qname in classes:
                    targets = [t for t in (method(qname, m) for m in _CONSTRUCTION_METHODS) if t]
                    if targets:
                        table.append((i, targets))
            elif kind == BOUND_METHOD and callee.attr:
                fid = method(qname, callee.attr)
                if fid:
                    table.append((i, [fid]))
        if fm.higher_order:
            forwarders = index.forwarders
            dropped = {i for i, (_, wrapper, _) in fm.higher_order.items()
                       if wrapper is not None and wrapper not in forwarders}
            if dropped:
                self.dropped_calls[fm.path] = dropped
                table = [entry for entry in table if entry[0] not in dropped]
        return table

    def _propagate(self, contexts: Dict[str, Set[Context]]) -> None:
        incoming: Dict[str, List[Tuple[Optional[str], Optional[Context]]]] = defaultdict(list)
        # (callee, the context the call gives it, else the creators entered around the
        # call: the callee runs in its caller's contexts, with those in effect too)
        outgoing: Dict[Optional[str], List[Tuple[str, Optional[Context], Tuple[Creator, ...]]]
                       ] = defaultdict(list)
        for fm in self.index.files:
            calls = fm.calls
            for i, targets in self.callee_table[fm.path] + self._instance_calls.get(fm.path, []):
                edge = calls[i]
                lexical, creators = self._lexical(fm.path, edge.scopes)
                if lexical is None and edge.caller is None:
                    lexical = CTX_NONE.with_creators(creators)
                for target in targets:
                    outgoing[edge.caller].append((target, lexical, creators))
                    incoming[target].append((edge.caller, lexical))
        queue: deque = deque()
        for edges in outgoing.values():
            for target, lexical, _ in edges:
                if lexical is not None and lexical not in contexts[target]:
                    contexts[target].add(lexical)
                    queue.append(target)
        # Nobody in this run calls these: whoever does is out of sight.
        for caller in outgoing:
            if caller is not None and caller not in incoming:
                contexts[caller].add(CTX_UNKNOWN)
                queue.append(caller)
        while queue:
            caller = queue.popleft()
            source = contexts[caller]
            for target, lexical, creators in outgoing.get(caller, ()):
                if lexical is not None:
                    continue
                before = len(contexts[target])
                contexts[target] |= {c.with_creators(creators) for c in source} \
                    if creators else source
                if len(contexts[target]) != before:
                    queue.append(target)


def describe_strategy(strategy: Strategy, here: str, note: Optional[Note] = None) -> str:
    """`strategy` (MirroredStrategy created at line 5) -- for messages; a subclass by its
    name: `strategy` (Replicator, a MirroredStrategy, created at line 6). `note(phrase,
    place)` learns each "MirroredStrategy created at line 5" and the place it names."""
    parts = []
    for option in strategy.options:
        if option.kind == tfapi.ANY_STRATEGY:
            parts.append("a strategy this run cannot identify")
            continue
        label = option.kind if option.subclass is None else \
            f"{option.subclass}, a {option.kind}"
        part = label + ("," if option.subclass is not None and option.line is not None else "")
        if option.line is not None:
            part += f" created at line {option.line}" if option.path == here else \
                f" created at {option.path}:{option.line}"
            if note is not None and option.path is not None:
                note(part, Related(option.path, option.line,
                                   f"`{strategy.text}` ({label}) created"))
        parts.append(part)
    return f"`{strategy.text}` ({' or '.join(parts)})"


def unread_creator(context: Context) -> Optional[Creator]:
    """A creator in effect in `context` whose program the run cannot read: it may change
    the choice of the variables created there before the strategy sees it."""
    for creator in context.creators:
        if creator.ops is None:
            return creator
    if context.strategy is not None:
        for option in context.strategy.options:
            for creator in option.creators:
                if creator.ops is None:
                    return creator
    return None


def describe_creator(creator: Creator, here: str, note: Optional[Note] = None) -> str:
    """the variable creator `make` (entered at line 9) -- for messages; `note` learns the
    place it names."""
    where = f"entered at line {creator.line}" if creator.path == here else \
        f"entered at {creator.path}:{creator.line}"
    if note is not None:
        note(where, Related(creator.path, creator.line,
                            f"variable creator `{creator.text}` entered"))
    return f"the variable creator `{creator.text}` ({where})"


def span_line(span: Optional[Span]) -> Optional[int]:
    return span.line if span else None
