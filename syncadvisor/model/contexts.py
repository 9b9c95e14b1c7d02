"""Which strategy a piece of code runs under, across the modules of one run.

A strategy is seen where it is constructed (`tf.distribute.MirroredStrategy()` under any
alias, possibly behind a function that returns it, a module global imported elsewhere,
or `self.strategy`), and it applies inside `with <strategy>.scope():` blocks. A
function's contexts are those of the calls that may run it (`CallGraph.callers`): the
scope around a call, else its caller's contexts; a function nobody in this run calls
has an unknown context. `tf.distribute.get_strategy()` is the strategy current where it
is called: the contexts of that call.
"""
from __future__ import annotations

from typing import Callable, Dict, FrozenSet, Iterable, List, Optional, Set, Tuple

from ..findings import Related
from ..records import record
from . import tfapi
from .calls import CallGraph
from .db import Db
from .facts import (BOUND_ATTR, BOUND_CALL, BOUND_METHOD, BOUND_NAMES, BOUND_PARAM, BOUND_QNAME,
                    BOUND_SELF_ATTR, Bound, CreatorScope, FileModel, Span)
from .index import ProjectIndex
from .objects import Objects

_MAX_DEPTH = 8

# A rule context's record of a phrase of a message and the place it names.
Note = Callable[[str, Related], None]


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
    # Known only from an `isinstance` test that passed (at `line`), not from a creation.
    tested: bool = False


# The strategy `tf.distribute.get_strategy()` returns where it is called: whatever scope
# its callers are in, the default strategy outside any. Replaced by those contexts'
# strategies (`Strategies._scope_strategy`); never seen outside this module.
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
    # An UNKNOWN context that stands for every context of the code (CANNOT_TELL): a bound
    # was reached, and no context found is the whole answer.
    bounded: bool = False

    def with_creators(self, inner: Tuple[Creator, ...]) -> "Context":
        """This context with `inner` entered inside it. A creator already in effect is not
        entered twice: a recursive call under a creator gives its callee finitely many
        contexts."""
        if not inner or self.bounded:
            return self
        added = tuple(c for c in inner if c not in self.creators)
        return Context(self.kind, self.strategy, added + self.creators) if added else self


CTX_NONE = Context(NO_STRATEGY)
CTX_UNKNOWN = Context(UNKNOWN)
_NO_CONTEXTS: FrozenSet[Context] = frozenset()

# The contexts of code whose contexts cannot be told: rules read them as unknown (no
# error, at most the warning of code no caller in the run reaches). A function's contexts
# are CANNOT_TELL where a bound is reached on the way to them, never the merge of those
# found before it:
# - a call that may run more than MAX_TARGETS functions (`layer.call(x)` for a layer of
#   any of thousands of classes) runs each in a context that cannot be told;
# - a function that runs in more than MAX_CONTEXTS contexts (called from thousands of
#   places, each under its own strategy), or is called from code whose contexts cannot
#   be told, has CANNOT_TELL (which so spreads to what it calls: the answers only grow,
#   to it, so that a circle of calls still has one least answer);
# - a call chain deeper than the query engine follows (`db.MAX_OPEN`) ends in it.
CTX_CANNOT_TELL = Context(UNKNOWN, bounded=True)
CANNOT_TELL: FrozenSet[Context] = frozenset({CTX_CANNOT_TELL})
MAX_TARGETS = 64
MAX_CONTEXTS = 64
# The calls `Strategies.placed` tells apart (each with its context) before it cannot tell.
MAX_PLACED = 256

# A place in the code: (path, the function it is in or None at module level, the `with`
# entries open around it there).
At = Tuple[str, Optional[str], Tuple[int, ...]]


@record(frozen=True)
class Pair:
    """A context one piece of code runs in (`made`: where an object is made) and one
    another runs in (`used`: where it is used), on executions that can both happen.

    `certain`: the two are tied -- both in one function, whose calls decide them both;
    or the made side has a single context, the same whatever runs the use (several
    contexts there may be several objects: a factory's calls each make one). A pair
    that is not certain is one combination of two independently merged sets, which may
    never meet in one execution. `via`: the call that selects this pair where the
    calls of the code differ, (path, span, the callee as written); None where the pair
    holds whatever calls the code."""

    made: Context
    used: Context
    certain: bool
    via: Optional[Tuple[str, Span, str]] = None


