"""Messages say how an update was reached: the calls from where its context was entered
(`strategy.run`, a Keras method) to the function that makes it, higher-order calls named
by their callee (`RuleContext.reached`, `UsageAnalysis.call_path`)."""
from __future__ import annotations

import textwrap

from syncadvisor.api import check_source
from tests.rules.test_related import _fixture_findings

HIGHER_ORDER = "higher_order.py"


def _messages(findings, name):
    return {f.line: f.message for f in findings if f.path.endswith(name)}


def test_fixture_messages_name_the_higher_order_call():
    findings = _fixture_findings()
    messages = _messages(findings, HIGHER_ORDER)
    # `peak` is updated in the function strategy.run enters: no chain to name.
    assert "reached" not in messages[73]
    assert "reached from `step` through `tf.while_loop` at line 119)" in messages[74]
    assert "reached from `step` through `tf.map_fn` at line 120)" in messages[75]
    assert "reached from `step` through `tf.case` at line 122)" in messages[77]
    assert "reached from `step` through `.map` at line 123)" in messages[78]
    assert "reached from `call` through `tf.cond` at line 35)" in messages[30]
    # through the project's own `smart_cond`, which hands them to TensorFlow's
    assert "reached from `call` through `smart_cond` at line 148)" in messages[137]


def test_a_long_chain_is_shortened_to_its_ends():
    source = textwrap.dedent("""\
        import tensorflow as tf
        strategy = tf.distribute.MirroredStrategy()
        with strategy.scope():
            v = tf.Variable(0.)
        def d(x):
            v.assign(tf.reduce_mean(x))
        def c(x):
            d(x)
        def b(x):
            c(x)
        def a(x):
            b(x)
        def step(x):
            a(x)
        strategy.run(step, args=(1.,))
    """)
    (finding,) = [f for f in check_source(source) if f.code == "TFS201"]
    assert ("reached from `step` through `a()` at line 14, ..., `c()` at line 10 and "
            "`d()` at line 8)") in finding.message
    lines = {place.line for place in finding.related}
    assert {14, 10, 8} <= lines and 12 not in lines


def test_a_lambda_given_to_a_higher_order_call_is_named_by_it():
    source = textwrap.dedent("""\
        import tensorflow as tf
        strategy = tf.distribute.MirroredStrategy()
        with strategy.scope():
            v = tf.Variable(0.)
        def step(x):
            tf.cond(x > 0, lambda: v.assign(tf.reduce_mean(x)), lambda: v)
        strategy.run(step, args=(1.,))
    """)
    (finding,) = [f for f in check_source(source) if f.code == "TFS201"]
    assert "reached from `step` through `tf.cond` at line 6)" in finding.message


# A claim about one of the contexts a function's calls give it names that call: the
# error is true on that path, not on every one.
TWO_SCOPES = textwrap.dedent("""\
    import tensorflow as tf
    def build():
        return tf.Variable(0, synchronization=tf.VariableSynchronization.NONE)
    mirrored = tf.distribute.MirroredStrategy()
    single = tf.distribute.OneDeviceStrategy("/cpu:0")
    with single.scope():
        a = build()
    with mirrored.scope():
        b = build()
""")


def test_an_error_on_one_callers_path_names_that_call():
    (finding,) = [f for f in check_source(TWO_SCOPES) if f.code == "TFS101"]
    assert finding.severity == "error"
    assert finding.message.endswith("when `build(...)` at line 9 runs it")
    assert any(r.line == 9 and r.label == "`build(...)`" for r in finding.related)


def test_one_context_names_no_call():
    source = TWO_SCOPES.replace("with single.scope():\n    a = build()\n", "")
    (finding,) = [f for f in check_source(source) if f.code == "TFS101"]
    assert "runs it" not in finding.message
