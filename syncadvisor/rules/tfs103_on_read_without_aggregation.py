from __future__ import annotations

from typing import Iterator

from ..findings import Finding
from ..model import tfapi
from ..model.contexts import IN_STRATEGY
from ..model.facts import READ_CHECKPOINT, READ_SAVE
from ..model.usage import ESCAPES, MODULE_GLOBAL
from .base import (ERROR, UNSAFE, WARNING, Expect, Invalid, Rule, RuleContext, make_fix,
                   set_setting, site_span, snippet, suggest_aggregation)


class OnReadWithoutAggregation(Rule):
    """
    ## What it does
    Flags an `ON_READ` variable whose aggregation is `NONE` or not given, where something
    will combine its copies: a cross-replica read or a save that is visible (error), or
    a checkpoint or SavedModel that can reach it because it is tracked state -- an
    attribute of a Keras layer, model, metric or optimizer, of a `tf.Module` or another
    trackable, a variable given to `tf.train.Checkpoint(...)`, or a module global
    (warning). Building a checkpoint reads nothing; its `save`/`write` is the save.

    ## Why is this bad?
    An ON_READ variable keeps one copy per replica and combines them when read in
    cross-replica context, with its aggregation. With NONE there is no way to combine
    them: the first cross-replica read (`v.numpy()`, `v.read_value()` outside
    `strategy.run`), checkpoint save or SavedModel export raises ``ValueError: Could not
    convert from `tf.VariableAggregation` VariableAggregation.NONE to`tf.distribute.ReduceOp`
    type`` under MirroredStrategy, MultiWorkerMirroredStrategy or TPUStrategy (even with
    one replica). It is an error where such a read or save is visible. Tracked state is a
    warning: nothing here reads it across replicas, but saving what tracks it will.

    A per-replica buffer that nothing tracks and that is only read in replica context
    (`v.value()` inside `strategy.run` is the replica's own copy) is never combined, and
    is no finding: OpenNMT-tf's gradient accumulator keeps its gradients this way on
    purpose, in a plain Python object that no checkpoint reaches.

    ## Example
    ```python
    class Stats(tf.Module):
        def __init__(self):
            self.total = tf.Variable(0.0, trainable=False,
                                     synchronization=tf.VariableSynchronization.ON_READ)
    ```
    Use instead:
    ```python
    class Stats(tf.Module):
        def __init__(self):
            self.total = tf.Variable(0.0, trainable=False,
                                     synchronization=tf.VariableSynchronization.ON_READ,
                                     aggregation=tf.VariableAggregation.SUM)
    ```

    ## Fix safety
    Unsafe: the aggregation decides what every cross-replica read returns. It is chosen
    from the updates seen: SUM for `assign_add`/`assign_sub` accumulators, MEAN for
    `assign` of statistics, ONLY_FIRST_REPLICA for counters.
    """

    code = "TFS103"
    name = "on-read-without-aggregation"
    severity = ERROR
    summary = "an ON_READ variable with aggregation NONE or omitted"
    fix_availability = "unsafe"

    VALID = [
        snippet("""
            import tensorflow as tf
            v = tf.Variable(0., trainable=False, synchronization=tf.VariableSynchronization.ON_READ, aggregation=tf.VariableAggregation.SUM)
        """),
        snippet("""
            import tf_keras
            import tensorflow as tf
            class M(tf_keras.metrics.Metric):
                def __init__(self):
                    super().__init__()
                    self.total = self.add_weight('total', synchronization=tf.VariableSynchronization.ON_READ)
        """),
        snippet("""
            import tensorflow as tf
            strategy = tf.distribute.experimental.CentralStorageStrategy()
            with strategy.scope():
                v = tf.Variable(0., synchronization=tf.VariableSynchronization.ON_READ)
        """),
        snippet("""
            import tensorflow as tf
            class GradientAccumulator(object):
                def __init__(self):
                    self._gradients = []
                def __call__(self, gradients):
                    if not self._gradients:
                        self._gradients.extend([
                            tf.Variable(tf.zeros_like(g), trainable=False,
                                        synchronization=tf.VariableSynchronization.ON_READ)
                            for g in gradients])
                    for accumulated, g in zip(self._gradients, gradients):
                        accumulated.assign_add(g)
                @property
                def gradients(self):
                    return [g.value() for g in self._gradients]
        """),
    ]
    INVALID = [
        Invalid(
            snippet("""
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    v = tf.Variable(0., trainable=False, synchronization=tf.VariableSynchronization.ON_READ)
            """),
            (Expect(4, 42, WARNING),),
        ),
        Invalid(
            snippet("""
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    n = tf.Variable(0., trainable=False, synchronization=tf.VariableSynchronization.ON_READ)
                strategy.run(lambda: n.assign_add(1.))
                print(n.numpy())
            """),
            (Expect(4, 42, ERROR),),
            unsafe_fixed=snippet("""
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    n = tf.Variable(0., trainable=False, synchronization=tf.VariableSynchronization.ON_READ, aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)
                strategy.run(lambda: n.assign_add(1.))
                print(n.numpy())
            """),
        ),
        Invalid(  # a checkpoint tracks it; its save is not in sight
            snippet("""
                import tensorflow as tf
                def make(strategy):
                    with strategy.scope():
                        seen = tf.Variable(0., trainable=False, synchronization=tf.VariableSynchronization.ON_READ)
                    return tf.train.Checkpoint(seen=seen)
            """),
            (Expect(4, 49, WARNING),),
        ),
        Invalid(  # ... and its save is
            snippet("""
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    seen = tf.Variable(0., trainable=False, synchronization=tf.VariableSynchronization.ON_READ)
                checkpoint = tf.train.Checkpoint(seen=seen)
                checkpoint.write('/tmp/ckpt')
            """),
            (Expect(4, 45, ERROR),),
        ),
        Invalid(  # in a list the checkpoint tracks
            snippet("""
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    seen = tf.Variable(0., trainable=False, synchronization=tf.VariableSynchronization.ON_READ)
                tf.train.Checkpoint(stats=[seen]).save('/tmp/ckpt')
            """),
            (Expect(4, 45, ERROR),),
        ),
        Invalid(
            snippet("""
                import keras
                v = keras.Variable(0., trainable=False, synchronization='on_read', aggregation='none')
            """),
            (Expect(2, 68, WARNING),),
        ),
        Invalid(
            snippet("""
                import tensorflow as tf
                class Stats(tf.Module):
                    def __init__(self):
                        self.total = tf.Variable(0., trainable=False, synchronization=tf.VariableSynchronization.ON_READ)
            """),
            (Expect(4, 55, WARNING),),
        ),
    ]

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for site in ctx.sites:
            if site.sync.member != tfapi.SYNC_ON_READ or site.agg.member != tfapi.AGG_NONE:
                continue
            if site.api.sync_forced is not None:
                continue  # Keras 3 metric variables: the API chose ON_READ itself
            if site.contexts and all(
                    c.kind == IN_STRATEGY and c.strategy is not None
                    and c.strategy.kinds <= set(tfapi.AGGREGATING_STRATEGIES)
                    for c in site.contexts):
                continue  # ON_READ is ignored there (TFS203)
            verdict = ctx.judge(site, tfapi.MIRRORING_STRATEGIES)
            where = verdict.where if verdict else (
                "under MirroredStrategy, MultiWorkerMirroredStrategy or TPUStrategy")
            read = next((r for r in site.reads if r.cross_replica), None)
            checkpoint = next((r for r in site.reads if r.kind == READ_CHECKPOINT), None)
            holder = ctx.holder(site)
            if read is None and holder is None and checkpoint is None:
                continue  # a replica-local buffer: nothing combines its copies
            severity = WARNING
            if read is not None and verdict is not None and verdict.severity == ERROR:
                severity = ERROR
                what = {READ_CHECKPOINT: "its checkpoint", READ_SAVE: "saving it"}.get(
                    read.kind, f"its cross-replica read `.{read.kind}()`")
                trigger = ctx.at(what, read.path, read.span)
            elif read is not None:
                trigger = "its first cross-replica read, checkpoint or SavedModel export"
            elif checkpoint is not None:
                trigger = (f"{ctx.at('the checkpoint', checkpoint.path, checkpoint.span)} "
                           f"tracks it, so saving that checkpoint (or any cross-replica read)")
            else:
                holder = holder or ""
                if holder == MODULE_GLOBAL:
                    holder = "it is a module global"
                elif holder == ESCAPES:
                    holder = "it leaves the function that makes it for state that may be saved"
                else:
                    holder = f"`{holder.rpartition('.')[2]}` tracks it"
                trigger = f"{holder}, so a checkpoint or SavedModel export (or any cross-replica read)"
            member, reason = suggest_aggregation(site)
            text, edits = set_setting(ctx, site, tfapi.AGG, member)
            yield ctx.finding(
                site_span(site, site.agg if site.agg.arg is not None else site.sync),
                f"`{site.name}` is ON_READ without an aggregation: {trigger} raises ValueError "
                f"(\"Could not convert from `tf.VariableAggregation` ... to `tf.distribute.ReduceOp`\") "
                f"{where}",
                severity, make_fix(UNSAFE, f"Add `aggregation={text}` ({reason})", *edits))
