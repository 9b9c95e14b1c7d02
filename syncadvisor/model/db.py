"""Memoized questions over the files of a run: the engine every project-wide fact is asked
through.

A `Query` is one kind of question (`objects(bound, path)`, `contexts(function)`): a
function of its key that may ask other questions, answered once and kept. Questions may
ask each other in a circle (a name bound to the call of a function that returns the
name); the answer is then the least fixpoint of the circle, whatever was asked first:

- A question asked again while it is being answered gets its provisional answer (the
  query's `bottom` at first). The lowest open question a circle reaches is its head;
  the questions above the head are answered provisionally, and not kept.
- When the head has an answer, the circle is answered again, from the head, until no
  answer in it changes; then every answer of that last round is kept. Answers only grow
  (every query is monotone in the answers it reads), so this ends.

So an answer never depends on the order questions were asked in: the command asking
every file's findings, the language server asking one file's, and `--fix` asking again
after an edit all see the same facts.

With `track`, each answer also records what it read: the inputs (`depend(key)`: a file's
model, a table of the project's index) and the answers it asked for. `changed(keys)`
starts a new revision in which those inputs differ; an answer is used again only once
it is found to hold (`verify`): none of its inputs changed since it was last found to,
and each answer it read holds and kept its value (by the query's `same`), else it is
answered again, and what read it compares the new answer with the old. So an edit costs
what it really changes, not what might have read it. The command does not track (it
asks each question once); the language server and `--fix` do, and replace one file at
a time.

Invariants: `bottom` is a value no answer is smaller than; a key stands for the same
question for as long as its answer is kept (an answer about an object by `id` is
forgotten, `changed(dead=...)`, when the object goes); only `ask` calls a compute
function.
"""
from __future__ import annotations

import sys
import weakref
from typing import Any, Callable, Dict, Hashable, Iterable, List, Optional, Set, Tuple

_MISSING: Any = object()

# How many questions may be open at once: past this, the answer is the query's `unknown`
# ("cannot tell"; its bottom where it has none), which keeps pathological code bounded.
# Each open question takes a few Python frames (this module's two, its compute
# function's and their helpers'): a first question raises the recursion limit to room
# for them all while it is answered.
MAX_OPEN = 250
_FRAMES_PER_QUESTION = 10
# How many times a circle is answered again: a circle through a question that is not
# monotone (a scope's strategy, which hides its callers' once it is known) could go on
# changing; after this many rounds its last answers are kept.
MAX_ROUNDS = 20


class Query:
    """One kind of question: `compute(*key)`, kept in `memo` by key.

    A query holds its engine and its compute function weakly: they are usually a method
    of the object that holds the query, and a run's facts must not be kept in a reference
    cycle (the command runs with the cycle collector paused, and frees them at once)."""

    __slots__ = ("name", "_compute", "bottom", "memo", "_db", "same", "unknown", "outermost",
                 "__weakref__")

    def __init__(self, db: "Db", name: str, compute: Callable[..., Any], bottom: Any,
                 same: Optional[Callable[[Any, Any], bool]] = None, unknown: Any = _MISSING,
                 outermost: bool = False):
        self.name = name
        # Asked only from outside any other question (a file's findings): its questions
        # may be as deep as those asked from outside, so that each answer is the same
        # whichever asked it first (MAX_OPEN).
        self.outermost = outermost
        # Whether a new answer is the same as the one before, for what read that one
        # (tracked runs; unset: only the very same object is).
        self.same = same
        self._compute: Callable[[], Callable[..., Any]] = weakref.WeakMethod(compute) \
            if hasattr(compute, "__self__") else (lambda: compute)  # type: ignore[assignment]
        self.bottom = bottom
        # The answer where the question is too deep to ask (MAX_OPEN): what the query
        # says when it cannot tell, where that is not its bottom.
        self.unknown = bottom if unknown is _MISSING else unknown
        self.memo: Dict[Hashable, Any] = {}
        self._db = weakref.ref(db)

    @property
    def db(self) -> "Db":
        return self._db()  # type: ignore[return-value]

    def compute(self, *key: Any) -> Any:
        return self._compute()(*key)

    def __call__(self, *key: Any) -> Any:
        value = self.memo.get(key, _MISSING)
        db = self._db()
        if value is _MISSING:
            return db.ask(self, key)  # type: ignore[union-attr]
        if db.track:  # type: ignore[union-attr]
            entry = (self, key)
            if entry in db._maybe:  # type: ignore[union-attr]
                if entry in db._verifying:  # type: ignore[union-attr]
                    # asked while it is being checked: its old answer may be what changed
                    db.reopen(entry)  # type: ignore[union-attr]
                    return db.ask(self, key)  # type: ignore[union-attr]
                value = db.verify(entry)  # type: ignore[union-attr]
            stack = db.stack  # type: ignore[union-attr]
            if stack:
                stack[-1].children.append(entry)
        return value

    def __repr__(self) -> str:
        return f"Query({self.name})"


