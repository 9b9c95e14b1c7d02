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


def test_code_runs_traced_where_every_way_into_it_is_traced(tmp_path):
    """`Replica.traced`: a `tf.function`, and what only traced code runs (through calls
    and `strategy.run`); not what module-level code or nothing runs. `traced_path`
    answers for one way in."""
    from syncadvisor.api import linked_files

    (tmp_path / "loop.py").write_text(textwrap.dedent("""\
        import tensorflow as tf
        strategy = tf.distribute.MirroredStrategy()
        def helper(x):
            return x
        def replica_step(x):
            return helper(x)
        def eager_too(x):
            return x
        @tf.function
        def distributed(x):
            eager_too(x)
            return strategy.run(replica_step, args=(x,))
        def plain(x):
            return strategy.run(eager_too, args=(x,))
        def unused(x):
            return x
        distributed(1.)
        plain(1.)
    """))
    (linked,) = linked_files([tmp_path])
    replica = linked.project.replica
    traced = {name: replica.traced(f"loop.{name}") for name in
              ("helper", "replica_step", "eager_too", "distributed", "plain", "unused")}
    assert traced == {"helper": True, "replica_step": True, "eager_too": False,
                      "distributed": True, "plain": False, "unused": False}
    ways = sorted(replica.where_at("loop.eager_too"), key=lambda w: w.at[1].line if w.at else 0)
    assert [replica.traced_path(w, "loop.eager_too") for w in ways
            if w.kind == "replica"] == [False]
    (into_helper,) = [w for w in replica.where_at("loop.helper") if w.kind == "replica"]
    assert replica.traced_path(into_helper, "loop.helper")
