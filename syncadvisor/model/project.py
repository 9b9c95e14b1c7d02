"""Linking: the files of one run -> the model the rules read.

Per-file models are built (and cached) independently; linking adds what needs
the whole run: strategy contexts through calls across modules, Keras class
hierarchies, and the normalised variable sites.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Iterable, List

from .contexts import ContextAnalysis, ProjectIndex
from .facts import FileModel
from .variables import VariableSite, variable_sites


@dataclass
class LinkedFile:
    model: FileModel
    sites: List[VariableSite]
    aliases: Dict[str, str]  # qualified name -> a module-level name bound to it
    project: "Project"


class Project:
    def __init__(self, models: Iterable[FileModel]):
        self.index = ProjectIndex(models)
        self.contexts = ContextAnalysis(self.index)

    def link(self, fm: FileModel) -> LinkedFile:
        return LinkedFile(fm, variable_sites(fm, self.index, self.contexts), aliases(fm), self)


def aliases(fm: FileModel) -> Dict[str, str]:
    """The module-level name for each imported qualified name (the first one wins)."""
    table: Dict[str, str] = {}
    for name, bounds in fm.globals.items():
        if len(bounds) == 1 and bounds[0].kind == "qname" and bounds[0].qname:
            table.setdefault(bounds[0].qname, name)
    return table
