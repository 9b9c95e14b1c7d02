from __future__ import annotations

from typing import Iterator

from ..findings import Finding
from ..model import tfapi
from .base import ERROR, UNSAFE, WARNING, Expect, Invalid, Rule, RuleContext, make_fix, snippet


class Keras3AddWeightSynchronization(Rule):
    """
    ## What it does
    Flags `synchronization=` passed to Keras 3 `Layer.add_weight` (and the other Keras 3
    methods that create variables without that parameter: `Metric.add_variable`,
    `Metric.add_weight`, `Optimizer.add_variable`). From TensorFlow 2.16 `tf.keras` is
    Keras 3, so Keras 2 code that passed it breaks on upgrade. Where the project's
    declarations leave open which Keras runs (an unpinned `tensorflow`, or none declared),
    the finding is a warning that says what it assumes; a call whose other arguments only
    tf_keras takes (`experimental_autocast=`, a name before the shape) is written for
    Keras 2 and is not flagged.

    ## Why is this bad?
    The parameter does not exist: `TypeError: Layer.add_weight() got an unexpected
    keyword argument 'synchronization'` when the layer is built.

    ## Example
    ```python
    class Counter(keras.layers.Layer):
        def build(self, input_shape):
            self.count = self.add_weight(shape=(), initializer="zeros", trainable=False,
                                         synchronization=tf.VariableSynchronization.ON_READ)
    ```
    Use instead (replica-local state in Keras 3):
    ```python
    class Counter(keras.layers.Layer):
        def build(self, input_shape):
            self.count = keras.Variable(0.0, trainable=False, synchronization="on_read",
                                        aggregation="sum")
    ```

    ## Fix safety
    Unsafe: dropping the argument makes the variable ON_WRITE; where ON_READ was meant,
    the message says how Keras 3 does it instead.
    """

    code = "TFS004"
    name = "keras3-add-weight-synchronization"
    severity = ERROR
    summary = "synchronization= given to Keras 3 Layer.add_weight, which has no such parameter"
    fix_availability = "unsafe"

    VALID = [
        snippet("""
            import keras
            class L(keras.layers.Layer):
                def build(self, s):
                    self.w = self.add_weight(shape=(), aggregation='sum')
        """),
        snippet("""
            import tf_keras
            import tensorflow as tf
            class L(tf_keras.layers.Layer):
                def build(self, s):
                    self.w = self.add_weight('w', (), trainable=False, synchronization=tf.VariableSynchronization.ON_READ, aggregation=tf.VariableAggregation.SUM)
        """),
    ]
    INVALID = [
        Invalid(
            snippet("""
                import tensorflow as tf
                class L(tf.keras.layers.Layer):
                    def build(self, s):
                        self.w = self.add_weight(shape=(), synchronization=tf.VariableSynchronization.ON_READ)
            """),
            (Expect(4, 44, ERROR),),
            unsafe_fixed=snippet("""
                import tensorflow as tf
                class L(tf.keras.layers.Layer):
                    def build(self, s):
                        self.w = self.add_weight(shape=())
            """),
        ),
    ]

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for site in ctx.sites:
            arg = site.unexpected.get(tfapi.SYNC)
            if site.family != tfapi.KERAS3 or arg is None:
                continue
            other, assumed = ctx.site_keras(site)
            if other:
                continue  # written for Keras 2 (its other arguments say so): right there
            hint = ""
            text = arg.value.text.lower()
            if "on_read" in text or text.endswith("3"):
                hint = ('; for replica-local state create `keras.Variable(..., trainable=False, '
                        'synchronization="on_read", aggregation=...)` or use a keras.metrics.Metric')
            fix = make_fix(UNSAFE, "Remove the `synchronization` argument",
                           ctx.remove_argument(site.call, arg))
            method = site.api.title.split(" ")[0]
            condition = f" {assumed}" if assumed else ""
            yield ctx.finding(
                arg.span,
                f"Keras 3 {method}() has no `synchronization` parameter: TypeError (\"got an "
                f"unexpected keyword argument 'synchronization'\"){condition}{hint}",
                WARNING if assumed else ERROR, fix)
