from __future__ import annotations

from typing import Iterator

from ..findings import Finding
from ..model import tfapi
from ..model.variables import ENUM, KERAS_STRING
from .base import (ERROR, UNSAFE, WARNING, Expect, Invalid, Rule, RuleContext, make_fix, snippet,
                   written)


class NoneUnderStrategy(Rule):
    """
    ## What it does
    Flags `synchronization=NONE` (`tf.VariableSynchronization.NONE`, or Keras 3 `"none"`)
    on a variable created under MirroredStrategy, MultiWorkerMirroredStrategy or
    TPUStrategy. With no strategy, OneDeviceStrategy, CentralStorageStrategy or
    ParameterServerStrategy, NONE is accepted and nothing is reported.

    ## Why is this bad?
    Creating the variable raises ``ValueError: `NONE` variable synchronization mode is
    not supported with tf.distribute strategy. Please change the `synchronization` for
    variable: ...``, even with a single device. A tf.distribute variable is always
    synchronized somehow; there is no "per-device, never synchronized" mode.

    When no strategy is visible from the code, the finding is a warning that says under
    which strategies it fails. A project subclass of a strategy class is that strategy
    (`class Replicator(tf.distribute.MirroredStrategy)`). A `tf.variable_creator_scope`
    entered inside the strategy's scope whose creator rewrites the synchronization with a
    literal (NONE into ON_READ) is taken into account; one whose rewrite cannot be read
    turns the error into a warning that names it.

    ## Example
    ```python
    with strategy.scope():  # MirroredStrategy
        flag = tf.Variable(False, synchronization=tf.VariableSynchronization.NONE)
    ```
    Use instead:
    ```python
    with strategy.scope():
        flag = tf.Variable(False, aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)
    ```

    ## Fix safety
    Unsafe: removing the argument makes the variable AUTO, which is mirrored (ON_WRITE)
    under these strategies; updates then need an aggregation (see TFS201).
    """

    code = "TFS101"
    name = "none-under-strategy"
    severity = ERROR
    summary = "synchronization=NONE for a variable created under Mirrored/MultiWorkerMirrored/TPU strategies"
    fix_availability = "unsafe"

    VALID = [
        snippet("""
            import tensorflow as tf
            v = tf.Variable(1., synchronization=tf.VariableSynchronization.NONE)
        """),
        snippet("""
            import tensorflow as tf
            strategy = tf.distribute.OneDeviceStrategy('/cpu:0')
            with strategy.scope():
                v = tf.Variable(1., synchronization=tf.VariableSynchronization.NONE)
        """),
    ]
    INVALID = [
        Invalid(
            snippet("""
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    v = tf.Variable(1., synchronization=tf.VariableSynchronization.NONE)
            """),
            (Expect(4, 25, ERROR),),
            unsafe_fixed=snippet("""
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    v = tf.Variable(1.)
            """),
        ),
        Invalid(
            snippet("""
                from tensorflow import Variable as V, VariableSynchronization as VS
                def make():
                    return V(0., synchronization=VS.NONE)
            """),
            (Expect(3, 18, WARNING),),
        ),
        Invalid(
            snippet("""
                import keras
                import tensorflow as tf
                strategy = tf.distribute.experimental.MultiWorkerMirroredStrategy()
                with strategy.scope():
                    v = keras.Variable(1., synchronization='none')
            """),
            (Expect(5, 28, ERROR),),
        ),
    ]

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for site in ctx.sites:
            sync = site.sync
            if sync.member != tfapi.SYNC_NONE or sync.form not in (ENUM, KERAS_STRING) \
                    or sync.arg is None:
                continue
            verdict = ctx.judge(site, tfapi.MIRRORING_STRATEGIES)
            if verdict is None:
                continue
            default = '"auto"' if site.family == tfapi.KERAS3 else \
                ctx.enum_spelling(tfapi.SYNC, tfapi.SYNC_AUTO, sync.arg.value.prefix_text)[0]
            fix = make_fix(UNSAFE, "Remove `synchronization` (AUTO: mirrored under this strategy)",
                           *ctx.drop_setting(site, sync, default))
            yield ctx.finding(
                sync.arg.span,
                f"`{written('synchronization', sync)}` raises ValueError (\"`NONE` variable "
                f"synchronization mode is not supported with tf.distribute strategy\") "
                f"{verdict.where}",
                verdict.severity, fix)
