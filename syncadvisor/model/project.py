"""Linking: the files of one run -> the model the rules read.

Per-file models are built (and cached) independently; linking adds what needs
the whole run: strategy contexts through calls across modules, Keras class
hierarchies, the normalised variable sites, and their usage in replica or
cross-replica context.
"""
from __future__ import annotations

import os
from functools import partial
from typing import Dict, Iterable, List, Optional, Tuple

from ..records import record
from .contexts import ContextAnalysis, ProjectIndex
from .facts import BOUND_QNAME, SOURCE_STATE, Bound, FileModel, Source
from . import tfapi
from .usage import PER_REPLICA, REPLICA_INVARIANT, UpdateInfo, UsageAnalysis
from .variables import VariableSite, instance_kind, keras_class_kind, variable_sites


@record
class LinkedFile:
    model: FileModel
    sites: List[VariableSite]
    aliases: Dict[str, str]  # qualified name -> a module-level name bound to it
    project: "Project"


class Project:
    def __init__(self, models: Iterable[FileModel]):
        self.index = ProjectIndex(models)
        self.contexts = ContextAnalysis(self.index)
        # A function of the index, not the bound method: a Project must not be in a
        # reference cycle, so that it is freed as soon as a run is done with it (the
        # check command runs without the cycle collector).
        self.usage = UsageAnalysis(self.index, self.contexts, partial(_keras_kind, self.index))
        self.contexts.add_instance_calls(self.usage.instance_calls)
        self.sites: Dict[str, List[VariableSite]] = {}
        by_key: Dict[Tuple[str, int], VariableSite] = {}
        for fm in self.index.files:
            sites = variable_sites(fm, self.index, self.contexts, self.usage.instances_of)
            self.sites[fm.path] = sites
            for site in sites:
                by_key[site.key] = site
        for key, updates in self.usage.updates().items():
            if key in by_key:
                by_key[key].updates.extend(updates)
        for key, reads in self.usage.reads().items():
            if key in by_key:
                by_key[key].reads.extend(reads)
        _settle_invariance(self.usage, by_key)
        self.by_key = by_key
        self._holders: Optional[Dict[Tuple[str, int], str]] = None
        self.memo: Dict[str, object] = {}  # what rules compute once per run (RuleContext.once)

    def holder(self, site: VariableSite) -> Optional[str]:
        """What a checkpoint or SavedModel can reach the variable through (a trackable
        class that stores it, MODULE_GLOBAL, ESCAPES), or None: found for the whole run
        the first time a rule asks."""
        if self._holders is None:
            self._holders = self.usage.holders()
        return self._holders.get(site.key) or self.usage.lexical_holder(site.call, site.key)

    def keras_kind(self, class_id: str) -> Tuple[Optional[str], Optional[str]]:
        return _keras_kind(self.index, class_id)

    def link(self, fm: FileModel) -> LinkedFile:
        return LinkedFile(fm, self.sites.get(fm.path, []), aliases(fm), self)


def _settle_invariance(usage: UsageAnalysis, by_key: Dict[Tuple[str, int], VariableSite]
                       ) -> None:
    """Each update whose value is the same on every replica as long as the state it
    reads is (`UpdateInfo.depends`) becomes REPLICA_INVARIANT unless that state denotes a
    variable that is not in sync: ON_READ (each replica reads its own copy), of unknown
    synchronization, or with aggregation NONE and an update that can differ; or an object
    each replica keeps its own state in (a Keras 3 metric). The greatest fixpoint: updates
    are assumed the same everywhere until shown otherwise, so that a variable written from
    itself (`u.assign(f(u, kernel))`) stays in sync. An update that stays PER_REPLICA
    names the state that makes it so (`UpdateInfo.source`)."""
    pending: List[Tuple[UpdateInfo, List[Tuple[Bound, List[VariableSite]]]]] = []
    seen = set()
    for site in by_key.values():
        for update in site.updates:
            if update.value_kind != PER_REPLICA or update.depends is None or id(update) in seen:
                continue
            seen.add(id(update))
            read = []
            for bound in update.depends:
                if _replica_local(usage, bound, update.path):
                    update.source = _state_source(bound)
                    break
                keys = usage.variables_of(bound, update.path)
                if any(key not in by_key for key in keys):
                    break  # a variable the run does not see
                if keys:
                    read.append((bound, [by_key[key] for key in keys]))
            else:
                update.value_kind = REPLICA_INVARIANT
                pending.append((update, read))
    changed = True
    while changed:
        changed = False
        for update, reads in pending:
            if update.value_kind != REPLICA_INVARIANT:
                continue
            for bound, sites in reads:
                if not all(map(_in_sync, sites)):
                    update.value_kind = PER_REPLICA
                    update.source = _state_source(bound)
                    changed = True
                    break


def _replica_local(usage: UsageAnalysis, bound: Bound, path: str) -> bool:
    """Whether `bound` may denote an object whose state each replica keeps its own copy
    of and reads back as its own (`tfapi.REPLICA_LOCAL_OBJECTS`)."""
    return any(instance_kind(class_id, usage.index) in tfapi.REPLICA_LOCAL_OBJECTS
               for class_id in usage.instances_of(bound, path))


def _state_source(bound: Bound) -> Optional[Source]:
    return Source(SOURCE_STATE, bound.text, bound.span) if bound.span is not None else None


def _in_sync(site: VariableSite) -> bool:
    """Whether every replica reads the same value of the variable, as far as the run shows."""
    if site.sync.member not in (tfapi.SYNC_AUTO, tfapi.SYNC_ON_WRITE):
        return False
    return site.agg.member != tfapi.AGG_NONE or all(
        u.value_kind != PER_REPLICA for u in site.updates if u.replica_context is not False)


def _keras_kind(index: ProjectIndex, class_id: str) -> Tuple[Optional[str], Optional[str]]:
    fm = index.class_files.get(class_id)
    if fm is None:
        return None, None
    return keras_class_kind(class_id, fm, index)


def source_root(fm: FileModel) -> str:
    """The folder a file's module name is relative to (above its top-level package)."""
    folder = os.path.dirname(os.path.abspath(fm.path))
    depth = fm.module.count(".") + (1 if fm.path.endswith("__init__.py") else 0)
    for _ in range(depth):
        folder = os.path.dirname(folder)
    return folder


def projects(models: Iterable[FileModel]) -> List[Project]:
    """One project per set of files whose module names do not clash.

    Two folders checked together may both have a `model.py` (or a copy of the same
    package): their modules share names, and linking them as one would mix one's
    functions with the other's. Source roots whose module names clash go to separate
    projects; the others join the first project, so a `tests/` folder still links
    with the `src/` package it imports.
    """
    models = list(models)
    by_root: Dict[str, List[FileModel]] = {}
    for fm in models:
        by_root.setdefault(source_root(fm), []).append(fm)
    groups: List[Tuple[set, List[FileModel]]] = []
    for root in sorted(by_root):
        names = {fm.module for fm in by_root[root]}
        for taken, members in groups:
            if not taken & names:
                taken |= names
                members.extend(by_root[root])
                break
        else:
            groups.append((set(names), list(by_root[root])))
    return [Project(members) for _, members in groups] or [Project([])]


def aliases(fm: FileModel) -> Dict[str, str]:
    """The module-level name for each imported qualified name (the first one wins)."""
    table: Dict[str, str] = {}
    for name, bounds in fm.globals.items():
        if len(bounds) == 1 and bounds[0].kind == BOUND_QNAME and bounds[0].qname:
            table.setdefault(bounds[0].qname, name)
    return table
