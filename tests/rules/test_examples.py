"""Every rule's VALID and INVALID examples, run as tests (Fixit style)."""
from __future__ import annotations

import pytest

from syncadvisor.api import check_source
from syncadvisor.rules import all_rules

RULES = all_rules()


def _cases(kind):
    return list(_iter_cases(kind))


def _iter_cases(kind):
    for rule in RULES:
        examples = rule.VALID if kind == "valid" else rule.INVALID
        for i, example in enumerate(examples):
            yield pytest.param(rule, example, id=f"{rule.code}-{kind}-{i}")


def _findings(rule, source, config=None):
    return [f for f in check_source(source, "example.py", **(config or {})) if f.code == rule.code]


@pytest.mark.parametrize("rule, source", _cases("valid"))
def test_valid_example_is_silent(rule, source):
    assert _findings(rule, source) == []


@pytest.mark.parametrize("rule, example", _cases("invalid"))
def test_invalid_example_is_reported_where_expected(rule, example):
    findings = _findings(rule, example.source, example.config)
    got = sorted((f.line, f.column, f.severity) for f in findings)
    for expect in example.expect:
        matches = [g for g in got if g[0] == expect.line
                   and (expect.column is None or g[1] == expect.column)
                   and (expect.severity is None or g[2] == expect.severity)]
        assert matches, f"expected {expect} among {got}: {[f.message for f in findings]}"
    assert len(got) == len(example.expect), [f.message for f in findings]


def test_every_rule_has_examples_and_documentation():
    for rule in RULES:
        assert rule.VALID and rule.INVALID, rule.code
        sections = rule.sections()
        for title in ("What it does", "Why is this bad?", "Example", "Fix safety"):
            assert sections.get(title), f"{rule.code} lacks '{title}'"


def _fix_cases():
    cases = []
    for rule in RULES:
        for i, example in enumerate(rule.INVALID):
            if example.fixed is not None or example.unsafe_fixed is not None:
                cases.append(pytest.param(rule, example, id=f"{rule.code}-fix-{i}"))
    return cases


@pytest.mark.parametrize("rule, example", _fix_cases())
def test_invalid_example_fixes(rule, example):
    from syncadvisor.api import fix_source

    safe = fix_source(example.source, "example.py", **example.config)
    if example.fixed is not None:
        assert safe == example.fixed
    else:
        assert safe == example.source, "this example has no safe fix"
    if example.unsafe_fixed is not None:
        assert fix_source(example.source, "example.py", unsafe=True, **example.config) == \
            example.unsafe_fixed
