from __future__ import annotations

from typing import Iterator

from ..findings import Finding
from ..model import tfapi
from .base import ERROR, Expect, Invalid, Rule, RuleContext, judge, snippet


class UnsupportedScatter(Rule):
    """
    ## What it does
    Flags a `scatter_*` update on an ON_READ variable, and `scatter_update`,
    `scatter_min` or `scatter_max` on an ON_WRITE variable whose aggregation is SUM or
    MEAN.

    ## Why is this bad?
    Under MirroredStrategy, MultiWorkerMirroredStrategy and TPUStrategy these raise
    ``NotImplementedError: Variables with `synchronization=ON_READ` doesn't support
    `scatter_add` `` and ``NotImplementedError: scatter_update is only supported for
    mirrored variable (variable created within certain `tf.distribute.Strategy` scope)
    with NONE or `ONLY_FIRST_REPLICA` aggregation``. (`scatter_add`/`scatter_sub` on an
    ON_WRITE + SUM variable work: the deltas are all-reduced.)

    ## Example
    ```python
    with strategy.scope():
        last_seen = tf.Variable(tf.zeros([100]), aggregation=tf.VariableAggregation.MEAN)
    last_seen.scatter_update(tf.IndexedSlices(values, ids))
    ```
    Use instead:
    ```python
    with strategy.scope():
        last_seen = tf.Variable(tf.zeros([100]),
                                aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)
    ```

    The module functions (`tf.compat.v1.scatter_add(v, ...)`) are not affected: in replica
    context they write the replica's own copy through `v.handle` (seen in TF 2.21).

    ## Fix safety
    No automatic fix: which aggregation (or a dense update) is right depends on the data.
    """

    code = "TFS106"
    name = "unsupported-scatter"
    severity = ERROR
    summary = "scatter_* on an ON_READ variable, or scatter_update/min/max on ON_WRITE with SUM/MEAN"

    VALID = [
        snippet("""
            import tensorflow as tf
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                v = tf.Variable(tf.zeros([4]), aggregation=tf.VariableAggregation.SUM)
            v.scatter_add(tf.IndexedSlices(tf.ones([1]), tf.constant([0])))
        """),
        snippet("""
            import tensorflow as tf
            v = tf.Variable(tf.zeros([4]), synchronization=tf.VariableSynchronization.ON_READ, aggregation=tf.VariableAggregation.SUM)
            v.scatter_add(tf.IndexedSlices(tf.ones([1]), tf.constant([0])))
        """),
    ]
    INVALID = [
        Invalid(
            snippet("""
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    v = tf.Variable(tf.zeros([4]), trainable=False, synchronization=tf.VariableSynchronization.ON_READ, aggregation=tf.VariableAggregation.SUM)
                v.scatter_add(tf.IndexedSlices(tf.ones([1]), tf.constant([0])))
            """),
            (Expect(5, 1, ERROR),),
        ),
        Invalid(
            snippet("""
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    v = tf.Variable(tf.zeros([4]), aggregation=tf.VariableAggregation.MEAN)
                v.scatter_update(tf.IndexedSlices(tf.ones([1]), tf.constant([0])))
            """),
            (Expect(5, 1, ERROR),),
        ),
    ]

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for site in [
                s for s in ctx.sites_updated_here()
                if any(u.method in tfapi.SCATTER_METHODS for u in s.updates)]:
            on_read = site.sync.member == tfapi.SYNC_ON_READ
            aggregated = site.sync.member in (tfapi.SYNC_AUTO, tfapi.SYNC_ON_WRITE) and \
                site.agg.member in (tfapi.AGG_SUM, tfapi.AGG_MEAN)
            if not (on_read or aggregated):
                continue
            for update in site.updates:
                if update.path != ctx.path or update.method not in tfapi.SCATTER_METHODS:
                    continue
                if update.function_style:
                    continue  # state_ops.scatter_* writes the replica's own copy: no error
                if aggregated and update.method not in tfapi.SCATTER_NEEDS_NONE_AGGREGATION:
                    continue
                verdict = judge(list(site.contexts), tfapi.MIRRORING_STRATEGIES, ctx.path,
                                ctx.settings.assume_strategy, ctx.note)
                if verdict is None:
                    continue
                created = ctx.at("created", site.path, site.call.span, f"`{site.name}` created")
                if on_read:
                    message = (f"`{site.name}` ({created}) is ON_READ: "
                               f"`{update.method}` raises NotImplementedError (\"Variables with "
                               f"`synchronization=ON_READ` doesn't support `{update.method}`\") "
                               f"{verdict.where}")
                else:
                    message = (f"`{site.name}` ({created}) has aggregation "
                               f"{site.agg.member}: `{update.method}` raises NotImplementedError "
                               f"(\"only supported for mirrored variable ... with NONE or "
                               f"`ONLY_FIRST_REPLICA` aggregation\") {verdict.where}")
                yield ctx.finding(update.span, message, verdict.severity)
