"""Names -> qualified names, from a cheap table of bindings per scope.

No libcst metadata providers: while walking the tree the builder records every
binding (imports, assignments, parameters, definitions) in the scope it belongs
to, with a sequence number. Lookups happen once the walk is over, so a function
body sees module names bound after it, as Python does.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..records import field, record
from .facts import BOUND_QNAME, Bound

MODULE = "module"
CLASS = "class"
FUNCTION = "function"
COMPREHENSION = "comprehension"

_MAX_ALIAS_DEPTH = 12


@record
class Binding:
    seq: int
    bound: Bound
    # For an alias `x = a.b.c`: the dotted parts, looked up where they were written.
    alias_parts: Optional[Tuple[str, ...]] = None
    alias_scope: Optional["Scope"] = None


@record
class Scope:
    kind: str
    parent: Optional["Scope"]
    bindings: Dict[str, List[Binding]] = field(default_factory=dict)
    # While the builder walks the scope's code: what reaches its position (builder/flow.py).
    flow: Any = field(default=None, compare=False)

    def bind(self, name: str, binding: Binding) -> None:
        self.bindings.setdefault(name, []).append(binding)


class PendingRef:
    """A dotted name as written, to be resolved after the walk. A plain class with
    slots: a walk makes one per name it meets, the commonest object it makes."""

    __slots__ = ("scope", "seq", "parts", "reach")

    def __init__(self, scope: Scope, seq: int, parts: Tuple[str, ...]):
        self.scope = scope
        self.seq = seq
        self.parts = parts
        # For a plain name used in the scope that binds it: the bindings that reach the
        # use (builder/flow.py); None where every binding of the scope may.
        self.reach: Optional[Sequence[Binding]] = None


class NameResolver:
    """Resolves dotted names against the scopes of one file."""

    def __init__(self, rewrites: Sequence[Tuple[str, str]]):
        self._rewrites = tuple(rewrites)
        self._cache: Dict[str, str] = {}

    def canonical(self, qname: str) -> str:
        cached = self._cache.get(qname)
        if cached is not None:
            return cached
        dotted = qname + "."
        for old, new in self._rewrites:
            if dotted.startswith(old):
                dotted = new + dotted[len(old):]
        result = dotted[:-1]
        self._cache[qname] = result
        return result

    @staticmethod
    def visible(scope: Scope, name: str) -> Tuple[bool, List[Binding]]:
        """The bindings of `name` in the scope a use in `scope` sees it in (every one it
        may have there), and whether that is the use's own scope; no bindings: unbound."""
        own = True
        current: Optional[Scope] = scope
        while current is not None:
            if current.kind == CLASS and not own:
                current = current.parent  # methods do not see class-body names
                continue
            entries = current.bindings.get(name)
            if entries:
                return own, entries
            own = False
            current = current.parent
        return False, []

    def lookup(self, scope: Scope, name: str, seq: int) -> Optional[Binding]:
        own, entries = self.visible(scope, name)
        if not entries:
            return None
        if own:  # the last binding before the use, else the first (a use before any)
            for binding in reversed(entries):
                if binding.seq < seq:
                    return binding
            return entries[0]
        return entries[-1]

    def resolve(self, ref: PendingRef, depth: int = 0) -> Optional[str]:
        """The canonical qualified name of a dotted name, or None if it is local."""
        if not ref.parts or depth > _MAX_ALIAS_DEPTH:
            return None
        binding = self.lookup(ref.scope, ref.parts[0], ref.seq)
        if binding is None:
            return None
        head = self.resolve_binding(binding, depth)
        if head is None:
            return None
        rest = ref.parts[1:]
        return self.canonical(".".join((head,) + rest)) if rest else head

    def resolve_binding(self, binding: Binding, depth: int = 0) -> Optional[str]:
        if binding.alias_parts is not None and binding.alias_scope is not None:
            return self.resolve(
                PendingRef(binding.alias_scope, binding.seq, binding.alias_parts), depth + 1
            )
        if binding.bound.kind == BOUND_QNAME and binding.bound.qname:
            return self.canonical(binding.bound.qname)
        return None
