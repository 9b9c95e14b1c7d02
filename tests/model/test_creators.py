"""creators.py: the programs read from a variable creator's body, and what they pass on."""
from __future__ import annotations

import ast
import textwrap

import pytest

from syncadvisor.model import creators, tfapi


def program(source: str):
    node = ast.parse(textwrap.dedent(source)).body[0]
    ok, ops = creators.effect_of(node, lambda parts: parts[-1], method=False)
    assert ok
    return creators.resolved(ops, lambda member, setting: member) if ops is not None else None


FROZEN = """
def frozen(next_creator, **kwargs):
    kwargs["trainable"] = False
    return next_creator(**kwargs)
"""
THAWED = """
def thawed(next_creator, **kwargs):
    if kwargs["trainable"] is None:
        kwargs["trainable"] = True
    return next_creator(**kwargs)
"""
T, F, UNSET = tfapi.TRAINABLE_TRUE, tfapi.TRAINABLE_FALSE, tfapi.TRAINABLE_NOT_ON_READ


def choice(trainable):
    return {tfapi.SYNC: tfapi.SYNC_AUTO, tfapi.AGG: tfapi.AGG_NONE, tfapi.TRAINABLE: trainable}


@pytest.mark.parametrize("source, given, passed", [
    (FROZEN, T, F), (FROZEN, UNSET, F), (FROZEN, None, F),
    (THAWED, UNSET, T), (THAWED, F, F),
    # not known: both branches, and what they leave apart is not known either
    (THAWED, None, None),
])
def test_a_creator_that_sets_trainable_to_a_literal_changes_it(source, given, passed):
    result = creators.run(program(source), choice(given))
    assert result is not None and result[tfapi.TRAINABLE] == passed
    assert (result[tfapi.SYNC], result[tfapi.AGG]) == (tfapi.SYNC_AUTO, tfapi.AGG_NONE)


@pytest.mark.parametrize("source", [
    'def c(next_creator, **kwargs):\n    kwargs["trainable"] = flag\n'
    '    return next_creator(**kwargs)\n',  # not a literal
    'def c(next_creator, trainable=None, **kwargs):\n'
    '    return next_creator(**kwargs)\n',  # taken out of kwargs
])
def test_a_trainable_the_program_cannot_say_makes_the_creator_unread(source):
    assert program(source) is None