class StrategyResolver:
    """What strategy objects a reference may denote, following names, returns, module
    globals, `self` attributes and parameters; `current` decides what a
    `get_strategy()` call is: the strategy current where it is called (a placeholder,
    `_CURRENT`, that `Strategies` replaces), or any strategy."""

    def __init__(self, index: ProjectIndex, objects: Objects, current: bool):
        self._index = index
        self._objects = objects
        self.current = current

    def strategy_of(self, bounds: Iterable[Bound], text: str, path: str) -> Optional[Strategy]:
        options: List[StrategyOption] = []
        for bound in bounds:
            options.extend(self._options(bound, path, 0))
        if not options and any(h in text.lower() for h in tfapi.STRATEGY_NAME_HINTS):
            options.append(StrategyOption(tfapi.ANY_STRATEGY))
        if not options:
            return None
        return Strategy(text, tuple(dict.fromkeys(options)))

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
            if index.is_class(qname):
                return self._subclass(qname, bound, path)
            library = tfapi.LIBRARY_STRATEGIES.get(qname) or \
                tfapi.LIBRARY_STRATEGIES.get(index.external_name(qname))
            if library is not None:
                return [_library_option(library, qname, bound, path)]
        elif bound.kind == BOUND_QNAME and qname and \
                any(qname.startswith(p) for p in tfapi.NOT_STRATEGY_PREFIXES):
            return []
        options: List[StrategyOption] = []
        for followed, followed_path in self._followed(bound, path, depth):
            options.extend(self._options(followed, followed_path, depth + 1))
        return options

    def _classes(self, bound: Bound, path: str, depth: int) -> List[str]:
        """The project classes of which `bound` may be an instance, as far as names,
        attributes, parameters and returns show (no instance analysis)."""
        if depth > _MAX_DEPTH:
            return []
        if bound.kind == BOUND_CALL and self._index.is_class(bound.qname):
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
        fid = qname if kind == BOUND_CALL and index.is_function(qname) else \
            index.method(qname, attr) if kind == BOUND_METHOD and qname and attr else None
        if fid is not None:
            fm = index.read(index.function_file(fid))  # type: ignore[arg-type]
            return [(b, fm.path) for b in fm.functions[fid].returns]
        if kind == BOUND_QNAME and qname:
            bounds = index.module_global(qname)
            owner = index.module_path(qname) if bounds else ""
            return [(b, owner) for b in bounds or ()]
        if kind == BOUND_SELF_ATTR and qname and attr:
            owner_file = index.class_file(qname)
            if owner_file is None:
                return []
            return [(b, owner_file.path) for b in index.class_attr(qname, attr)]
        if kind == BOUND_PARAM and qname and attr:
            return self._objects.arguments_for(qname, attr)
        if kind == BOUND_ATTR and attr and bound.options:
            found: List[Tuple[Bound, str]] = []
            for cls in self._classes(bound.options[0], path, depth + 1):
                owner_file = index.class_file(cls)
                if owner_file is not None:
                    found.extend((b, owner_file.path) for b in index.class_attr(cls, attr))
            return found
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
            fm = index.read(index.function_file(scope))  # type: ignore[arg-type]
            # Entered one after the other in `scope()`: the last one is the innermost.
            creators = tuple(reversed([self.creator(s, fm) for s in fm.creator_scopes
                                       if s.function == scope]))
        info = index.klass(class_id)
        return [StrategyOption(kind, path, line, info.name if info else None, creators)]

    def creator(self, scope: CreatorScope, fm: FileModel) -> Creator:
        """The creator a `variable_creator_scope` call enters, with its program when it
        is a function of the run the model reads."""
        return Creator(scope.text, fm.path, scope.span.line,
                       self._creator_ops(scope.creator, fm.path, 0))

    def _creator_ops(self, bound: Bound, path: str, depth: int) -> Optional[tuple]:
        index = self._index
        if bound.kind == BOUND_QNAME and bound.qname:
            name = bound.qname
            fm = index.function_file(name)
            if fm is None:
                name = index.external_name(bound.qname)
                fm = index.function_file(name)
            if fm is not None:
                return index.read(fm).creator_effects.get(name)
            return None
        if bound.kind == BOUND_NAMES and len(bound.options) == 1 and depth < _MAX_DEPTH:
            return self._creator_ops(bound.options[0], path, depth + 1)
        return None


