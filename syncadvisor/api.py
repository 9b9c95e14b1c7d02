"""A small programmatic interface (tests and editor integrations use it)."""
from __future__ import annotations

from typing import List, Optional

from .config import Settings, settings_from_table
from .engine import check_sources
from .findings import Finding


def check_source(source: str, filename: str = "snippet.py", settings: Optional[Settings] = None,
                 **config: object) -> List[Finding]:
    """Findings for one source text, as `syncadvisor check` reports them.

    `config` takes `[tool.syncadvisor]` keys with underscores, e.g. `assume_strategy="mirrored"`.
    """
    if settings is None:
        table = {key.replace("_", "-"): value for key, value in config.items()}
        settings = settings_from_table(table, ".", "check_source()")
    return check_sources({filename: source}, settings).findings


def linked_files(paths, settings: Optional[Settings] = None):
    """The linked model of every Python file under `paths`: what the rules see.

    Each `LinkedFile` has `.model` (the per-file facts) and `.sites` (normalised
    `VariableSite`s: `.api`, `.sync`, `.agg`, `.trainable`, `.dtype`, `.call`, `.contexts`).
    """
    from .engine import analyze_path
    from .files import discover
    from .model.project import projects

    settings = settings or Settings()
    results = [analyze_path(p, settings) for p in discover(list(paths), settings)]
    linked = {}
    for project in projects(r.model for r in results if r.model is not None):
        for fm in project.index.files:
            linked[fm.path] = project.link(fm)
    return [linked[r.model.path] for r in results if r.model is not None]


def fix_source(source: str, filename: str = "snippet.py", unsafe: bool = False,
               settings: Optional[Settings] = None, **config: object) -> str:
    """The source after `syncadvisor check --fix` (with `--unsafe-fixes` when `unsafe`)."""
    from .engine import analyze_text
    from .fixes import fix_results

    if settings is None:
        table = {key.replace("_", "-"): value for key, value in config.items()}
        settings = settings_from_table(table, ".", "fix_source()")
    result = analyze_text(source, filename, settings)
    outcome = fix_results([result], {filename: source}, settings, unsafe)
    return outcome.fixed.get(filename, source)
