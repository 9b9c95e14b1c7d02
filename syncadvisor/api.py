"""A small programmatic interface (tests and editor integrations use it), over `Run`."""
from __future__ import annotations

from typing import List, Optional

from .config import Settings, settings_from_table
from .engine import Run
from .findings import Finding


def _settings(settings: Optional[Settings], config: dict, caller: str) -> Settings:
    if settings is not None:
        return settings
    table = {key.replace("_", "-"): value for key, value in config.items()}
    return settings_from_table(table, ".", caller)


def check_source(source: str, filename: str = "snippet.py", settings: Optional[Settings] = None,
                 **config: object) -> List[Finding]:
    """Findings for one source text, as `syncadvisor check` reports them.

    `config` takes `[tool.syncadvisor]` keys with underscores, e.g. `assume_strategy="mirrored"`.
    """
    run = Run(_settings(settings, config, "check_source()"))
    run.add_text(filename, source)
    return run.check().findings


def linked_files(paths, settings: Optional[Settings] = None):
    """The linked model of every Python file under `paths`: what the rules see.

    Each `LinkedFile` has `.model` (the per-file facts) and `.sites` (normalised
    `VariableSite`s: `.api`, `.sync`, `.agg`, `.trainable`, `.dtype`, `.call`, `.contexts`).
    """
    from .files import discover

    settings = settings or Settings()
    run = Run(settings)
    for path in discover(list(paths), settings):
        run.add_file(path)
    return run.linked_files()


def fix_source(source: str, filename: str = "snippet.py", unsafe: bool = False,
               settings: Optional[Settings] = None, **config: object) -> str:
    """The source after `syncadvisor check --fix` (with `--unsafe-fixes` when `unsafe`)."""
    run = Run(_settings(settings, config, "fix_source()"))
    run.add_text(filename, source)
    return run.fix(unsafe).files.get(filename, source)
