"""Linking follows objects through parameters (`ProjectIndex._arguments`): what it finds
does not depend on the order the rules and the analyses ask in."""
from __future__ import annotations

import textwrap

from syncadvisor.api import check_source


def test_a_method_called_through_a_parameter_inside_a_cycle_keeps_its_callers():
    """Finding what `obj` in `f` may be asks for the calls of `A.m` (`other` is passed
    to `f`) while `obj` is still being worked out: those calls, without `obj.m(v, x)`,
    are no answer to keep. Asked again later, `obj.m(v, x)` hands `m` the variable."""
    source = textwrap.dedent("""\
        import tensorflow as tf
        mirrored = tf.distribute.MirroredStrategy()
        with mirrored.scope():
            acc = tf.Variable(tf.zeros(3), aggregation=tf.VariableAggregation.NONE)
        class A:
            def m(self, v, x, other=None):
                v.assign_add(x)
                if other is not None:
                    f(other, v, x)
        def f(obj, v, x):
            obj.m(v, x)
        def step(x):
            f(A(), acc, x)
        mirrored.run(step, args=(tf.ones(3),))
    """)
    (finding,) = [f for f in check_source(source) if f.code == "TFS201"]
    assert finding.line == 4
    assert "`m()` at line 11" in finding.message
