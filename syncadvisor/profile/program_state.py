"""What the child process of `--run` keeps for the run in progress, and which files are
the program's (no TensorFlow at import).

TensorFlow calls back into the hooks (`program_traffic.py`, `program_variables.py`) from
its own code, and sometimes from its own threads, so the run in progress is this module's
`current`, set by `program.py` for the length of one run and None between runs.
"""
from __future__ import annotations

import os
import sys
from typing import Any, Dict, List, Optional, Set, Tuple


class Costs:
    """Cross-device traffic: calls, bytes, and the random ops a traced step draws."""

    __slots__ = ("reductions", "broadcasts", "bytes", "unknown_bytes", "random")

    def __init__(self) -> None:
        self.reductions = 0
        self.broadcasts = 0
        self.bytes = 0
        self.unknown_bytes = 0
        self.random: Set[str] = set()

    def become(self, other: "Costs") -> None:
        self.reductions, self.broadcasts = other.reductions, other.broadcasts
        self.bytes, self.unknown_bytes = other.bytes, other.unknown_bytes
        self.random = set(other.random)

    def add(self, other: "Costs") -> None:
        self.reductions += other.reductions
        self.broadcasts += other.broadcasts
        self.bytes += other.bytes
        self.unknown_bytes += other.unknown_bytes
        self.random |= other.random


class Made:
    """One variable the program made in a strategy's scope, and where."""

    __slots__ = ("variable", "site", "owner")

    def __init__(self, variable, site: Optional[str], owner) -> None:
        self.variable = variable
        self.site = site  # a static site's id, or `runtime_key(path, line)`
        self.owner = owner  # the Keras layer, metric or optimizer that made it, or None


class State:
    """What one run has seen."""

    def __init__(self, spec: Dict[str, Any], run: Dict[str, Any]):
        self.warmup = int(spec["warmup"])
        self.steps = int(spec["steps"])
        # site -> {"site", "synchronization", "aggregation"} or {"site", "setting"}: the
        # sites whose choice this run changes (one, or one and the fixes of others)
        self.overrides: Dict[str, Dict[str, Any]] = {o["site"]: o
                                                     for o in run.get("overrides") or ()}
        self.active: Optional[Costs] = None  # the outermost function call being traced
        self.saw_run = False
        self.depth = 0  # nesting of counted cross-device calls (count the outermost only)
        self.trace_depth = 0  # nesting of traces (a function traced inside another's trace)
        self.done = 0  # steps finished
        self.window = Costs()
        self.pending = Costs()  # traffic since the last measured step, not yet charged
        self.times: List[float] = []
        self.traces: Dict[int, Costs] = {}
        self.step_functions: set = set()
        self.made: List[Made] = []
        self.strategies: list = []
        self.error_stage: Optional[str] = None
        self.random: Set[str] = set()  # random op types the traced steps run
        self.replica_reads: List[str] = []  # "path:line" where the program read the count
        self.constructed: Dict[int, Tuple[Any, str]] = {}  # id(layer) -> (layer, site key)

    @property
    def measuring(self) -> bool:
        return self.done >= self.warmup


current: Optional[State] = None

# --- the program's files ----------------------------------------------------------------------

_PROJECT = ""
_PREFIXES: Tuple[str, ...] = ()
SITES: Dict[str, List[Tuple[int, int, str]]] = {}  # realpath -> [(first, last, site id)]
_REAL: Dict[str, str] = {}
_GENERATED: Dict[str, Dict[int, tuple]] = {}  # AutoGraph's file -> its line -> origin


def configure(spec: Dict[str, Any]) -> None:
    """The project folder and the static sites, from the parent's spec."""
    global _PROJECT, _PREFIXES
    _PROJECT = os.path.join(os.path.realpath(spec["project"]), "")
    prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    prefixes.add(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
    _PREFIXES = tuple(os.path.join(p, "") for p in prefixes)
    for site in spec["sites"]:
        SITES.setdefault(os.path.realpath(site["path"]), []).append(
            (site["first"], site["last"], site["id"]))


def in_project(path: str) -> bool:
    return path.startswith(_PROJECT) and not path.startswith(_PREFIXES)


def real(filename: str) -> str:
    found = _REAL.get(filename)
    if found is None:
        found = _REAL[filename] = os.path.realpath(filename) if not filename.startswith("<") \
            else filename
    return found


def runtime_key(path: str, line: int) -> str:
    """The id of the site a line of the program is, where no static site covers it."""
    return f"@{path}:{line}"


def _source_map(code, filename: str) -> Dict[int, tuple]:
    import gc
    import types

    for holder in gc.get_referrers(code):
        source_map = getattr(holder, "ag_source_map", None)
        if isinstance(holder, types.FunctionType) and source_map:
            return {where.lineno: (origin.loc.filename, origin.loc.lineno)
                    for where, origin in source_map.items() if where.filename == filename}
    return {}


def _origin(frame) -> Optional[tuple]:
    """(file, line) in the user's source of a frame in AutoGraph's generated code (the body
    of a `tf.function` that creates a variable on its first call runs there). The converted
    function carries the file's `ag_source_map`; a nested branch function (`if_body`) does
    not, so the frames outward in the same file are tried too."""
    filename = frame.f_code.co_filename
    lines = _GENERATED.get(filename)
    if lines is None:
        lines = {}
        probe = frame
        while probe is not None and not lines:
            if probe.f_code.co_filename == filename:
                lines = _source_map(probe.f_code, filename)
            probe = probe.f_back
        _GENERATED[filename] = lines
    return lines.get(frame.f_lineno)


def user_line(frame) -> Optional[Tuple[str, int]]:
    """(realpath, line) of `frame` when it runs the program's own code (AutoGraph's
    generated code mapped back to its source), else None."""
    path = real(frame.f_code.co_filename)
    line = frame.f_lineno
    if "__autograph_generated_file" in path:
        origin = _origin(frame)
        if origin is not None:
            path, line = real(origin[0]), origin[1]
    if path in SITES or in_project(path):
        return path, line
    return None


def static_site(path: str, line: int) -> Optional[str]:
    for first, last, site in SITES.get(path, ()):
        if first <= line <= last:
            return site
    return None