def _library_option(library: tfapi.LibraryStrategy, qname: str, bound: Bound,
                    path: str) -> StrategyOption:
    """A library's strategy class (tfapi.LIBRARY_STRATEGIES) made at `bound`: its kind,
    and the creators its `scope()` enters, as the table says them (line 0: no place in
    the run)."""
    creators = tuple(Creator(name, library.module, 0, ops) for name, ops in library.creators)
    line = bound.span.line if bound.span else None
    return StrategyOption(library.kind, path, line, qname.rpartition(".")[2], creators)


class Strategies:
    """The strategy of each `with X.scope()` of the run, and the strategy contexts of
    each function and piece of code."""

    def __init__(self, db: Db, index: ProjectIndex, objects: Objects, calls: CallGraph):
        self.index = index
        self.calls = calls
        self.resolver = StrategyResolver(index, objects, current=False)
        self._scopes = StrategyResolver(index, objects, current=True)
        self.scope_strategy = db.query("scope_strategy", self._scope_strategy, same=_equal)
        self.scope_creator = db.query("scope_creator", self._scope_creator)
        self.contexts = db.query("contexts", self._contexts, _NO_CONTEXTS, same=_equal,
                                 unknown=CANNOT_TELL)
        self._current_calls = db.query("current_calls", self._current_calls_of, {})

    # --- scopes ------------------------------------------------------------------------

    def _scope_strategy(self, path: str, i: int) -> Optional[Strategy]:
        """The strategy of the `with X.scope()` entry `i` of `path`, None if it is not
        one; a `get_strategy()` there is what is current where it is called."""
        fm = self.index.file_at(path)
        entry = fm.scopes[i]
        if entry.creator != -1:
            return None
        strategy = self._scopes.strategy_of(entry.receivers, entry.text, path)
        if strategy is None or _CURRENT not in strategy.kinds:
            return _narrowed(strategy, entry.narrowed, path)
        options: List[StrategyOption] = []
        for option in strategy.options:
            if option.kind != _CURRENT:
                options.append(option)
                continue
            caller, scopes = self._current_calls(str(option.path)).get(option.at, (None, ()))
            scopes = tuple(s for s in scopes if not (option.path == path and s == i))
            for context in sorted(self.contexts_at(str(option.path), caller, scopes),
                                  key=_context_order):
                if context.kind == UNKNOWN:
                    options.append(StrategyOption(tfapi.ANY_STRATEGY))
                elif context.kind == IN_STRATEGY and context.strategy is not None:
                    options.extend(context.strategy.options)
        if not options:
            return None
        return _narrowed(Strategy(strategy.text, tuple(dict.fromkeys(options))),
                         entry.narrowed, path)

    def _current_calls_of(self, path: str) -> Dict[Span, Tuple[Optional[str], Tuple[int, ...]]]:
        """The `get_strategy()` calls of a file: span -> (caller, scopes)."""
        fm = self.index.file_at(path)
        return {edge.span: (edge.caller, edge.scopes) for edge in fm.calls
                if edge.callee.qname in tfapi.CURRENT_STRATEGY_CALLS}

    def _scope_creator(self, path: str, i: int):
        """The creator a `with tf.variable_creator_scope(c):` entry enters, else None."""
        fm = self.index.file_at(path)
        entry = fm.scopes[i]
        if entry.creator < 0:
            return None
        return self.resolver.creator(fm.creator_scopes[entry.creator], fm)

    def lexical(self, path: str, scopes: Tuple[int, ...]
                ) -> Tuple[Optional[Context], Tuple[Creator, ...]]:
        """(the context given by the innermost strategy scope among `scopes`, with the
        creators entered inside it; the creators entered where there is none)."""
        if not scopes:
            return None, ()
        inner: List[Creator] = []
        for i in reversed(scopes):
            strategy = self.scope_strategy(path, i)
            if strategy is not None:
                return Context(IN_STRATEGY, strategy, tuple(inner)), ()
            creator = self.scope_creator(path, i)
            if creator is not None:
                inner.append(creator)
        return None, tuple(inner)

    def scope_context(self, path: str, scopes: Tuple[int, ...]) -> Optional[Context]:
        """The context given by the innermost strategy scope among `scopes`."""
        return self.lexical(path, scopes)[0]

    # --- functions -----------------------------------------------------------------------

    def _contexts(self, function: str) -> FrozenSet[Context]:
        """The contexts a function runs in: per call that may run it, the scope around the
        call, else its caller's contexts with the creators entered around the call (at
        module level: no strategy); a function no call runs: unknown."""
        callers = self.calls.callers(function)
        if not callers:
            return frozenset({CTX_UNKNOWN})
        found: Set[Context] = set()
        targets = self.calls.targets
        for path, i in callers:
            if len(targets(path, i)) > MAX_TARGETS:
                return CANNOT_TELL
            source = self._call_contexts(path, i)
            if CTX_CANNOT_TELL in source:
                return CANNOT_TELL
            found.update(source)
            if len(found) > MAX_CONTEXTS:
                return CANNOT_TELL
        return frozenset(found)

    def _call_contexts(self, path: str, i: int) -> FrozenSet[Context]:
        """The contexts the call `i` of `path` runs its callee in."""
        edge = self.index.file_at(path).calls[i]
        lexical, creators = self.lexical(path, edge.scopes)
        if lexical is None and edge.caller is None:
            lexical = CTX_NONE.with_creators(creators)
        if lexical is not None:
            return frozenset({lexical})
        source = self.contexts(edge.caller)
        return frozenset(c.with_creators(creators) for c in source) if creators else source

    def placed(self, at: At) -> "Placed":
        """The contexts code at `at` runs in, each with the call of its function that
        gives it where the function's calls give it different ones (else None)."""
        path, function, scopes = at
        lexical, creators = self.lexical(path, scopes)
        if lexical is not None:
            return [(lexical, None)]
        if function is None:
            return [(CTX_NONE.with_creators(creators), None)]
        callers = self.calls.callers(function)
        if not callers:
            return [(CTX_UNKNOWN.with_creators(creators), None)]
        if self.contexts(function) == CANNOT_TELL:  # (the bounds of `_contexts`, checked once)
            return [(CTX_CANNOT_TELL, None)]
        by_call: Placed = []
        index = self.index
        for call_path, i in callers:
            edge = index.file_at(call_path).calls[i]
            for context in sorted(self._call_contexts(call_path, i), key=_context_order):
                by_call.append((context.with_creators(creators),
                                (call_path, edge.span, str(edge.callee.text))))
        selected = _selecting(by_call)
        # Pairs combine two placements: more calls than MAX_PLACED that select among
        # contexts would pair by the million (a helper called from thousands of places).
        return selected if len(selected) <= MAX_PLACED else [(CTX_CANNOT_TELL, None)]

    def pairs(self, made: At, used: At) -> List[Pair]:
        """The contexts of `made` and of `used`, paired as executions can pair them: in one
        function, code outside any scope there runs in whatever its caller gives, and
        the same caller gives it to both; elsewhere every combination (`paired`)."""
        (made_path, made_function, made_scopes), (used_path, used_function, used_scopes) = \
            made, used
        if made_path == used_path and made_function == used_function:
            made_lexical, made_creators = self.lexical(made_path, made_scopes)
            used_lexical, used_creators = self.lexical(used_path, used_scopes)
            if made_lexical is not None and used_lexical is not None:
                return [Pair(made_lexical, used_lexical, True)]
            shared = self.placed((made_path, made_function, ()))
            return [Pair(made_lexical or context.with_creators(made_creators),
                         used_lexical or context.with_creators(used_creators), True,
                         via if made_lexical is None or used_lexical is None else None)
                    for context, via in shared]
        return paired(self.placed(made), self.placed(used))

    def contexts_at(self, path: str, function: Optional[str],
                    scopes: Tuple[int, ...]) -> FrozenSet[Context]:
        lexical, creators = self.lexical(path, scopes)
        if lexical is not None:
            return frozenset({lexical})
        if function is None:
            return frozenset({CTX_NONE.with_creators(creators)})
        found = self.contexts(function)
        if not found:
            return frozenset({CTX_UNKNOWN.with_creators(creators)})
        return frozenset(c.with_creators(creators) for c in found)


