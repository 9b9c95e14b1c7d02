"""Settings every test runs under, and fixtures shared by the test packages."""
from __future__ import annotations

from pathlib import Path

import pytest

import syncadvisor.engine.analyze as analyze


@pytest.fixture(autouse=True)
def _no_forced_colour(monkeypatch):
    """Tests read the text formats as plain text: a FORCE_COLOR set where the suite runs
    (some CI services set it) would put escape codes in them, also in subprocesses."""
    monkeypatch.delenv("FORCE_COLOR", raising=False)


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
