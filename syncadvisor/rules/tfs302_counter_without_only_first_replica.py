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
    constant in replica context -- whose aggregation is not ONLY_FIRST_REPLICA.

    ## Why is this bad?
    Every replica advances the counter by the same amount. With aggregation NONE the
    copies stay equal only as long as every replica takes every step; ONLY_FIRST_REPLICA
    says what is meant: take replica 0's update and apply it to every copy. That is what
    Keras uses for `optimizer.iterations` and its model step counters, and what the
    `tf.VariableAggregation` documentation names it for ("the global step counter").
    It is advice about intent, not speed: `syncadvisor profile` measures both choices
    with no cross-device reduction and equal values on one machine.

    ## Example
    ```python
    with strategy.scope():
        step = tf.Variable(0, trainable=False)
    strategy.run(lambda: step.assign_add(1))
    ```
    Use instead:
    ```python
    with strategy.scope():
        step = tf.Variable(0, trainable=False,
                           aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)
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
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                step = tf.Variable(0, aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)
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
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    step = tf.Variable(0, trainable=False)
                strategy.run(lambda: step.assign_add(1))
            """),
            (Expect(4, 12, INFO),),
            unsafe_fixed=snippet("""
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    step = tf.Variable(0, trainable=False, aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)
                strategy.run(lambda: step.assign_add(1))
            """),
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
            if judge(strategy_contexts(site, counting), tfapi.MIRRORING_STRATEGIES, ctx.path,
                     ctx.settings.assume_strategy) is None:
                continue
            text, edits = set_setting(ctx, site, tfapi.AGG, tfapi.AGG_ONLY_FIRST_REPLICA)
            update = counting[0]
            yield ctx.finding(
                site_span(site, site.agg),
                f"`{site.name}` is a counter (`.{update.method}` of a constant "
                f"{ctx.at('in replica context', update.path, update.span, f'`.{update.method}`')}): give it aggregation ONLY_FIRST_REPLICA, "
                f"as Keras does for optimizer.iterations",
                INFO, make_fix(UNSAFE, f"Add `aggregation={text}`", *edits))
