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
