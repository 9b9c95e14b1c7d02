from __future__ import annotations

from typing import Iterator

from ..findings import Finding
from ..model import tfapi
from .base import ERROR, UNSAFE, WARNING, Expect, Invalid, Rule, RuleContext, make_fix, snippet


class OnReadTrainable(Rule):
    """
    ## What it does
    Flags a variable that is both `synchronization=ON_READ` and trainable: `trainable=True`
    written out, or Keras 3 `keras.Variable(..., synchronization="on_read")` where
    trainable stays True unless set. A variable creator in effect
    (`tf.variable_creator_scope`) that sets `trainable` to a literal decides what the
    variable gets; tf_keras checks what `add_weight` is given, before any creator runs.

    ## Why is this bad?
    Keras 2 (`tf_keras`) `add_weight` refuses it: `ValueError: Synchronization value can be
    set to VariableSynchronization.ON_READ only for non-trainable variables.` (an error,
    whatever the strategy). `tf.Variable` and Keras 3 accept it silently: each replica then
    computes its own gradient for its own copy, and the result depends on the optimizer.
    Every TensorFlow and Keras use of ON_READ (metrics, batch-norm statistics, gradient
    accumulators) is non-trainable.

    ## Example
    ```python
    moving_mean = self.add_weight("moving_mean", shape, trainable=True,
                                  synchronization=tf.VariableSynchronization.ON_READ,
                                  aggregation=tf.VariableAggregation.MEAN)
    ```
    Use instead:
    ```python
    moving_mean = self.add_weight("moving_mean", shape, trainable=False,
                                  synchronization=tf.VariableSynchronization.ON_READ,
                                  aggregation=tf.VariableAggregation.MEAN)
    ```

    ## Fix safety
    Unsafe: the variable leaves `trainable_variables`, so optimizers stop updating it.
    """

    code = "TFS102"
    name = "on-read-trainable"
    severity = ERROR
    summary = "an ON_READ variable that is trainable"
    fix_availability = "unsafe"

    VALID = [
        snippet("""
            import tensorflow as tf
            v = tf.Variable(1., synchronization=tf.VariableSynchronization.ON_READ, aggregation=tf.VariableAggregation.SUM)
        """),
        snippet("""
            import keras
            v = keras.Variable(1., trainable=False, synchronization='on_read', aggregation='sum')
        """),
    ]
    INVALID = [
        Invalid(
            snippet("""
                import tf_keras
                import tensorflow as tf
                class L(tf_keras.layers.Layer):
                    def build(self, s):
                        self.m = self.add_weight('m', (), trainable=True, synchronization=tf.VariableSynchronization.ON_READ, aggregation=tf.VariableAggregation.MEAN)
            """),
            (Expect(5, 43, ERROR),),
            unsafe_fixed=snippet("""
                import tf_keras
                import tensorflow as tf
                class L(tf_keras.layers.Layer):
                    def build(self, s):
                        self.m = self.add_weight('m', (), trainable=False, synchronization=tf.VariableSynchronization.ON_READ, aggregation=tf.VariableAggregation.MEAN)
            """),
        ),
        Invalid(
            snippet("""
                import keras
                v = keras.Variable(1., synchronization='on_read', aggregation='sum')
            """),
            (Expect(2, 24, WARNING),),
            unsafe_fixed=snippet("""
                import keras
                v = keras.Variable(1., synchronization='on_read', aggregation='sum', trainable=False)
            """),
        ),
    ]

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for site in ctx.sites:
            arg = site.trainable_arg
            # tf_keras refuses what it is given, before any variable creator runs; the
            # variable itself is what the creators pass on.
            raises = site.api.on_read_trainable_raises and arg is not None and \
                site.sync.written_member == tfapi.SYNC_ON_READ and site.written_trainable is True
            if not raises and (site.sync.member != tfapi.SYNC_ON_READ or
                               site.trainable is not True) or site.sync.arg is None:
                continue
            if arg is not None:
                span = arg.span
                fix = make_fix(UNSAFE, "Set `trainable=False`", ctx.replace(arg.value.span, "False"))
            else:
                span = site.sync.arg.span
                fix = make_fix(UNSAFE, "Add `trainable=False`",
                               ctx.add_argument(site.call, "trainable=False"))
            if raises:
                message = (f"{site.api.title} raises ValueError for ON_READ with trainable=True "
                           f"(\"Synchronization value can be set to VariableSynchronization.ON_READ "
                           f"only for non-trainable variables\")")
                yield ctx.finding(span, message, ERROR, fix)
                continue
            implicit = ""
            if site.written_trainable is not True:
                implicit = " (a variable creator in effect makes it so)"
            elif arg is None:
                implicit = " (Keras 3 keeps trainable=True unless you set it)"
            message = (f"ON_READ variable is trainable{implicit}: under a strategy each replica "
                       f"gets its own gradient for its own copy; ON_READ state should be "
                       f"trainable=False")
            yield ctx.finding(span, message, WARNING, fix)
