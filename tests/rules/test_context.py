"""RuleContext: each rule gets a context of its own; the file's facts are shared."""
from __future__ import annotations

import ast

from syncadvisor.config import Settings
from syncadvisor.engine.analyze import rewrites_for
from syncadvisor.model.builder import build_model
from syncadvisor.model.project import Project
from syncadvisor.rules import all_rules
from syncadvisor.rules.base import RuleContext

SOURCE = (
    "import tensorflow as tf\n"
    "from tensorflow import VariableSynchronization as VS\n"
    "v = tf.Variable(0., synchronization=VS.ON_READ)\n"
)


def _context() -> RuleContext:
    settings = Settings()
    model = build_model(ast.parse(SOURCE), "example.py", "example", rewrites_for(settings),
                        SOURCE)
    return RuleContext(Project([model]).link(model), settings)


def test_for_rule_makes_a_context_per_rule_and_changes_none():
    ctx = _context()
    first, second = all_rules()[:2]
    a, b = ctx.for_rule(first), ctx.for_rule(second)
    assert a is not ctx and b is not ctx and a is not b
    assert ctx._rule is None
    assert a._rule is first and b._rule is second
    assert a.linked is ctx.linked and a.settings is ctx.settings


def test_the_file_facts_are_found_once_for_all_rules():
    ctx = _context()
    contexts = [ctx.for_rule(rule) for rule in all_rules()]
    assert all(c._facts is ctx._facts for c in contexts)
    spelled = contexts[0].enum_spelling("synchronization", "AUTO")
    assert spelled == ("VS.AUTO", ())
    found = ctx._facts.__dict__["enum_aliases"]  # the cached value
    assert contexts[-1]._facts.enum_aliases is found


def test_findings_name_their_own_rule():
    ctx = _context()
    span = ctx.model.creations[0].span
    rules = all_rules()[:2]
    findings = [ctx.for_rule(rule).finding(span, "m") for rule in rules]
    assert [f.code for f in findings] == [rule.code for rule in rules]
