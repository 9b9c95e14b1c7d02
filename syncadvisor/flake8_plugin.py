"""The flake8 plugin: a thin adapter over the same engine as `syncadvisor check`.

flake8 checks one file at a time, so here the run is that one file: a strategy
created in another module is not visible, and findings that depend on one come
out as the CLI reports them for that file alone (same codes, same positions).

It works from the `lines` flake8 hands over (editors send the unsaved buffer on
stdin, so the file on disk may be stale), reports 0-based columns as the plugin
API wants (flake8 adds 1 when printing), and reads `[tool.syncadvisor]` from the
nearest pyproject.toml, which flake8 itself never does.
"""
from __future__ import annotations

import os
from functools import lru_cache
from typing import Iterator, List, Optional, Tuple

from . import __version__
from .config import ConfigError, Settings, load_settings


@lru_cache(maxsize=64)
def _settings_for(directory: str) -> Tuple[Optional[Settings], Optional[str]]:
    try:
        return load_settings(None, directory), None
    except ConfigError as exc:
        return None, str(exc)


class SyncAdvisorChecker:
    name = "syncadvisor"
    version = __version__

    def __init__(self, tree, lines: List[str], filename: str):  # noqa: ARG002 - flake8 needs `tree`
        self.lines = lines
        self.filename = filename

    def run(self) -> Iterator[Tuple[int, int, str, type]]:
        from .engine import analyze_text, run_rules, tool_error

        stdin = self.filename in ("-", "stdin", "<stdin>") or not os.path.exists(self.filename)
        directory = os.getcwd() if stdin else os.path.dirname(os.path.abspath(self.filename))
        settings, problem = _settings_for(directory)
        if settings is None:
            error = tool_error(self.filename, f"bad configuration: {problem}")
            yield error.line, error.column - 1, f"{error.code} {error.message}", type(self)
            return
        if not stdin and settings.is_excluded(self.filename):
            return
        result = analyze_text("".join(self.lines), self.filename, settings)
        for finding in run_rules([result], settings).findings:
            yield finding.line, finding.column - 1, f"{finding.code} {finding.message}", type(self)