Placed = List[Tuple[Context, Optional[Tuple[str, Span, str]]]]


def _narrowed(strategy: Optional[Strategy], tests: Tuple[Tuple[Tuple[Bound, ...], bool], ...],
              path: str) -> Optional[Strategy]:
    """`strategy` where each `isinstance` test in `tests` passed or failed: the options
    that are (or are not) of the tested strategy kinds; an unknown strategy that passed
    is of those kinds. A test naming a class that is not a strategy class the run knows
    narrows nothing. Where no option the run sees passes, the code's own test says the
    strategy may be one the run does not see: one of the tested kinds (test passed), or
    any (failed)."""
    if strategy is None or not tests:
        return strategy
    options = list(strategy.options)
    for classes, passes in tests:
        kinds = [tfapi.STRATEGY_CONSTRUCTORS.get(str(c.qname)) for c in classes]
        if None in kinds:
            continue
        if passes:
            kept = [o for o in options if o.kind in kinds]
            if not kept or any(o.kind == tfapi.ANY_STRATEGY for o in options):
                line = span_line(classes[0].span)
                kept.extend(StrategyOption(str(k), path, line, tested=True)
                            for k in dict.fromkeys(kinds))
            options = kept
        else:
            options = [o for o in options if o.kind not in kinds] or \
                [StrategyOption(tfapi.ANY_STRATEGY)]
    return Strategy(strategy.text, tuple(dict.fromkeys(options)))


