from __future__ import annotations

from typing import Iterator

from ..findings import Finding
from ..model import tfapi
from ..model.usage import is_statistic, statistic_name
from .base import (WARNING, Expect, Invalid, Rule, RuleContext, judge, member_text, site_span,
                   snippet, strategy_contexts)


class OnReadSumAssignedStatistic(Rule):
    """
    ## What it does
    Flags an `ON_READ` variable with aggregation `SUM` -- the default state of a Keras
    metric (`Metric.add_weight` in tf_keras, `Metric.add_variable`/`add_weight` in
    Keras 3) -- that is updated in replica context with `assign` of a statistic that does
    not add up across replicas: a maximum, a minimum, a mean (`tf.maximum`,
    `tf.reduce_max`, `keras.ops.mean`, ...). A value whose origin is not visible (a name
    bound elsewhere) is left alone: it may well be a running total computed in a helper.

    ## Why is this bad?
    An ON_READ variable keeps one copy per replica, and a replica-context `assign` writes
    only the replica's own copy. The cross-replica read (a metric's `result()`, a
    checkpoint) then combines the copies with the aggregation, SUM: a running total comes
    out right, but a statistic does not. Under MirroredStrategy with two replicas whose
    maxima are 3 and 5, a max metric reports 8.0, in tf_keras and Keras 3 alike. Nothing
    raises.

    TensorFlow has no MAX or MIN aggregation, so no setting fixes it alone: combine the
    statistic across replicas before the assign (`ReplicaContext.all_gather`, or
    `all_reduce` for a sum or mean), so that every copy holds the same value, and give
    the variable an aggregation that reads one copy (`ONLY_FIRST_REPLICA`, or `MEAN`). A
    mean needs no gathering: `MEAN` aggregation averages the replicas' means (the whole's
    mean when their batches are the same size).

    ## Example
    ```python
    class MaxSeen(tf_keras.metrics.Metric):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.max = self.add_weight(name="max", initializer="zeros")

        def update_state(self, values):
            self.max.assign(tf.maximum(self.max, tf.reduce_max(values)))
    ```
    Use instead:
    ```python
    class MaxSeen(tf_keras.metrics.Metric):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.max = self.add_weight(name="max", initializer="zeros",
                                       aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)

        def update_state(self, values):
            local_max = tf.reshape(tf.reduce_max(values), [1])
            replicas_max = tf.distribute.get_replica_context().all_gather(local_max, axis=0)
            self.max.assign(tf.maximum(self.max, tf.reduce_max(replicas_max)))
    ```

    ## Fix safety
    No automatic fix: the statistic has to be combined across replicas in the update
    itself, which depends on what it is.
    """

    code = "TFS204"
    name = "on-read-sum-assigned-statistic"
    severity = WARNING
    summary = "an ON_READ + SUM variable (a Keras metric's state) assigned a statistic"
    fix_availability = None

    VALID = [
        snippet("""
            import tensorflow as tf
            import tf_keras
            class Total(tf_keras.metrics.Metric):
                def __init__(self):
                    super().__init__()
                    self.total = self.add_weight('total', initializer='zeros')
                def update_state(self, values):
                    self.total.assign(self.total + tf.reduce_sum(values))
                def reset_state(self):
                    self.total.assign(0.)
        """),
        snippet("""
            import keras
            class Count(keras.metrics.Metric):
                def __init__(self):
                    super().__init__()
                    self.count = self.add_variable(shape=(), initializer='zeros')
                def update_state(self, values):
                    self.count.assign(keras.ops.add(self.count, keras.ops.size(values)))
        """),
        snippet("""
            import tensorflow as tf
            import tf_keras
            class MaxSeen(tf_keras.metrics.Metric):
                def __init__(self):
                    super().__init__()
                    self.max = self.add_weight('max', aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)
                def update_state(self, values):
                    self.max.assign(tf.maximum(self.max, tf.reduce_max(values)))
        """),
        snippet("""
            import tensorflow as tf
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                v = tf.Variable(0., trainable=False, synchronization=tf.VariableSynchronization.ON_READ, aggregation=tf.VariableAggregation.SUM)
            v.assign(5.)
        """),
    ]
    INVALID = [
        Invalid(
            snippet("""
                import tensorflow as tf
                import tf_keras
                class MaxSeen(tf_keras.metrics.Metric):
                    def __init__(self):
                        super().__init__()
                        self.max = self.add_weight('max', initializer='zeros')
                    def update_state(self, values):
                        self.max.assign(tf.maximum(self.max, tf.reduce_max(values)))
            """),
            (Expect(6, 20, WARNING),),
        ),
        Invalid(
            snippet("""
                import keras
                class MeanLoss(keras.metrics.Metric):
                    def __init__(self):
                        super().__init__()
                        self.mean = self.add_variable(shape=(), initializer='zeros', aggregation='sum')
                    def update_state(self, loss):
                        self.mean.assign(keras.ops.mean(loss))
            """),
            (Expect(5, 70, WARNING),),
        ),
        Invalid(
            snippet("""
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    v = tf.Variable(0., trainable=False, synchronization=tf.VariableSynchronization.ON_READ, aggregation=tf.VariableAggregation.SUM)
                strategy.run(lambda x: v.assign(tf.reduce_mean(x)), args=(1.,))
            """),
            (Expect(4, 94, WARNING),),
        ),
    ]

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for site in ctx.sites:
            if site.sync.member != tfapi.SYNC_ON_READ or site.agg.member != tfapi.AGG_SUM:
                continue
            assigns = [u for u in site.updates if u.method == "assign" and u.replica_context
                       and not u.accumulates and is_statistic(u.value)]
            if not assigns:
                continue
            verdict = judge(strategy_contexts(site, assigns), tfapi.MIRRORING_STRATEGIES,
                            ctx.path, ctx.settings.assume_strategy, ctx.note)
            if verdict is None:
                continue
            update = assigns[0]
            value = f"`{update.value.text}`" if update.value is not None else "a value"
            at = ctx.at("`.assign(...)`", update.path, update.span)
            default = "" if site.agg.written else f" (the default of {site.api.title})"
            mean = statistic_name(update.value) in tfapi.MEAN_CALL_NAMES
            members = (tfapi.AGG_MEAN,) if mean else (tfapi.AGG_ONLY_FIRST_REPLICA, tfapi.AGG_MEAN)
            aggregation = " or ".join(member_text(ctx, site, tfapi.AGG, member)[0]
                                      for member in members)
            if tfapi.AGG not in site.api.parameters() and not site.api.accepts_any_keyword:
                # Keras 3 `Metric.add_weight` takes no aggregation; `add_variable` does.
                aggregation += f" (`{site.api.title}` takes none: create it with `add_variable`)"
            if mean:  # the replicas' means average to the whole's (equal batches)
                advice = f"give the variable aggregation {aggregation}, which averages them"
            else:
                advice = (f"TensorFlow has no MAX/MIN aggregation: combine the statistic across "
                          f"replicas before the assign (e.g. `tf.distribute.get_replica_context()"
                          f".all_gather(...)`), so every copy holds it, and give the variable "
                          f"aggregation {aggregation}")
            yield ctx.finding(
                site_span(site, site.agg),
                f"`{site.name}` is ON_READ with aggregation SUM{default}, and {at} writes "
                f"{value}, a statistic, to each replica's own copy "
                f"({ctx.via(update.in_replica()[0], update.function)}): {verdict.where} its cross-replica read "
                f"(`result()`, a checkpoint) adds up the replicas' values; {advice}",
                WARNING)
