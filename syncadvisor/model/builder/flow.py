"""Which bindings of a name reach a use, in the code of the scope that binds it.

Python runs a scope's statements in order: an assignment replaces what the name held
for the code after it, unless it is in a branch (`if`, `match`, `try`, a loop's body)
that may not run, after which the name holds what either way gave it. A use sees the
bindings that reach it (`Flow.use`), not every binding of its scope: `net = Net()`
then `net = Net.from_config(config)` in a strategy's scope are two objects, and a use
after the second sees the second. A use inside a loop also sees what the end of the
loop's body binds (the iteration before). What a function body or a later caller sees
of another scope's names is not flow (they run later): those still see every binding.
"""
from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

from ..names import Binding

_ABSENT: Tuple[Binding, ...] = ()
Reaching = Tuple[Binding, ...]


class Flow:
    """The bindings reaching the walk's position in one scope's own code."""

    __slots__ = ("reaching", "_frames", "_loops", "_tries")

    def __init__(self) -> None:
        self.reaching: Dict[str, Reaching] = {}
        # Open branches, innermost last: what each name held before the branch changed it.
        self._frames: List[Dict[str, Reaching]] = []
        # Open loops, innermost last: the uses in each body, to see the body's end too.
        self._loops: List[List[Tuple[str, List[Binding]]]] = []
        # Open `try` bodies, innermost last: every binding each has made, by name (a
        # handler may start after any of them).
        self._tries: List[Dict[str, List[Binding]]] = []

    def bound(self, name: str, binding: Binding) -> None:
        self.set(name, (binding,))

    def set(self, name: str, reaching: Reaching) -> None:
        frames = self._frames
        if frames and name not in frames[-1]:
            frames[-1][name] = self.reaching.get(name, _ABSENT)
        self.reaching[name] = reaching
        if self._tries:
            made = self._tries[-1].setdefault(name, [])
            for binding in reaching:
                _add(made, binding)

    def use(self, name: str) -> Sequence[Binding]:
        """The bindings of `name` that reach this use (a list the enclosing loops'
        ends are added to, inside loops)."""
        found = self.reaching.get(name, _ABSENT)
        if not self._loops:
            return found
        seen = list(found)
        self._loops[-1].append((name, seen))
        return seen

    def begin(self) -> None:
        """A branch starts: what it binds is undone at its `end`."""
        self._frames.append({})

    def end(self) -> Dict[str, Reaching]:
        """The branch ends: what it left each name it bound holding; the state before
        it is back."""
        log = self._frames.pop()
        reaching = self.reaching
        changes = {name: reaching.get(name, _ABSENT) for name in log}
        for name, before in log.items():
            if before:
                reaching[name] = before
            else:
                reaching.pop(name, None)
        return changes

    def join(self, *branches: Dict[str, Reaching]) -> None:
        """After branches of which one ran (the state before stands for one that binds
        nothing): each name holds what any of them left it."""
        names = dict.fromkeys(name for changes in branches for name in changes)
        for name in names:
            before = self.reaching.get(name, _ABSENT)
            merged: List[Binding] = []
            for changes in branches:
                for binding in changes.get(name, before):
                    _add(merged, binding)
            self.set(name, tuple(merged))

    def begin_try(self) -> None:
        self._tries.append({})
        self.begin()

    def end_try(self) -> Tuple[Dict[str, Reaching], Dict[str, Reaching]]:
        """A `try` body ends: (what it left, as `end`; what a handler may start from for
        each name it bound: what came before, or any binding it made)."""
        changes = self.end()
        made = self._tries.pop()
        if self._tries:
            for name, bindings in made.items():
                outer = self._tries[-1].setdefault(name, [])
                for binding in bindings:
                    _add(outer, binding)
        starts: Dict[str, Reaching] = {}
        for name, bindings in made.items():
            start = list(self.reaching.get(name, _ABSENT))
            for binding in bindings:
                _add(start, binding)
            starts[name] = tuple(start)
        return changes, starts

    def begin_loop(self) -> None:
        self._loops.append([])
        self.begin()

    def end_loop(self) -> None:
        """A loop's body ends: the uses in it also see what its end binds, and the code
        after it what the body left or what came before (it may not run)."""
        changes = self.end()
        uses = self._loops.pop()
        for name, seen in uses:
            for binding in changes.get(name, _ABSENT):
                _add(seen, binding)
        if self._loops:
            self._loops[-1].extend(uses)
        self.join(changes, {})


def _add(found: List[Binding], binding: Binding) -> None:
    """`binding` into `found` once (bindings are told apart by identity)."""
    if not any(b is binding for b in found):
        found.append(binding)
