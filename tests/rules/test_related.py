"""`Finding.related`: the places a finding's message names, kept as data for reports.

The test reads the references back out of the messages; the tool never does (the
rules record each place as they write its phrase, `RuleContext.at`/`via`/`describe`).
"""
from __future__ import annotations

import re

import pytest

from syncadvisor.config import Settings
from syncadvisor.engine import Run
from syncadvisor.files import discover
from syncadvisor.rules import all_rules
from tests import paths

CHECK = paths.FIXTURES / "check"
NOTEBOOK = paths.FIXTURES / "notebooks" / "train.ipynb"
# "at line 48", "(cell 3, line 2)", "created at train.py:12"
_SAME_FILE = re.compile(r"(?<![\w.:])(?:cell (\d+), )?line (\d+)\b")
_OTHER_FILE = re.compile(r"([\w./\\-]+\.(?:py|ipynb)):(\d+)\b")


def _named(f):
    places = {(f.path, int(m.group(1)) if m.group(1) else f.cell, int(m.group(2)))
              for m in _SAME_FILE.finditer(f.message)}
    places |= {(m.group(1), None, int(m.group(2))) for m in _OTHER_FILE.finditer(f.message)}
    return places


def _related(f):
    return {(r.path, r.cell, r.line) for r in f.related}


def _fixture_findings():
    settings = Settings(root=str(CHECK))
    run = Run(settings)
    for path in discover([str(CHECK)], settings):
        run.add_file(path)
    return run.check().findings


def _example_findings():
    found = []
    for rule in all_rules():
        for i, example in enumerate(rule.INVALID):
            run = Run(Settings(**example.config) if example.config else Settings())
            run.add_text(f"{rule.code}_{i}.py", example.source)
            found += run.check().findings
    return found


@pytest.mark.parametrize("source", [_fixture_findings, _example_findings])
def test_every_place_a_message_names_is_related_and_nothing_else(source):
    findings = source()
    assert any(f.related for f in findings)
    for f in findings:
        assert _related(f) == _named(f), f
        for place in f.related:
            assert place.label and place.line >= 1


def test_related_places_come_in_the_order_the_message_names_them():
    f = next(f for f in _fixture_findings() if len(f.related) >= 2)
    offsets = [f.message.index(f"line {r.line}") if r.path == f.path else
               f.message.index(f"{r.path}:{r.line}") for r in f.related]
    assert offsets == sorted(offsets)


def test_related_stays_out_of_json_and_equality():
    from syncadvisor.records import replace

    f = next(f for f in _fixture_findings() if f.related)
    assert "related" not in f.to_json()
    assert replace(f, related=()) == f


def test_a_notebooks_related_places_are_in_its_cells():
    run = Run(Settings())
    run.add_file(str(NOTEBOOK))
    findings = [f for f in run.check().findings if f.related]
    assert findings
    for f in findings:
        assert all(r.cell is not None for r in f.related)
        assert _related(f) == _named(f)
