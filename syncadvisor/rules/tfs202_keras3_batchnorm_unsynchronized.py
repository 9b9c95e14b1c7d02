from __future__ import annotations

from typing import Iterator

from ..findings import Finding
from ..model import tfapi
from ..model.facts import BOOL
from .base import UNSAFE, WARNING, Expect, Invalid, Rule, RuleContext, judge, make_fix, snippet

_MULTI_REPLICA = tuple(k for k, t in tfapi.STRATEGY_TRAITS.items() if t.mirrors)


class Keras3BatchNormUnsynchronized(Rule):
    """
    ## What it does
    Flags a Keras 3 `BatchNormalization()` layer (`keras.layers`, or `tf.keras.layers` from
    TensorFlow 2.16) built under MirroredStrategy, MultiWorkerMirroredStrategy or
    TPUStrategy without `synchronized=True`.

    ## Why is this bad?
    Keras 3 keeps the moving mean and variance as ordinary mirrored variables with
    aggregation NONE and updates them in replica context: each replica's copy follows only
    its own batches, and what is read or saved is replica 0's. (tf_keras made them ON_READ
    + MEAN, so the saved value was the mean.) `synchronized=True` all-reduces the batch
    statistics, so every replica normalizes with, and saves, the same numbers.

    ## Example
    ```python
    with strategy.scope():
        model = keras.Sequential([keras.layers.Dense(64), keras.layers.BatchNormalization()])
    ```
    Use instead:
    ```python
    with strategy.scope():
        model = keras.Sequential([keras.layers.Dense(64),
                                  keras.layers.BatchNormalization(synchronized=True)])
    ```

    ## Fix safety
    Unsafe: synchronized batch statistics cost an all-reduce per step and change the
    numbers each replica normalizes with.
    """

    code = "TFS202"
    name = "keras3-batchnorm-unsynchronized"
    severity = WARNING
    summary = "Keras 3 BatchNormalization under a multi-replica strategy without synchronized=True"
    fix_availability = "unsafe"

    VALID = [
        snippet("""
            import keras
            import tensorflow as tf
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                bn = keras.layers.BatchNormalization(synchronized=True)
        """),
        snippet("""
            import keras
            bn = keras.layers.BatchNormalization()
        """),
        snippet("""
            import tf_keras
            import tensorflow as tf
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                bn = tf_keras.layers.BatchNormalization()
        """),
    ]
    INVALID = [
        Invalid(
            snippet("""
                import keras
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    bn = keras.layers.BatchNormalization(momentum=0.9)
            """),
            (Expect(5, 10, WARNING),),
            unsafe_fixed=snippet("""
                import keras
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    bn = keras.layers.BatchNormalization(momentum=0.9, synchronized=True)
            """),
        ),
    ]

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for layer in ctx.model.layer_calls:
            if not (layer.callee or "").startswith(tfapi.KERAS3_PREFIX):
                continue
            synchronized = next((a for a in layer.args if a.keyword == "synchronized"), None)
            if synchronized is not None and not (synchronized.value.kind == BOOL
                                                 and synchronized.value.literal is False):
                continue
            contexts = ctx.contexts_at(ctx.path, layer.function, layer.scopes)
            verdict = judge(list(contexts), _MULTI_REPLICA, ctx.path, "none", ctx.note)
            if verdict is None:
                continue
            if synchronized is not None:
                edit = ctx.replace(synchronized.value.span, "True")
            else:
                edit = ctx.add_argument(layer, "synchronized=True")
            assumed = ctx.keras_assumption(tfapi.KERAS3)
            condition = f" ({assumed})" if assumed else ""
            yield ctx.finding(
                layer.span,
                f"Keras 3 BatchNormalization {verdict.where.replace('under', 'is built under', 1)} "
                f"without `synchronized=True`: each replica's moving statistics follow only its "
                f"own batches, and replica 0's are the ones read and saved{condition}",
                WARNING, make_fix(UNSAFE, "Add `synchronized=True`", edit))

