from __future__ import annotations

import re
from typing import Iterator

from ..findings import Finding
from ..model import tfapi
from ..model.usage import PER_REPLICA
from .base import (INFO, UNSAFE, Expect, Invalid, Rule, RuleContext, make_fix, set_setting,
                   site_span, snippet)


class PreferOnReadForReplicaLocalState(Rule):
    """
    ## What it does
    Flags a non-trainable ON_WRITE (or AUTO) variable with aggregation SUM or MEAN that is
    updated in replica context and not read there: metric totals, accumulators, moving
    statistics.

    ## Why is this bad?
    Every replica-context write of such a variable is a cross-device reduction (an
    all-reduce of the delta, then an update of every copy). ON_READ keeps one copy per
    replica, writes locally, and reduces once, when the value is read in cross-replica
    context (a report, a checkpoint). This is how tf_keras metrics and BatchNormalization
    and Keras 3 metrics do it. Measured here on 2 logical CPUs: one `AddN` reduction per
    write under ON_WRITE + SUM, none under ON_READ + SUM, for the same final value.

    ## Example
    ```python
    with strategy.scope():
        loss_sum = tf.Variable(0.0, trainable=False,
                               synchronization=tf.VariableSynchronization.ON_WRITE,
                               aggregation=tf.VariableAggregation.SUM)
    ```
    Use instead:
    ```python
    with strategy.scope():
        loss_sum = tf.Variable(0.0, trainable=False,
                               synchronization=tf.VariableSynchronization.ON_READ,
                               aggregation=tf.VariableAggregation.SUM)
    ```

    ## Fix safety
    Unsafe: reads inside `strategy.run` then see the replica's own part, not the total;
    `scatter_*` updates stop working. The rule stays silent where it sees either.
    """

    code = "TFS301"
    name = "prefer-on-read-for-replica-local-state"
    severity = INFO
    summary = "a non-trainable SUM/MEAN accumulator written every step in replica context: prefer ON_READ"
    fix_availability = "unsafe"

    VALID = [
        snippet("""
            import tensorflow as tf
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                total = tf.Variable(0., trainable=False, synchronization=tf.VariableSynchronization.ON_READ, aggregation=tf.VariableAggregation.SUM)
            strategy.run(lambda x: total.assign_add(x), args=(1.,))
        """),
        snippet("""
            import tensorflow as tf
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                w = tf.Variable(0., aggregation=tf.VariableAggregation.MEAN)
            strategy.run(lambda x: w.assign(x), args=(1.,))
        """),
    ]
    INVALID = [
        Invalid(
            snippet("""
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    total = tf.Variable(0., trainable=False, aggregation=tf.VariableAggregation.SUM)
                strategy.run(lambda x: total.assign_add(x), args=(1.,))
            """),
            (Expect(4, 13, INFO),),
            unsafe_fixed=snippet("""
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    total = tf.Variable(0., trainable=False, aggregation=tf.VariableAggregation.SUM, synchronization=tf.VariableSynchronization.ON_READ)
                strategy.run(lambda x: total.assign_add(x), args=(1.,))
            """),
        ),
    ]

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for site in ctx.sites:
            if site.trainable is not False or \
                    site.sync.member not in (tfapi.SYNC_AUTO, tfapi.SYNC_ON_WRITE):
                continue
            if site.agg.member not in (tfapi.AGG_SUM, tfapi.AGG_MEAN) or \
                    not site.api.has_parameter(tfapi.SYNC):
                continue
            replica = [u for u in site.updates if u.replica_context]
            if not any(u.value_kind == PER_REPLICA for u in replica):
                continue  # constant increments are counters (TFS302, TFS107)
            if any(u.method in tfapi.SCATTER_METHODS for u in site.updates):
                continue
            if site.api.family in tfapi.READ_MODIFY_WRITE_ADDS and \
                    site.agg.member == tfapi.AGG_SUM and \
                    any(u.method in ("assign_add", "assign_sub") for u in replica):
                continue  # not a cost but wrong values there: TFS205
            if any(tfapi.TPU in (c.strategy.kinds if c.strategy else ()) for c in site.contexts):
                continue  # TPUs want metrics ON_WRITE (tf_keras forces it there)
            if self._read_in_replica(ctx, site, replica):
                continue
            text, edits = set_setting(ctx, site, tfapi.SYNC, tfapi.SYNC_ON_READ)
            first = ctx.at("first", replica[0].path, replica[0].span, f"`.{replica[0].method}`")
            yield ctx.finding(
                site_span(site, site.sync),
                f"`{site.name}` ({site.agg.member}, not trainable) is written in replica context "
                f"({len(replica)} update{'s' if len(replica) != 1 else ''}, {first}): each write is a cross-device "
                f"reduction; ON_READ writes locally and reduces only when read",
                INFO, make_fix(UNSAFE, f"Use `synchronization={text}`", *edits))

    @staticmethod
    def _read_in_replica(ctx: RuleContext, site, replica) -> bool:
        if any(r.kind in tfapi.READ_METHODS and not r.cross_replica for r in site.reads):
            return True
        target = site.call.target or ""
        if target and any(u.value is not None and re.search(rf"(?<![\w.]){re.escape(target)}(?!\w)",
                                                            u.value.text) for u in replica):
            return True  # `ema.assign(0.9 * ema + ...)`: read where it is written
        if not target.startswith("self."):
            return False
        attr = target[len("self."):]
        for update in replica:
            fm = ctx.model_at(update.path)
            seen = fm.self_loads.get((update.function, attr), 0)
            writes = sum(1 for u in site.updates if u.function == update.function)
            if seen > writes:
                return True  # `self.<attr>` is also read where it is written
        return False
