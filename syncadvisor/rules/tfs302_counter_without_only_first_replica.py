from __future__ import annotations

from typing import Iterator

from ..findings import Finding
from ..model import tfapi
from ..model.usage import CONSTANT, PYTHON_NUMBER
from .base import (INFO, UNSAFE, Expect, Invalid, Rule, RuleContext, judge, make_fix, set_setting,
                   site_span, snippet, strategy_contexts)


class CounterWithoutOnlyFirstReplica(Rule):
    """
    ## What it does
    Flags a step or iteration counter -- an integer variable advanced by `assign_add` of a
    constant in replica context -- whose aggregation is not ONLY_FIRST_REPLICA, where the
    strategy is CentralStorageStrategy or ParameterServerStrategy, or is not visible.

    ## Why is this bad?
    Under CentralStorageStrategy and ParameterServerStrategy a variable has one copy that
    aggregates every replica-context update, and with aggregation NONE the update raises
    ("You must specify an aggregation method to update a AggregatingVariable in Replica
    Context"). ONLY_FIRST_REPLICA says what a counter means -- take replica 0's step --
    and is what Keras uses for `optimizer.iterations` and its model step counters.

    Under MirroredStrategy, MultiWorkerMirroredStrategy and TPUStrategy it is no
    finding: every replica adds the same constant to its own copy, so NONE keeps the
    copies equal with no communication (`syncadvisor profile` measures it so), while an
    ONLY_FIRST_REPLICA write is a broadcast from replica 0.

    ## Example
    ```python
    strategy = tf.distribute.experimental.CentralStorageStrategy()
    with strategy.scope():
        step = tf.Variable(0, trainable=False)
    strategy.run(lambda: step.assign_add(1))
    ```
    Use instead:
    ```python
    strategy = tf.distribute.experimental.CentralStorageStrategy()
    with strategy.scope():
        step = tf.Variable(0, trainable=False,
                           aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)
    strategy.run(lambda: step.assign_add(1))
    ```

    ## Fix safety
    Unsafe: it changes how replica-context updates combine (replica 0's wins).
    """

    code = "TFS302"
    name = "counter-without-only-first-replica"
    severity = INFO
    summary = "an integer step counter advanced in replica context without ONLY_FIRST_REPLICA"
    fix_availability = "unsafe"

    VALID = [
        snippet("""
            import tensorflow as tf
            strategy = tf.distribute.experimental.CentralStorageStrategy()
            with strategy.scope():
                step = tf.Variable(0, aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)
            strategy.run(lambda: step.assign_add(1))
        """),
        snippet("""
            import tensorflow as tf
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                step = tf.Variable(0, trainable=False)
            strategy.run(lambda: step.assign_add(1))
        """),
        snippet("""
            import tensorflow as tf
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                step = tf.Variable(0)
            step.assign_add(1)
        """),
    ]
    INVALID = [
        Invalid(
            snippet("""
                import tensorflow as tf
                strategy = tf.distribute.experimental.CentralStorageStrategy()
                with strategy.scope():
                    step = tf.Variable(0, trainable=False)
                strategy.run(lambda: step.assign_add(1))
            """),
            (Expect(4, 12, INFO),),
            unsafe_fixed=snippet("""
                import tensorflow as tf
                strategy = tf.distribute.experimental.CentralStorageStrategy()
                with strategy.scope():
                    step = tf.Variable(0, trainable=False, aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)
                strategy.run(lambda: step.assign_add(1))
            """),
        ),
        Invalid(
            snippet("""
                import tensorflow as tf
                import tf_keras
                class Model(tf_keras.Model):
                    def __init__(self):
                        super().__init__()
                        self.step = tf.Variable(0, trainable=False)
                    def train_step(self, data):
                        self.step.assign_add(1)
                        return super().train_step(data)
            """),
            (Expect(6, 21, INFO),),
        ),
    ]

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for site in ctx.sites:
            if site.dtype not in tfapi.INTEGER_DTYPES or site.agg.member != tfapi.AGG_NONE:
                continue
            if site.sync.member == tfapi.SYNC_ON_READ or not site.api.has_parameter(tfapi.AGG):
                continue
            counting = [u for u in site.updates if u.replica_context
                        and u.method in ("assign_add", "assign_sub")
                        and u.value_kind in (PYTHON_NUMBER, CONSTANT)]
            if not counting:
                continue
            # Under the mirroring strategies a constant step keeps NONE's copies equal.
            verdict = judge(strategy_contexts(site, counting), tfapi.AGGREGATING_STRATEGIES,
                            ctx.path, ctx.settings.assume_strategy, ctx.note)
            if verdict is None:
                continue
            text, edits = set_setting(ctx, site, tfapi.AGG, tfapi.AGG_ONLY_FIRST_REPLICA)
            update = counting[0]
            yield ctx.finding(
                site_span(site, site.agg),
                f"`{site.name}` is a counter (`.{update.method}` of a constant "
                f"{ctx.at('in replica context', update.path, update.span, f'`.{update.method}`')}"
                f"{ctx.reached(update.in_replica()[0], update.function)}) "
                f"with aggregation NONE: {verdict.where} that update raises; give it aggregation "
                f"ONLY_FIRST_REPLICA, as Keras does for optimizer.iterations",
                INFO, make_fix(UNSAFE, f"Add `aggregation={text}`", *edits))
