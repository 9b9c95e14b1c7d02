from __future__ import annotations

from typing import Iterator

from ..findings import Finding
from ..model import tfapi
from ..model.usage import PYTHON_NUMBER
from .base import (ERROR, UNSAFE, Expect, Invalid, Rule, RuleContext, judge, make_fix, set_setting,
                   site_span, snippet, strategy_contexts)


class SumUpdateWithPythonNumber(Rule):
    """
    ## What it does
    Flags an ON_WRITE (or AUTO) variable with `aggregation=SUM` that is updated in replica
    context with a plain Python number, e.g. `counter.assign_add(1)` inside `strategy.run`.

    ## Why is this bad?
    With SUM, a replica-context update is all-reduced across replicas; a Python number is
    not a per-replica value and cannot be: `ValueError: A non-DistributedValues value 1.0
    cannot be reduced with the given reduce op ReduceOp.SUM.` (tensorflow/tensorflow#31852).
    MEAN and ONLY_FIRST_REPLICA accept it.

    ## Example
    ```python
    with strategy.scope():
        steps = tf.Variable(0.0, aggregation=tf.VariableAggregation.SUM)
    strategy.run(lambda: steps.assign_add(1.0))
    ```
    Use instead:
    ```python
    with strategy.scope():
        steps = tf.Variable(0.0, aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)
    ```

    ## Fix safety
    Unsafe: ONLY_FIRST_REPLICA applies replica 0's update to every copy -- right when every
    replica adds the same amount, as here. If each replica's amount should add up, pass a
    tensor instead and keep SUM.
    """

    code = "TFS107"
    name = "sum-update-with-python-number"
    severity = ERROR
    summary = "an ON_WRITE + SUM variable updated in replica context with a Python number"
    fix_availability = "unsafe"

    VALID = [
        snippet("""
            import tensorflow as tf
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                v = tf.Variable(0., aggregation=tf.VariableAggregation.SUM)
            strategy.run(lambda: v.assign_add(tf.constant(1.)))
        """),
        snippet("""
            import tensorflow as tf
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                v = tf.Variable(0., aggregation=tf.VariableAggregation.SUM)
            v.assign_add(1.)
        """),
        snippet("""
            import keras
            import tensorflow as tf
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                v = keras.Variable(0., trainable=False, aggregation="sum")
            strategy.run(lambda: v.assign(1.))
        """),
    ]
    INVALID = [
        Invalid(
            snippet("""
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    v = tf.Variable(0., aggregation=tf.VariableAggregation.SUM)
                strategy.run(lambda: v.assign_add(1.))
            """),
            (Expect(4, 25, ERROR),),
            unsafe_fixed=snippet("""
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    v = tf.Variable(0., aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)
                strategy.run(lambda: v.assign_add(1.))
            """),
        ),
    ]

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for site in ctx.sites:
            if site.sync.member not in (tfapi.SYNC_AUTO, tfapi.SYNC_ON_WRITE) \
                    or site.agg.member != tfapi.AGG_SUM:
                continue
            if site.api.family in tfapi.ASSIGN_CONVERTS_TO_TENSOR:
                continue  # Keras 3 hands SUM a tensor (TFS205 says what assign_add does then)
            updates = [u for u in site.updates if u.method in tfapi.ASSIGN_METHODS
                       and u.value_kind == PYTHON_NUMBER and u.replica_context]
            if not updates:
                continue
            verdict = judge(strategy_contexts(site, updates), tfapi.MIRRORING_STRATEGIES,
                            ctx.path, ctx.settings.assume_strategy, ctx.note)
            if verdict is None:
                continue
            update = updates[0]
            value = update.value.text if update.value is not None else "a number"
            text, edits = set_setting(ctx, site, tfapi.AGG, tfapi.AGG_ONLY_FIRST_REPLICA)
            where = ctx.at("in replica context", update.path, update.span,
                           f"`.{update.method}({value})`")
            fix = make_fix(UNSAFE, f"Use `aggregation={text}` (every replica adds the same amount)",
                           *edits)
            yield ctx.finding(
                site_span(site, site.agg),
                f"`{site.name}` (aggregation SUM) gets `.{update.method}({value})` "
                f"{where}: ValueError (\"A "
                f"non-DistributedValues value {value} cannot be reduced with the given reduce op "
                f"ReduceOp.SUM\") {verdict.where}",
                verdict.severity, fix)
