from __future__ import annotations

from typing import Iterator

from ..findings import Finding
from ..model import tfapi
from .base import (WARNING, UNSAFE, Expect, Invalid, Rule, RuleContext, make_fix, set_on_read,
                   site_span, snippet, strategy_contexts)

_ADDS = frozenset({"assign_add", "assign_sub"})


class Keras3SumReadModifyWrite(Rule):
    """
    ## What it does
    Flags a Keras 3 variable (`keras.Variable`, Keras 3 `Layer.add_weight`) with
    `aggregation="sum"` that is synchronized on write (the default) and updated with
    `assign_add`/`assign_sub` in replica context under a mirroring strategy.

    ## Why is this bad?
    Keras 3 implements `assign_add(x)` as `assign(self + x)`. In replica context the
    strategy then sums what every replica assigns -- its whole new value, not its
    increment -- so each update makes the value `R * v + sum(x)` for R replicas: it grows
    R-fold every step, silently, on every copy. (A `tf.Variable`'s own `assign_add` sums
    the increments; tf_keras variables are `tf.Variable`s.) Measured with
    `syncadvisor profile --run examples/train_fit.py` (the metric's ON_WRITE + SUM run reads
    values that differ from its ON_READ + SUM run's) and by a runtime test on 2 logical CPUs,
    where a per-replica count of 2048 examples read 274877906944.

    ## Example
    ```python
    with strategy.scope():
        seen = keras.Variable(0.0, trainable=False, aggregation="sum")
    ```
    Use instead (each replica adds to its own copy; a read sums the copies, as Keras 3's
    own metrics do):
    ```python
    with strategy.scope():
        seen = keras.Variable(0.0, trainable=False, aggregation="sum",
                              synchronization="on_read")
    ```

    ## Fix safety
    Unsafe: reads inside `strategy.run` then see the replica's own part, not the total,
    and the fix also sets `trainable=False` where the variable was trainable (an
    accumulator is not trained; the optimizer no longer sees it).
    Keras 3 `Layer.add_weight` has no `synchronization` parameter, so there is no
    automatic fix there: create the weight as a `keras.Variable` instead.
    """

    code = "TFS205"
    name = "keras3-sum-read-modify-write"
    severity = WARNING
    summary = ("a Keras 3 ON_WRITE + SUM variable given assign_add/assign_sub in replica "
               "context: Keras 3 assigns v + x, so the value grows R-fold per step")
    fix_availability = "unsafe"

    VALID = [
        snippet("""
            import keras
            import tensorflow as tf
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                seen = keras.Variable(0., trainable=False, aggregation="sum", synchronization="on_read")
            strategy.run(lambda x: seen.assign_add(x), args=(1.,))
        """),
        snippet("""
            import tensorflow as tf
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                seen = tf.Variable(0., trainable=False, aggregation=tf.VariableAggregation.SUM)
            strategy.run(lambda x: seen.assign_add(x), args=(1.,))
        """),
        snippet("""
            import keras
            import tensorflow as tf
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                seen = keras.Variable(0., trainable=False, aggregation="sum")
            seen.assign_add(1.)
        """),
    ]
    INVALID = [
        Invalid(
            snippet("""
                import keras
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    seen = keras.Variable(0., trainable=False, aggregation="sum")
                strategy.run(lambda x: seen.assign_add(x), args=(1.,))
            """),
            (Expect(5, 48, WARNING),),
            unsafe_fixed=snippet("""
                import keras
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    seen = keras.Variable(0., trainable=False, aggregation="sum", synchronization="on_read")
                strategy.run(lambda x: seen.assign_add(x), args=(1.,))
            """),
        ),
    ]

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for site in ctx.sites:
            if site.api.family not in tfapi.READ_MODIFY_WRITE_ADDS or \
                    site.sync.member not in (tfapi.SYNC_AUTO, tfapi.SYNC_ON_WRITE) or \
                    site.agg.member != tfapi.AGG_SUM:
                continue
            updates = [u for u in site.updates if u.method in _ADDS and u.replica_context]
            if not updates:
                continue
            verdict = ctx.judge(strategy_contexts(site, updates), tfapi.MIRRORING_STRATEGIES)
            if verdict is None:
                continue
            update = updates[0]
            where = ctx.at("in replica context", update.path, update.span,
                           f"`.{update.method}(...)`")
            fix = None
            if site.api.has_parameter(tfapi.SYNC):
                text, edits = set_on_read(ctx, site)
                fix = make_fix(UNSAFE, f"Use `{text}` (each replica adds to its own copy; a "
                                       f"read sums them)", *edits)
                instead = "ON_READ adds locally and sums the copies when read"
            else:
                instead = (f"{site.api.title} has no `synchronization` parameter: create it "
                           f"as `keras.Variable(..., aggregation=\"sum\", "
                           f"synchronization=\"on_read\", trainable=False)`")
            yield ctx.finding(
                site_span(site, site.agg),
                f"`{site.name}` (Keras 3, aggregation SUM) gets `.{update.method}(...)` {where}: "
                f"Keras 3 assigns `v + x` there, and SUM adds every replica's whole new value, "
                f"so {verdict.where} the value grows by the number of replicas at each update; "
                f"{instead}",
                WARNING, fix)
