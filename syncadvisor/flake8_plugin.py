"""The flake8 plugin: a thin adapter over the same engine as `syncadvisor check`.

flake8 checks one file at a time, so here the run is that one file: a strategy
created in another module is not visible, and findings that depend on one come
out as the CLI reports them for that file alone (same codes, same positions).

It works from the `lines` flake8 hands over (editors send the unsaved buffer on
stdin, so the file on disk may be stale), reports 0-based columns as the plugin
API wants (flake8 adds 1 when printing), and reads the settings of the nearest
config file (a syncadvisor.toml, or a pyproject.toml's `[tool.syncadvisor]`), which
flake8 itself never does, and the target TensorFlow the file's project declares, as the
command finds it (`Settings.for_path`). File models are built
from flake8's own tree, and come from the same cache as the command's, keyed by
the buffer's content, so an unchanged file is not modelled again
(`SYNCADVISOR_NO_CACHE=1` turns that off).
"""
from __future__ import annotations

import ast
import os
from functools import lru_cache
from typing import Iterator, List, Optional, Tuple

from . import __version__
from .collector import collector_paused
from .config import ConfigError, Settings, load_settings


@lru_cache(maxsize=64)
def _settings_for(directory: str) -> Tuple[Optional[Settings], Optional[str]]:
    try:
        return load_settings(None, directory), None
    except ConfigError as exc:
        return None, str(exc)


@lru_cache(maxsize=16)
def _cache_for(settings: Settings):
    """The same model cache as the command (`SYNCADVISOR_NO_CACHE=1` turns it off)."""
    if os.environ.get("SYNCADVISOR_NO_CACHE") == "1":
        return None
    from .cache import Cache, default_directory

    return Cache(default_directory(settings.root))


class SyncAdvisorChecker:
    name = "syncadvisor"
    version = __version__

    def __init__(self, tree, lines: List[str], filename: str):
        self.tree = tree  # flake8's parse of `lines`: the model is built from it
        self.lines = lines
        self.filename = filename

    def run(self) -> Iterator[Tuple[int, int, str, type]]:
        # The collector stays off until this file's models are freed again: turned back on
        # while they lived, it would at once scan every object they hold, to find next to
        # nothing.
        with collector_paused():
            reported = self._check()
        return iter(reported)

    def _check(self) -> List[Tuple[int, int, str, type]]:
        from .engine import Run
        from .engine.analyze import tool_error
        from .engine.prefilter import may_hold_a_finding

        stdin = self.filename in ("-", "stdin", "<stdin>") or not os.path.exists(self.filename)
        directory = os.getcwd() if stdin else os.path.dirname(os.path.abspath(self.filename))
        settings, problem = _settings_for(directory)
        if settings is None:
            error = tool_error(self.filename, f"bad configuration: {problem}")
            return [(error.line, error.column - 1, f"{error.code} {error.message}", type(self))]
        if not stdin and settings.is_excluded(self.filename):
            return []
        text = "".join(self.lines)
        if not may_hold_a_finding(text):
            return []  # nothing to model, so nothing to look up in the cache or to check
        run = Run(settings, cache=_cache_for(settings))
        run.add_text(self.filename, text, self.tree if isinstance(self.tree, ast.Module) else None)
        return [(finding.line, finding.column - 1, f"{finding.code} {finding.message}",
                 type(self)) for finding in run.check().findings]
