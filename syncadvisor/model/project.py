"""Linking: the files of one run -> the facts the rules read, asked for on demand.

A `Project` holds the per-file models and answers questions over them (`db.py`): which
strategy a function runs under, what a reference denotes, which updates and reads each
variable site has. Nothing is computed before a rule asks: the command asks about every
file, the language server about the open ones. With `track`, `replace` swaps one file's
model and forgets only the answers that read what changed in it.
"""
from __future__ import annotations

import os
from typing import Dict, Hashable, Iterable, List, Optional, Tuple

from ..records import record
from . import calls as calls_module
from . import objects as objects_module
from . import replica as replica_module
from . import tfapi
from . import usage as usage_module
from .calls import CallGraph
from .contexts import Strategies
from .db import Db
from .facts import BOUND_QNAME, SOURCE_STATE, Bound, FileModel, Source
from .index import ProjectIndex
from .objects import Objects, VarKey
from .replica import Replica
from .usage import PER_REPLICA, REPLICA_INVARIANT, UpdateInfo, Usage
from .variables import VariableSite, instance_kind, keras_class_kind, variable_sites

_TABLES = (objects_module.TABLES + calls_module.TABLES + replica_module.TABLES
           + usage_module.TABLES)


@record
class LinkedFile:
    model: FileModel
    sites: List[VariableSite]
    aliases: Dict[str, str]  # qualified name -> a module-level name bound to it
    project: "Project"


class Project:
    def __init__(self, models: Iterable[FileModel], track: bool = False):
        db = self.db = Db(track)
        index = self.index = ProjectIndex(db, _TABLES)
        index.add_all(models)
        self.objects = Objects(db, index)
        self.calls = CallGraph(db, index, self.objects)
        self.strategies = Strategies(db, index, self.objects, self.calls)
        self.keras_kind = db.query("keras_kind", self._keras_kind, (None, None))
        self.replica = Replica(db, index, self.objects, self.calls, self.strategies,
                               self.keras_kind)
        self.usage = Usage(db, index, self.objects, self.strategies, self.replica)
        self._file_sites = db.query("file_sites", self._normalised, ())
        self._site_at = db.query("site_at", self._normalised_site)
        self.site = db.query("site", self._linked_site)
        self.differs = db.query("differs", self._differs, False)

    # --- files -------------------------------------------------------------------------

    @property
    def files(self) -> List[FileModel]:
        return list(self.index.files.values())

    def replace(self, path: str, fm: Optional[FileModel]) -> None:
        """The run's file at `path` is now `fm` (None: gone): what changed in it is a
        new revision of the inputs, and the answers that read it are checked before they
        are used again (`Db.verify`)."""
        dead = self.objects.dead(path)
        self.db.changed(self.index.replace(path, fm), dead)
        self.objects.forget(path)

    # --- variable sites ----------------------------------------------------------------

    def _normalised(self, path: str) -> Tuple[VariableSite, ...]:
        """A file's variable sites, settings normalised, without their uses."""
        fm = self.index.file_at(path)
        return tuple(variable_sites(fm, self.index, self.strategies, self.objects.instances_of))

    def _normalised_site(self, path: str, index: int) -> Optional[VariableSite]:
        for site in self._file_sites(path):
            if site.index == index:
                return site
        return None

    def _linked_site(self, path: str, index: int) -> Optional[VariableSite]:
        """A variable site with its updates and reads, the updates' value kinds settled
        (`_settled`); None where the run makes no variable there."""
        site = self._site_at(path, index)
        if site is None:
            return None
        return VariableSite(site.path, site.call, site.api, site.sync, site.agg,
                            site.trainable, site.trainable_arg, site.dtype, site.dtype_source,
                            site.contexts, site.unexpected, site.index,
                            [self._settled(u) for u in self.usage.updates_of(path, index)],
                            list(self.usage.reads_of(path, index)), site.written_trainable)

    def _settled(self, update: UpdateInfo) -> UpdateInfo:
        """An update whose value is the same on every replica as long as the state it
        reads is (`UpdateInfo.depends`) is REPLICA_INVARIANT unless that state denotes a
        variable whose replicas may read different values (`differs`), a variable the
        run does not see, or an object each replica keeps its own state in (a Keras 3
        metric). One that stays PER_REPLICA names the state that makes it so
        (`UpdateInfo.source`)."""
        if update.value_kind != PER_REPLICA or update.depends is None:
            return update
        read: List[Tuple[Bound, List[VarKey]]] = []
        for bound in update.depends:
            if _replica_local(self, bound, update.path):
                return _kind(update, PER_REPLICA, _state_source(bound))
            keys = self.objects.variables_of(bound, update.path)
            if any(self._site_at(*key) is None for key in keys):
                return update  # a variable the run does not see
            if keys:
                read.append((bound, keys))
        for bound, keys in read:
            if any(self.differs(*key) for key in keys):
                return _kind(update, PER_REPLICA, _state_source(bound))
        return _kind(update, REPLICA_INVARIANT, update.source)

    def _differs(self, path: str, index: int) -> bool:
        """Whether the replicas of a variable may read different values of it: ON_READ
        (each reads its own copy), of unknown synchronization, or with aggregation NONE
        and an update in replica context that can differ. The least fixpoint: a variable
        written from itself (`u.assign(f(u, kernel))`) stays in sync."""
        site = self._site_at(path, index)
        if site is None or site.sync.member not in (tfapi.SYNC_AUTO, tfapi.SYNC_ON_WRITE):
            return True
        return site.agg.member == tfapi.AGG_NONE and any(
            u.replica_context is not False and self._settled(u).value_kind == PER_REPLICA
            for u in self.usage.updates_of(path, index))

    def linked(self) -> Dict[VarKey, VariableSite]:
        """Every variable site of the run, linked, in the run's order."""
        found: Dict[VarKey, VariableSite] = {}
        for fm in self.index.all_files():
            for site in self._file_sites(fm.path):
                found[site.key] = self.site(*site.key)
        return found

    def sites_of(self, path: str) -> List[VariableSite]:
        """A file's variable sites, with their updates and reads."""
        return [self.site(*site.key) for site in self._file_sites(path)]

    def sites_updated_at(self, path: str) -> List[VariableSite]:
        """The variable sites with an update placed in `path` (made there, or reached
        through a call made there), in the run's order."""
        found = (self.site(*key) for key in self.usage.updated_at(path))
        return [site for site in found if site is not None]

    @property
    def sites(self) -> Dict[str, List[VariableSite]]:
        """Every file's variable sites (made for the whole run when asked)."""
        return {path: self.sites_of(path) for path in self.index.files}

    @property
    def by_key(self) -> Dict[VarKey, VariableSite]:
        return self.linked()

    def held(self, site: VariableSite) -> bool:
        """Whether anything keeps the variable where a checkpoint or SavedModel reaches it
        (`holder` is not None): where it is created says so first, and only where that
        does not is the whole run's table asked."""
        return self.usage.lexical_holder(site.call, site.key) is not None or \
            site.key in self.usage.holders()

    def holder(self, site: VariableSite) -> Optional[str]:
        """What a checkpoint or SavedModel can reach the variable through (a trackable
        class that stores it, MODULE_GLOBAL, ESCAPES), or None. A variable a class makes
        on `self` (`self.add_weight`) is that class's, without the whole run's table."""
        lexical = self.usage.lexical_holder(site.call, site.key)
        if site.call.on_self and lexical is not None and self.index.is_class(lexical):
            return lexical
        return self.usage.holders().get(site.key) or lexical

    def _keras_kind(self, class_id: str) -> Tuple[Optional[str], Optional[str]]:
        fm = self.index.class_file(class_id)
        if fm is None:
            return None, None
        return keras_class_kind(class_id, fm, self.index)

    def link(self, fm: FileModel) -> LinkedFile:
        return LinkedFile(fm, self.sites_of(fm.path), aliases(fm), self)


