from __future__ import annotations

from typing import Iterator

from ..findings import Finding
from ..model import tfapi
from ..model.contexts import IN_STRATEGY
from .base import INFO, Expect, Invalid, Rule, RuleContext, snippet


class OnReadIgnored(Rule):
    """
    ## What it does
    Flags `synchronization=ON_READ` on a variable created under CentralStorageStrategy or
    ParameterServerStrategy.

    ## Why is this bad?
    These strategies keep one aggregating copy of each variable and ignore
    `synchronization`: an "ON_READ" variable still aggregates on every write, and a
    replica-context update with aggregation NONE still raises. Code that relies on
    replica-local ON_READ state behaves differently here than under MirroredStrategy.

    ## Example
    ```python
    strategy = tf.distribute.experimental.CentralStorageStrategy()
    with strategy.scope():
        total = tf.Variable(0.0, synchronization=tf.VariableSynchronization.ON_READ,
                            aggregation=tf.VariableAggregation.SUM)
    ```

    ## Fix safety
    No automatic fix: the setting is harmless but misleading; drop it if the code only
    ever runs under these strategies.
    """

    code = "TFS203"
    name = "on-read-ignored"
    severity = INFO
    summary = "ON_READ under CentralStorage or ParameterServer strategy: ignored there"

    VALID = [
        snippet("""
            import tensorflow as tf
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                v = tf.Variable(0., trainable=False, synchronization=tf.VariableSynchronization.ON_READ, aggregation=tf.VariableAggregation.SUM)
        """),
    ]
    INVALID = [
        Invalid(
            snippet("""
                import tensorflow as tf
                strategy = tf.distribute.experimental.CentralStorageStrategy()
                with strategy.scope():
                    v = tf.Variable(0., trainable=False, synchronization=tf.VariableSynchronization.ON_READ, aggregation=tf.VariableAggregation.SUM)
            """),
            (Expect(4, 42, INFO),),
        ),
    ]

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        aggregating = set(tfapi.AGGREGATING_STRATEGIES)
        for site in ctx.sites:
            if site.sync.member != tfapi.SYNC_ON_READ or site.sync.arg is None or not site.contexts:
                continue
            strategies = [c.strategy for c in site.contexts]
            if not all(c.kind == IN_STRATEGY and c.strategy is not None
                       and c.strategy.kinds <= aggregating for c in site.contexts):
                continue
            names = " / ".join(sorted({k for s in strategies if s for k in s.kinds}))
            yield ctx.finding(site.sync.arg.span,
                              f"`{site.name}` is created under {names}, which ignores ON_READ: the "
                              f"variable aggregates on every write", INFO)
