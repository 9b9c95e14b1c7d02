"""A use of a name sees the bindings that reach it in its scope's own code (builder/flow.py):
what `net.compile(...)` may be called on, read from the model of each snippet."""
from __future__ import annotations

import ast
import textwrap

import pytest

from syncadvisor.model import tfapi
from syncadvisor.model.builder import build_model

REWRITES = tfapi.prefix_rewrites(False)


def _reaching(body: str):
    """The values (as written) that the name at the last `net.compile()` may hold."""
    text = textwrap.dedent(body)
    fm = build_model(ast.parse(text), "a.py", "a", REWRITES, text)
    use = [u for u in fm.uses if u.method == "compile"][-1]
    lines = text.splitlines()
    return sorted(lines[o.span.line - 1][o.span.column:o.span.end_column]
                  for o in use.receiver.options)


CASES = [
    ("rebound", """
        net = A()
        net = B()
        net.compile()
    """, ["B()"]),
    ("rebound in a with block", """
        net = A()
        with s.scope():
            net = B()
            net.compile()
    """, ["B()"]),
    ("if without else", """
        net = A()
        if c:
            net = B()
        net.compile()
    """, ["A()", "B()"]),
    ("if and else", """
        net = A()
        if c:
            net = B()
        else:
            net = C()
        net.compile()
    """, ["B()", "C()"]),
    ("inside a branch", """
        net = A()
        if c:
            net = B()
            net.compile()
    """, ["B()"]),
    ("a later iteration", """
        net = A()
        for x in y:
            net.compile()
            net = B()
    """, ["A()", "B()"]),
    ("after a loop", """
        net = A()
        while c:
            net = B()
        net.compile()
    """, ["A()", "B()"]),
    ("try and handler", """
        net = A()
        try:
            net = B()
            net = C()
        except E:
            net.compile()
    """, ["A()", "B()", "C()"]),
    ("after try", """
        net = A()
        try:
            net = B()
        except E:
            net = C()
        net.compile()
    """, ["B()", "C()"]),
    ("after try whose handler binds nothing", """
        net = A()
        try:
            net = B()
        except E:
            pass
        net.compile()
    """, ["A()", "B()"]),
    ("match", """
        net = A()
        match x:
            case 1:
                net = B()
            case _:
                net = C()
        net.compile()
    """, ["A()", "B()", "C()"]),
    ("a function body sees every binding", """
        net = A()
        def f():
            net.compile()
        net = B()
    """, ["A()", "B()"]),
]


@pytest.mark.parametrize("body, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_use_sees_the_bindings_that_reach_it(body, expected):
    assert _reaching(body) == expected


def _created_lines(body: str):
    text = textwrap.dedent(body)
    fm = build_model(ast.parse(text), "a.py", "a", REWRITES, text)
    return [c.span.line for c in fm.creations]


LITERAL_CASES = [
    ("a module constant rules out a branch", """
        MODE = "one"
        if MODE == "mirrored":
            a = tf.Variable(1.)
        else:
            b = tf.Variable(2.)
    """, [5]),
    ("a dict literal's item", """
        CONFIG = {"mode": "mirrored"}
        if CONFIG["mode"] == "mirrored" and not CONFIG.get:
            a = tf.Variable(1.)
        if CONFIG["mode"] in ("mirrored", "tpu"):
            b = tf.Variable(2.)
    """, [3, 5]),
    ("two values reach the test", """
        MODE = "one"
        if flag:
            MODE = "mirrored"
        if MODE == "mirrored":
            a = tf.Variable(1.)
    """, [5]),
    ("a name other code may rebind", """
        MODE = "one"
        def set_mode():
            global MODE
            MODE = "mirrored"
        if MODE == "mirrored":
            a = tf.Variable(1.)
    """, [6]),
    ("a name from another scope", """
        MODE = "one"
        def train():
            if MODE == "mirrored":
                a = tf.Variable(1.)
    """, [4]),
]


@pytest.mark.parametrize("body, expected", [c[1:] for c in LITERAL_CASES],
                         ids=[c[0] for c in LITERAL_CASES])
def test_configuration_the_code_spells_out_rules_out_branches(body, expected):
    assert _created_lines("import tensorflow as tf\n" + textwrap.dedent(body)) == \
        [line + 2 for line in expected]