Entry = Tuple[Query, Any]


_NO_CHILDREN: List[Any] = []
_NO_INPUTS: Set[Any] = set()


class _Frame:
    """An open question."""

    __slots__ = ("index", "low", "asked_again", "children", "inputs", "log_start",
                 "first_log", "open", "onto")

    def __init__(self, index: int, log_start: int, track: bool):
        self.index = index  # its place on the stack
        self.low = index  # the lowest open question its answer read: its circle's head
        self.asked_again = False  # asked while open: the head of a circle
        # The answers and the inputs it read (tracked runs only).
        self.children: List[Entry] = [] if track else _NO_CHILDREN
        self.inputs: Set[Hashable] = set() if track else _NO_INPUTS
        self.log_start = log_start  # where this round's provisional answers start
        self.first_log = log_start  # ... and the first round's
        self.open = True
        # Once closed inside a circle: the open question further down it reached.
        self.onto: Optional["_Frame"] = None


class _Given:
    """A provisional answer: the open question its circle reached when it was given,
    and the round of the circle it was given in."""

    __slots__ = ("value", "reached", "round")

    def __init__(self, value: Any, reached: _Frame, round_: int):
        self.value = value
        self.reached = reached
        self.round = round_


class Db:
    def __init__(self, track: bool = False):
        self.track = track
        self.stack: List[_Frame] = []
        self._open: Dict[Entry, _Frame] = {}
        # The provisional answers of unfinished circles, and the order they were given in.
        self._given: Dict[Entry, _Given] = {}
        self._log: List[Entry] = []
        # Provisional answers given that differ from the one before: the last one's is
        # the newest version.
        self._changes = 0
        self._outer = 0  # 1 while an `outermost` question is open: it takes no depth
        self._round = 0  # bumped whenever a circle is answered again
        # Tracking: the revision (bumped by each `changed`), the revision each input last
        # changed in, and per answer: what it read, the revision it was last found to
        # hold in (`verified`), the one it last changed in, and its circle, if any.
        self.revision = 0
        self._input_changed: Dict[Hashable, int] = {}
        self._what_read: Dict[Entry, Tuple[Tuple[Hashable, ...], Tuple[Entry, ...]]] = {}
        self.verified: Dict[Entry, int] = {}
        self._changed_in: Dict[Entry, int] = {}
        self._circle: Dict[Entry, List[Entry]] = {}
        self._verifying: Set[Entry] = set()
        # What read each input and each answer (for `changed` to find what may have
        # changed: `_maybe`, the answers to check before they are used).
        self._readers: Dict[Hashable, Set[Entry]] = {}
        self._parents: Dict[Entry, Set[Entry]] = {}
        self._maybe: Set[Entry] = set()
        self._old: Dict[Entry, Any] = {}  # answers being answered again: the old ones
        self._queries: List["weakref.ref[Query]"] = []

    @property
    def queries(self) -> List[Query]:
        return [q for q in (ref() for ref in self._queries) if q is not None]

    def query(self, name: str, compute: Callable[..., Any], bottom: Any = None,
              same: Optional[Callable[[Any, Any], bool]] = None,
              unknown: Any = _MISSING, outermost: bool = False) -> Query:
        made = Query(self, name, compute, bottom, same, unknown, outermost)
        self._queries.append(weakref.ref(made))
        return made

    def depend(self, key: Hashable) -> None:
        """The question being answered reads input `key` (kept in tracked runs)."""
        if self.track and self.stack:
            self.stack[-1].inputs.add(key)

    # --- answering ---------------------------------------------------------------------

    def ask(self, query: Query, key: Tuple[Any, ...]) -> Any:
        """`query`'s answer for `key`, computed now (it is in no memo)."""
        entry = (query, key)
        stack = self.stack
        frame = self._open.get(entry)
        if frame is not None:  # a circle back to an open question
            frame.asked_again = True
            given = self._given.get(entry)
            self._read(entry, frame)
            return given.value if given is not None else query.bottom
        given = self._given.get(entry)
        if given is not None and self._fresh(given):
            # answered in an open circle, and nothing it read has changed since
            self._read(entry, _open_end(given.reached))
            return given.value
        if len(stack) - self._outer >= MAX_OPEN:
            return query.unknown
        if not stack:
            return self._first(query, key)
        frame = _Frame(len(stack), len(self._log), self.track)
        stack.append(frame)
        self._open[entry] = frame
        try:
            changes = self._changes
            value = query._compute()(*key)
            if frame.low < frame.index or frame.asked_again:  # in a circle
                value = self._answer(query, key, entry, frame, value, changes)
            else:  # the commonest case: in no circle, answered for good
                query.memo[key] = value
                if len(self._log) != frame.first_log:
                    self._settle(frame, entry)
        finally:
            stack.pop()
            frame.open = False
            del self._open[entry]
        if self.track:
            self._record(entry, frame)
            if stack:
                stack[-1].children.append(entry)
        return value

    def _first(self, query: Query, key: Tuple[Any, ...]) -> Any:
        """A question asked from outside any other, with room for its deepest circle."""
        limit = sys.getrecursionlimit()
        room = limit + (MAX_OPEN + 5) * _FRAMES_PER_QUESTION  # (+ a rule's own frames)
        sys.setrecursionlimit(room)
        self._outer = 1 if query.outermost else 0
        try:
            frame = _Frame(0, len(self._log), self.track)
            entry = (query, key)
            self.stack.append(frame)
            self._open[entry] = frame
            try:
                changes = self._changes
                value = self._answer(query, key, entry, frame, query._compute()(*key),
                                     changes)
            except BaseException:
                self._given.clear()  # nothing provisional outlives a failed question
                self._log.clear()
                raise
            finally:
                self.stack.pop()
                frame.open = False
                del self._open[entry]
            if self.track:
                self._record(entry, frame)
            return value
        finally:
            self._outer = 0
            sys.setrecursionlimit(limit)

    def _answer(self, query: Query, key: Tuple[Any, ...], entry: Entry, frame: _Frame,
                value: Any, changes: int) -> Any:
        """The answer of an open question, given its first computed `value`: kept, or,
        in a circle, provisional until the circle's head is answered for good."""
        stack = self.stack
        rounds = 0
        while True:
            if frame.low < frame.index:  # in a circle whose head is further down
                frame.onto = stack[frame.low]
                self._give(entry, value, frame.onto, frame)
                parent = stack[frame.index - 1]
                if frame.low < parent.low:
                    parent.low = frame.low
                return value
            if frame.asked_again:
                given = self._given.get(entry)
                rounds += 1
                if rounds < MAX_ROUNDS and (self._changes != changes or value != (
                        given.value if given is not None else query.bottom)):
                    # the head of a circle whose answers still grow: answer it again
                    self._give(entry, value, frame, frame)
                    self._round += 1
                    frame.asked_again = False
                    frame.log_start = len(self._log)
                    if frame.children:
                        frame.children.clear()
                    changes = self._changes
                    value = query._compute()(*key)
                    continue
            query.memo[key] = value
            self._settle(frame, entry)
            return value

    def _read(self, entry: Entry, reached: _Frame) -> None:
        """The open question on top read the provisional answer `entry` of the circle
        that reaches `reached`."""
        top = self.stack[-1]
        if reached.index < top.low:
            top.low = reached.index
        if self.track:
            top.children.append(entry)

    def _fresh(self, given: _Given) -> bool:
        """Whether a provisional answer was given in the current round of its circle
        (every round answers again what the round before answered)."""
        return given.round == self._round

    def _give(self, entry: Entry, value: Any, reached: _Frame, frame: _Frame) -> None:
        # A change is an answer other than the one its readers had: the one given before,
        # or the bottom (what a circle reads of a question not answered yet).
        before = self._given.get(entry)
        if value != (before.value if before is not None else entry[0].bottom):
            self._changes += 1
        self._given[entry] = _Given(value, reached, self._round)
        self._log.append(entry)

    def _settle(self, head: _Frame, head_entry: Entry) -> None:
        """The head of a circle (or a question in none) has its answer for good: so has
        every question answered in the circle's last round; earlier rounds' answers go."""
        log = self._log
        if len(log) == head.first_log:
            return
        given = self._given
        members: List[Entry] = []
        for entry in log[head.log_start:]:
            known = given.get(entry)
            if known is not None:
                entry[0].memo[entry[1]] = known.value
                members.append(entry)
        if self.track and members:
            members = list(dict.fromkeys(members))
            members.append(head_entry)
            for member in members:
                self._circle[member] = members
        for entry in log[head.first_log:]:
            given.pop(entry, None)
        del log[head.first_log:]

    # --- tracking and forgetting -------------------------------------------------------

    def _record(self, entry: Entry, frame: _Frame) -> None:
        """What a (tracked) answer read, and whether it changed from the one before."""
        children = tuple(dict.fromkeys(frame.children))
        self._what_read[entry] = (tuple(frame.inputs), children)
        self.verified[entry] = self.revision
        self._maybe.discard(entry)
        readers, parents = self._readers, self._parents
        for key in frame.inputs:
            found = readers.get(key)
            if found is None:
                readers[key] = {entry}
            else:
                found.add(entry)
        for child in children:
            found = parents.get(child)
            if found is None:
                parents[child] = {entry}
            else:
                found.add(entry)
        old = self._old.pop(entry, _MISSING)
        if old is _MISSING:
            self._changed_in[entry] = self.revision
            return
        value = entry[0].memo.get(entry[1], _MISSING)
        same = entry[0].same
        if not (old is value or (same is not None and value is not _MISSING and
                                 same(old, value))):
            self._changed_in[entry] = self.revision

    def changed(self, keys: Iterable[Hashable], dead: Iterable[Entry] = ()) -> int:
        """Inputs `keys` have changed: a new revision, in which every answer that read
        one, directly or through others, is checked before it is used (`verify`); how
        many are to be. The `dead` answers (about objects that are gone) are forgotten."""
        self.revision += 1
        frontier: Set[Entry] = set()
        readers, parents = self._readers, self._parents
        for key in keys:
            self._input_changed[key] = self.revision
            found = readers.get(key)
            if found:
                frontier |= found
        for entry in dead:
            found = parents.get(entry)
            if found:
                frontier |= found
            self._forget(entry)
        maybe = self._maybe
        frontier -= maybe
        while frontier:  # (a level of readers at a time: set operations, not entries)
            maybe |= frontier
            above: Set[Entry] = set()
            for entry in frontier:
                found = parents.get(entry)
                if found:
                    above |= found
            frontier = above - maybe
        return len(maybe)

    def _forget(self, entry: Entry) -> None:
        self._maybe.discard(entry)
        entry[0].memo.pop(entry[1], None)
        self._what_read.pop(entry, None)
        self.verified.pop(entry, None)
        self._changed_in.pop(entry, None)
        self._circle.pop(entry, None)

    def verify(self, entry: Entry) -> Any:
        """The answer of `entry` in this revision: the kept one if nothing it read has
        changed since it was last found to hold (each answer it read checked first), else
        answered again. The answers of a circle hold, or are answered again, together:
        what one of them reads of another is not checked, what they read outside is."""
        query, key = entry
        if entry not in self._what_read:
            return query.memo[key]
        members = self._circle.get(entry)
        verifying = self._verifying
        if members is None:
            verifying.add(entry)
            try:
                holds = self._holds(entry, ())
            finally:
                verifying.discard(entry)
        else:
            inside = set(members)
            verifying.update(members)
            try:
                holds = all(self._holds(member, inside) for member in members)
            finally:
                verifying.difference_update(members)
        if self.verified.get(entry) == self.revision and key in query.memo:
            return query.memo[key]  # (answered again meanwhile, asked in a circle)
        if holds:
            revision, verified, maybe = self.revision, self.verified, self._maybe
            for member in members or (entry,):
                verified[member] = revision
                maybe.discard(member)
            return query.memo[key]
        self.reopen(entry)
        return query(*key)

    def _holds(self, entry: Entry, inside) -> bool:
        """Whether nothing `entry` read (outside its circle, `inside`) has changed since it
        was last found to hold; what it read that may have changed is checked first."""
        if entry[1] not in entry[0].memo:
            return False
        verified = self.verified.get(entry, -1)
        inputs, children = self._what_read.get(entry, ((), ()))
        changed = self._input_changed.get
        for k in inputs:
            if changed(k, 0) > verified:
                return False
        maybe, verifying, changed_in = self._maybe, self._verifying, self._changed_in.get
        for child in children:
            if child in maybe:
                if child in verifying or child in inside:
                    if child in inside:
                        continue
                    return False  # (a circle through what is being checked: answer it)
                self.verify(child)
            elif child in inside:
                continue
            if changed_in(child, 0) > verified or child[1] not in child[0].memo:
                return False
        return True

    def reopen(self, entry: Entry) -> None:
        """`entry` is to be answered again, and so is its circle, together: their kept
        answers set aside (`_old`) for what read them to compare."""
        for member in self._circle.get(entry, [entry]):
            old = member[0].memo.pop(member[1], _MISSING)
            if old is not _MISSING:
                self._old[member] = old
            self._circle.pop(member, None)

    def clear(self) -> None:
        """Forget every answer."""
        for query in self.queries:
            query.memo.clear()
        self._what_read.clear()
        self.verified.clear()
        self._changed_in.clear()
        self._circle.clear()
        self._readers.clear()
        self._parents.clear()
        self._maybe.clear()

    def answers(self) -> Dict[str, int]:
        """How many answers each query keeps (for tests and measurements)."""
        return {q.name: len(q.memo) for q in self.queries}


def _open_end(frame: _Frame) -> _Frame:
    """The open question a closed one's circle reached, following closed ones down."""
    while not frame.open and frame.onto is not None:
        frame = frame.onto
    return frame
