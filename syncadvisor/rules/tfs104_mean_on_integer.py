from __future__ import annotations

from typing import Iterator

from ..findings import Finding
from ..model import tfapi
from ..model.contexts import IN_STRATEGY, describe_creator
from .base import (ERROR, UNSAFE, WARNING, Expect, Invalid, Rule, RuleContext, make_fix,
                   set_setting, snippet, suggest_aggregation, written)


def article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


class MeanOnInteger(Rule):
    """
    ## What it does
    Flags `aggregation=MEAN` on a variable with an integer or bool dtype: an explicit
    `dtype=tf.int32`, `dtype="int64"`, an int literal initial value such as
    `tf.Variable(0, ...)`, or `tf.zeros(..., tf.int32)`. A MEAN that a
    `tf.variable_creator_scope` creator sets with a literal counts too: the finding is on
    the creating call, without a fix, and names the creator.

    ## Why is this bad?
    Under MirroredStrategy, MultiWorkerMirroredStrategy and TPUStrategy creating it
    raises `ValueError: creating distributed tf.Variable with aggregation=MEAN and a
    non-floating dtype is not supported, please use a different aggregation or dtype`
    (Keras 3.7 shipped exactly this bug for its int counters, keras-team/keras#20700).
    Under CentralStorageStrategy it is created, then the first replica-context update
    fails with a dtype conversion error.

    ## Example
    ```python
    with strategy.scope():
        step = tf.Variable(0, trainable=False, aggregation=tf.VariableAggregation.MEAN)
    ```
    Use instead:
    ```python
    with strategy.scope():
        step = tf.Variable(0, trainable=False,
                           aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)
    ```

    ## Fix safety
    Unsafe: ONLY_FIRST_REPLICA keeps replica 0's update (right for counters every
    replica advances alike); SUM adds every replica's update (right for counts of
    per-replica work). The fix picks ONLY_FIRST_REPLICA and says so.
    """

    code = "TFS104"
    name = "mean-on-integer"
    severity = ERROR
    summary = "aggregation MEAN on an integer or bool variable"
    fix_availability = "unsafe"

    VALID = [
        snippet("""
            import tensorflow as tf
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                v = tf.Variable(0., aggregation=tf.VariableAggregation.MEAN)
        """),
        snippet("""
            import tensorflow as tf
            v = tf.Variable(0, aggregation=tf.VariableAggregation.MEAN)
        """),
    ]
    INVALID = [
        Invalid(
            snippet("""
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    step = tf.Variable(0, trainable=False, aggregation=tf.VariableAggregation.MEAN)
            """),
            (Expect(4, 44, ERROR),),
            unsafe_fixed=snippet("""
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    step = tf.Variable(0, trainable=False, aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)
            """),
        ),
        Invalid(
            snippet("""
                import tensorflow as tf
                def counter():
                    return tf.Variable(tf.zeros((), tf.int64), aggregation=tf.VariableAggregation.MEAN)
            """),
            (Expect(3, 48, WARNING),),
        ),
        Invalid(
            snippet("""
                import keras
                def step_counter():
                    return keras.Variable(0, dtype='int32', aggregation='mean')
            """),
            (Expect(3, 45, WARNING),),
        ),
    ]

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for site in ctx.sites:
            if site.agg.member != tfapi.AGG_MEAN or site.dtype not in tfapi.INTEGER_DTYPES:
                continue
            creator = site.agg.creator
            if site.agg.arg is None and creator is None:
                continue
            verdict = ctx.judge(site, tfapi.MIRRORING_STRATEGIES)
            if verdict is None:
                central = [c for c in site.contexts if c.kind == IN_STRATEGY and c.strategy
                           and c.strategy.kinds & set(tfapi.AGGREGATING_STRATEGIES)]
                if not central:
                    continue
                where = ("under CentralStorageStrategy/ParameterServerStrategy it is created, "
                         "then its first replica-context update fails")
                severity, message_tail = WARNING, where
            else:
                severity = verdict.severity
                message_tail = (f"creating it raises ValueError (\"creating distributed "
                                f"tf.Variable with aggregation=MEAN and a non-floating dtype is "
                                f"not supported\") {verdict.where}")
            arg = site.agg.arg
            if creator is not None or arg is None:
                # A variable creator sets it: an argument here would be rewritten again.
                by = f", set by {describe_creator(creator, ctx.path, ctx.note)}," if creator else ""
                yield ctx.finding(
                    arg.span if arg is not None else site.call.span,
                    f"`aggregation=MEAN`{by} on {article(site.dtype)} {site.dtype} variable: "
                    f"{message_tail}", severity)
                continue
            member, reason = suggest_aggregation(site)
            if member == tfapi.AGG_MEAN:
                member, reason = tfapi.AGG_ONLY_FIRST_REPLICA, "MEAN needs a float dtype"
            new, edits = set_setting(ctx, site, tfapi.AGG, member)
            fix = make_fix(UNSAFE, f"Use {new} ({reason})", *edits)
            yield ctx.finding(
                arg.span,
                f"`{written('aggregation', site.agg)}` on {article(site.dtype)} {site.dtype} variable: "
                f"{message_tail}",
                severity, fix)
