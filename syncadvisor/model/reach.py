"""Which of a run's unmodelled modules the modelled ones lead into: the run models a file
the prefilter dropped only when a name linking follows goes through it (`Run`'s second
pass), such as `pkg/compat.py` doing `import tf_keras as tfk`, whose `tfk.layers.Layer`
is a base class in `pkg/model.py`.
"""
from __future__ import annotations

from typing import Collection, Iterable, Iterator, Set

from . import tfapi
from .db import Db
from .facts import BOUND_CALL, FileModel
from .index import ProjectIndex

_MAX_DEPTH = 8
_REPLICA_METHODS = frozenset().union(*tfapi.KERAS_REPLICA_METHODS.values())
_KERAS_PREFIXES = tuple(prefix for prefix, _ in tfapi.KERAS_FAMILY_PREFIXES)


def followed_names(index: ProjectIndex, files: Iterable[FileModel]) -> Iterator[str]:
    """The names whose meaning linking may take from another module (`external_name`),
    where it can change what the rules see: the bases of the classes Keras may run per
    replica (a method of `tfapi.KERAS_REPLICA_METHODS`) or that create variables, and of
    their project ancestors; the callees of function-style creations; and, in a file that
    calls a creation method on an object (`dense.add_weight(...)`), the classes it
    instantiates. Other names (a helper's class, a call of a function) would cost a parse
    of the module they lead into for nothing the rules read."""
    interesting: Set[str] = set()
    for fm in files:
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
                if index.is_class(owner):
                    interesting.add(owner)
            receivers = receivers or creation.receiver is not None
        if receivers:
            for edge in fm.calls:
                qname = edge.callee.qname
                if qname and edge.callee.kind == BOUND_CALL and \
                        qname.rpartition(".")[2][:1].isupper():
                    yield qname
    for cid in interesting:
        for ancestor in index.mro(cid):
            ancestor_info = index.klass(ancestor)
            if ancestor_info is not None:
                yield from ancestor_info.bases


def modules_reached(index: ProjectIndex, unmodelled: Collection[str],
                    names: Iterable[str]) -> Set[str]:
    """The modules among `unmodelled` (of files in the run that are not in `index`) that
    `names` (`followed_names`) lead into, directly or through modules of the index: those
    whose bindings `ProjectIndex.external_name` would need."""
    reached: Set[str] = set()
    if not unmodelled:
        return reached
    modules = {fm.module for fm in index.files.values()}
    # Module names have at most this many dots: no longer prefix is worth a lookup.
    depth = max(m.count(".") for m in (*modules, *unmodelled)) + 1
    seen: Set[str] = set()
    for qname in names:
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
            followed = index.followed(qname, module)
            if followed is None:
                break
            qname = followed
    return reached


def index_of(models: Iterable[FileModel]) -> ProjectIndex:
    """An index of `models` for following names (nothing is asked of it but lookups)."""
    index = ProjectIndex(Db())
    index.add_all(models)
    return index