def _kind(update: UpdateInfo, kind: str, source: Optional[Source]) -> UpdateInfo:
    """`update` settled to `kind`, for `source` (itself where nothing changes)."""
    if kind == update.value_kind and source is update.source:
        return update
    return UpdateInfo(update.path, update.method, update.value, kind, update.span,
                      update.function, update.where, update.contexts, update.function_style,
                      update.accumulates, update.depends, source, update.tests)


def _replica_local(project: Project, bound: Bound, path: str) -> bool:
    """Whether `bound` may denote an object whose state each replica keeps its own copy
    of and reads back as its own (`tfapi.REPLICA_LOCAL_OBJECTS`)."""
    return any(instance_kind(class_id, project.index) in tfapi.REPLICA_LOCAL_OBJECTS
               for class_id in project.objects.instances_of(bound, path))


def _state_source(bound: Bound) -> Optional[Source]:
    return Source(SOURCE_STATE, bound.text, bound.span) if bound.span is not None else None


def source_root(fm: FileModel) -> str:
    """The folder a file's module name is relative to (above its top-level package)."""
    folder = os.path.dirname(os.path.abspath(fm.path))
    depth = fm.module.count(".") + (1 if fm.path.endswith("__init__.py") else 0)
    for _ in range(depth):
        folder = os.path.dirname(folder)
    return folder


def groups(models: Iterable[FileModel]) -> List[List[FileModel]]:
    """The files of a run in groups whose module names do not clash.

    Two folders checked together may both have a `model.py` (or a copy of the same
    package): their modules share names, and linking them as one would mix one's
    functions with the other's. Source roots whose module names clash go to separate
    groups; the others join the first group, so a `tests/` folder still links with the
    `src/` package it imports.
    """
    models = list(models)
    by_root: Dict[str, List[FileModel]] = {}
    for fm in models:
        by_root.setdefault(source_root(fm), []).append(fm)
    found: List[Tuple[set, List[FileModel]]] = []
    for root in sorted(by_root):
        names = {fm.module for fm in by_root[root]}
        for taken, members in found:
            if not taken & names:
                taken |= names
                members.extend(by_root[root])
                break
        else:
            found.append((set(names), list(by_root[root])))
    return [members for _, members in found] or [[]]


def projects(models: Iterable[FileModel], track: bool = False) -> List[Project]:
    """One project per group of files whose module names do not clash (`groups`)."""
    return [Project(members, track) for members in groups(models)]


def aliases(fm: FileModel) -> Dict[str, str]:
    """The module-level name for each imported qualified name (the first one wins)."""
    table: Dict[str, str] = {}
    for name, bounds in fm.globals.items():
        if len(bounds) == 1 and bounds[0].kind == BOUND_QNAME and bounds[0].qname:
            table.setdefault(bounds[0].qname, name)
    return table


__all__ = ["Project", "LinkedFile", "projects", "groups", "aliases", "source_root", "Hashable"]
