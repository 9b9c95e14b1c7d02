"""Fixtures shared by the test packages."""
from __future__ import annotations

from pathlib import Path

import pytest

import syncadvisor.engine.analyze as analyze


@pytest.fixture
def parsed(monkeypatch):
    """Names of the files analysed (parsed) in this process, in order."""
    seen = []
    original = analyze.analyze_text

    def spy(text, path, settings, module=None, **options):
        seen.append(Path(path).name)
        return original(text, path, settings, module, **options)

    monkeypatch.setattr(analyze, "analyze_text", spy)
    return seen
