from __future__ import annotations

from typing import Iterator

from ..findings import Finding
from ..model import tfapi
from ..model.usage import CROSS
from .base import ERROR, Expect, Invalid, Rule, RuleContext, judge, snippet

_INCREMENTS = ("assign_add", "assign_sub")


class OnReadSumCrossReplicaUpdate(Rule):
    """
    ## What it does
    Flags `assign_add`/`assign_sub` on an ON_READ + SUM variable (a tf_keras metric's
    weights, or your own) in cross-replica context: outside `strategy.run`, for example a
    metric's `update_state` called directly in the training loop or at module level.

    ## Why is this bad?
    Each replica keeps its own part of an ON_READ + SUM variable; a cross-replica
    increment has no replica to go to: ``ValueError: SyncOnReadVariable does not support
    `assign_add` in cross-replica context when aggregation is set to
    `tf.VariableAggregation.SUM`.`` (tensorflow/tensorflow#56875, keras-team/tf-keras#505).
    Keras 3 metrics are not affected: their `assign_add` goes through `assign`.

    ## Example
    ```python
    with strategy.scope():
        accuracy = tf_keras.metrics.Accuracy()
    for x, y in dataset:
        accuracy.update_state(y, model(x))
    ```
    Use instead:
    ```python
    def step(x, y):
        accuracy.update_state(y, model(x))
    for x, y in dist_dataset:
        strategy.run(step, args=(x, y))
    ```

    ## Fix safety
    No automatic fix: move the update inside `strategy.run`, or use `assign` (which
    divides a cross-replica value by the number of replicas).
    """

    code = "TFS105"
    name = "on-read-sum-cross-replica-update"
    severity = ERROR
    summary = "assign_add/assign_sub on an ON_READ + SUM variable outside strategy.run"

    VALID = [
        snippet("""
            import tensorflow as tf
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                total = tf.Variable(0., trainable=False, synchronization=tf.VariableSynchronization.ON_READ, aggregation=tf.VariableAggregation.SUM)
            strategy.run(lambda: total.assign_add(1.))
            print(total.numpy())
        """),
    ]
    INVALID = [
        Invalid(
            snippet("""
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    total = tf.Variable(0., trainable=False, synchronization=tf.VariableSynchronization.ON_READ, aggregation=tf.VariableAggregation.SUM)
                total.assign_add(1.)
            """),
            (Expect(5, 1, ERROR),),
        ),
        Invalid(
            snippet("""
                import tensorflow as tf
                import tf_keras
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    accuracy = tf_keras.metrics.Accuracy()
                accuracy.update_state([1], [1])
            """),
            (Expect(6, 1, ERROR),),
        ),
    ]

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        reported = set()
        for site in [
                s for s in ctx.sites_updated_here() if s.sync.member == tfapi.SYNC_ON_READ
                and s.agg.member == tfapi.AGG_SUM and s.family != tfapi.KERAS3]:
            for update in site.updates:
                if update.method not in _INCREMENTS:
                    continue
                for where in update.in_cross_replica():
                    path, span = where.at if where.at else (update.path, update.span)
                    if path != ctx.path or (span.line, span.column) in reported:
                        continue
                    verdict = judge(list(site.contexts), tfapi.MIRRORING_STRATEGIES, ctx.path,
                                    ctx.settings.assume_strategy, ctx.note)
                    if verdict is None:
                        continue
                    reported.add((span.line, span.column))
                    what = f"`{site.name}.{update.method}(...)`"
                    if where.at is not None:
                        what = (f"this call runs {what} (at "
                                f"{ctx.where(update.path, update.span, what)}"
                                f"{ctx.reached(where, update.function)})")
                    yield ctx.finding(
                        span,
                        f"{what} in cross-replica context, and `{site.name}` is ON_READ + SUM: "
                        f"ValueError (\"SyncOnReadVariable does not support `{update.method}` in "
                        f"cross-replica context\") {verdict.where}; update it inside "
                        f"`strategy.run`", verdict.severity)
        yield from self._library_metrics(ctx, reported)

    def _library_metrics(self, ctx: RuleContext, reported) -> Iterator[Finding]:
        for use in ctx.model.uses:
            if use.method != "update_state" or (use.span.line, use.span.column) in reported:
                continue
            if not any(w.kind == CROSS for w in ctx.where_at(use.function)):
                continue
            for obj in ctx.constructions(use.receiver, ctx.path):
                qname = str(obj.key)
                if not qname.startswith(tfapi.KERAS2_METRICS_PREFIX):
                    continue
                bound, path = obj.origin
                contexts = list(ctx.creation_contexts(bound, path))
                verdict = judge(contexts, tfapi.MIRRORING_STRATEGIES, ctx.path,
                                ctx.settings.assume_strategy, ctx.note)
                if verdict is None:
                    continue
                reported.add((use.span.line, use.span.column))
                yield ctx.finding(
                    use.span,
                    f"`{use.receiver.text}` is a tf_keras metric (ON_READ + SUM weights): "
                    f"`update_state` in cross-replica context raises ValueError "
                    f"(\"SyncOnReadVariable does not support `assign_add` in cross-replica "
                    f"context\") {verdict.where}; call it inside `strategy.run`",
                    verdict.severity)
                break