def paired(made: Placed, used: Placed) -> List[Pair]:
    """Every combination of independently placed contexts (`Strategies.placed`), certain
    where the made side has one; a call names a path only where it selects among
    different contexts."""
    made, used = _selecting(made), _selecting(used)
    certain = len(made) == 1
    return [Pair(m, u, certain, m_via or u_via) for m, m_via in made for u, u_via in used]


def _selecting(placed: Placed) -> Placed:
    if len({context for context, _ in placed}) < 2:
        return [(context, None) for context in dict.fromkeys(c for c, _ in placed)]
    return list(dict.fromkeys(placed))


def _equal(old: object, new: object) -> bool:
    """Strategy facts are values (names, lines): equal is the same."""
    return old == new


def _context_order(context: Context) -> Tuple[str, str]:
    return context.kind, str(context.strategy)


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
            made = "by the `isinstance` test at" if option.tested else "created at"
            part += f" {made} line {option.line}" if option.path == here else \
                f" {made} {option.path}:{option.line}"
            if note is not None and option.path is not None:
                note(part, Related(option.path, option.line,
                                   f"`{strategy.text}` ({label}) " +
                                   ("tested" if option.tested else "created")))
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
    if creator.line == 0:  # a library's (tfapi.LIBRARY_STRATEGIES): no place in the run
        return f"the variable creator `{creator.text}` (in {creator.path})"
    where = f"entered at line {creator.line}" if creator.path == here else \
        f"entered at {creator.path}:{creator.line}"
    if note is not None:
        note(where, Related(creator.path, creator.line,
                            f"variable creator `{creator.text}` entered"))
    return f"the variable creator `{creator.text}` ({where})"


def span_line(span: Optional[Span]) -> Optional[int]:
    return span.line if span else None
