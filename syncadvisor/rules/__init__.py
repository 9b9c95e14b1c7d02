"""The rule catalogue: one module per rule, found by name (`tfsNNN_*.py`)."""
from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache
from typing import Dict, List, Tuple

from .base import Rule


@lru_cache(maxsize=None)
def _load() -> Tuple[Rule, ...]:
    rules: List[Rule] = []
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("tfs"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Rule) and value is not Rule \
                    and value.__module__ == module.__name__:
                rules.append(value())
    rules.sort(key=lambda r: r.code)
    return tuple(rules)


def all_rules() -> Tuple[Rule, ...]:
    return _load()


def all_codes() -> Tuple[str, ...]:
    return tuple(r.code for r in _load())


def rules_by_code() -> Dict[str, Rule]:
    return {r.code: r for r in _load()}


def enabled_rules(settings) -> List[Rule]:
    """Rules selected for this run (per-file ignores are applied per file)."""
    return [r for r in _load() if settings.enabled(r.code)]
