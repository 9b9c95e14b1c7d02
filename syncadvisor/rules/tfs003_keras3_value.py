from __future__ import annotations

from typing import Iterator, Optional

from ..findings import Finding
from ..model import tfapi
from ..model.variables import INTEGER, NONE_VALUE, STRING, TF_ENUM_IN_KERAS3
from .base import (ERROR, SAFE, UNSAFE, WARNING, Expect, Invalid, Rule, RuleContext, make_fix, snippet,
                   written)


def keras3_string(name: str, member: str) -> str:
    table = tfapi.KERAS3_STRING[name]
    return next(text for text, m in table.items() if m == member)


class Keras3Value(Rule):
    """
    ## What it does
    Flags a Keras 3 API (`keras.Variable`, `Layer.add_weight`, `Metric.add_variable`,
    `Optimizer.add_variable`; `tf.keras` from TensorFlow 2.16) given a TensorFlow enum
    member, an upper-case or unknown string as `synchronization` or `aggregation`, and
    `keras.Variable(synchronization=None)`. Where the project's declarations leave open
    which Keras runs (an unpinned `tensorflow`, or none declared) and the API exists in
    both (`add_weight`, not `keras.Variable`), the finding is a warning that says what it
    assumes, and a call whose other arguments only tf_keras takes
    (`experimental_autocast=`, a name before the shape) is not flagged.

    ## Why is this bad?
    Keras 3 takes lowercase strings only: `"auto"`, `"none"`, `"on_write"`, `"on_read"`
    and `"none"`, `"sum"`, `"mean"`, `"only_first_replica"`. Anything else raises
    ``ValueError: Invalid value for argument `synchronization`. Expected one of `None`,
    `'none'`, `'on_read'`, `'on_write'`, `'auto'` ``. And `None` means `"none"` there, not
    AUTO as in `tf.Variable`: under MirroredStrategy it raises ``ValueError: `NONE`
    variable synchronization mode is not supported with tf.distribute strategy``.

    ## Example
    ```python
    v = keras.Variable(0.0, synchronization=tf.VariableSynchronization.ON_READ,
                       aggregation="SUM")
    ```
    Use instead:
    ```python
    v = keras.Variable(0.0, synchronization="on_read", aggregation="sum")
    ```

    ## Fix safety
    Safe: the value becomes the lowercase string Keras 3 documents for the same member
    (unsafe where which Keras runs is a guess: Keras 2 refuses the string);
    `synchronization=None` is dropped, which behaves the same wherever the old code ran.
    Where the string would bring another finding (`aggregation="MEAN"` on an int64
    weight becomes TFS104, mean-on-integer), `--fix` leaves the value and says so;
    `--unsafe-fixes` applies both fixes.
    """

    code = "TFS003"
    name = "keras3-value"
    severity = ERROR
    summary = "a Keras 3 API given a TF enum, an upper-case/unknown string, or synchronization=None"
    fix_availability = "sometimes"

    VALID = [
        snippet("""
            import keras
            v = keras.Variable(1., synchronization='on_read', aggregation='sum')
        """),
        snippet("""
            import keras
            v = keras.Variable(1., aggregation=None)
        """),
        snippet("""
            import keras
            class L(keras.layers.Layer):
                def build(self, s):
                    self.w = self.add_weight(shape=(), aggregation='mean')
        """),
    ]
    INVALID = [
        Invalid(
            snippet("""
                import keras
                v = keras.Variable(1., trainable=False, synchronization='ON_READ', aggregation='sum')
            """),
            (Expect(2, 57, ERROR),),
            fixed=snippet("""
                import keras
                v = keras.Variable(1., trainable=False, synchronization="on_read", aggregation='sum')
            """),
        ),
        Invalid(  # "on_read" would bring TFS102 and TFS103: only --unsafe-fixes completes it
            snippet("""
                import keras
                v = keras.Variable(1., synchronization='ON_READ')
            """),
            (Expect(2, 40, ERROR),),
            fixed=snippet("""
                import keras
                v = keras.Variable(1., synchronization='ON_READ')
            """),
            unsafe_fixed=snippet("""
                import keras
                v = keras.Variable(1., synchronization="on_read", trainable=False, aggregation="sum")
            """),
        ),
        Invalid(  # "mean" would bring TFS104 (MEAN on an integer)
            snippet("""
                import keras
                class Counter(keras.layers.Layer):
                    def build(self, input_shape):
                        self.count = self.add_weight(shape=(), dtype="int64", aggregation="MEAN")
            """),
            (Expect(4, 75, ERROR),),
            fixed=snippet("""
                import keras
                class Counter(keras.layers.Layer):
                    def build(self, input_shape):
                        self.count = self.add_weight(shape=(), dtype="int64", aggregation="MEAN")
            """),
            unsafe_fixed=snippet("""
                import keras
                class Counter(keras.layers.Layer):
                    def build(self, input_shape):
                        self.count = self.add_weight(shape=(), dtype="int64", aggregation="only_first_replica")
            """),
        ),
        Invalid(
            snippet("""
                import keras
                import tensorflow as tf
                class L(keras.layers.Layer):
                    def build(self, s):
                        self.w = self.add_weight(shape=(), aggregation=tf.VariableAggregation.SUM)
            """),
            (Expect(5, 56, ERROR),),
            fixed=snippet("""
                import keras
                import tensorflow as tf
                class L(keras.layers.Layer):
                    def build(self, s):
                        self.w = self.add_weight(shape=(), aggregation="sum")
            """),
        ),
        Invalid(
            snippet("""
                import keras
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    v = keras.Variable(1., synchronization=None)
            """),
            (Expect(5, 44, ERROR),),
            fixed=snippet("""
                import keras
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    v = keras.Variable(1.)
            """),
        ),
        Invalid(  # tf.keras is Keras 3 from TensorFlow 2.16 on
            snippet("""
                import tensorflow as tf
                v = tf.keras.Variable(1., aggregation=tf.VariableAggregation.MEAN)
            """),
            (Expect(2, 39),),
        ),
    ]

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for site, name, setting in ctx.written_settings(tfapi.STRING_VALUES):
            other, assumed = ctx.site_keras(site)
            if other:
                continue  # written for Keras 2 (its other arguments say so): right there
            finding = self._check_setting(ctx, site, name, setting, assumed)
            if finding is not None:
                yield finding

    def _check_setting(self, ctx: RuleContext, site, name: str, setting,
                       assumed: Optional[str] = None):
        """The finding for one setting; `assumed`: where the project leaves the Keras
        major open, the assumption the claim makes (a warning then, and a fix that would
        break Keras 2 is unsafe)."""
        text = written(name, setting)
        span = setting.arg.value.span
        expected = ", ".join(f'"{s}"' for s in tfapi.KERAS3_STRING[name])
        if setting.form in (TF_ENUM_IN_KERAS3, STRING, INTEGER):
            if setting.form == TF_ENUM_IN_KERAS3 and setting.intended is None:
                return None  # a member that does not exist: TFS001 says so
            what = {TF_ENUM_IN_KERAS3: "a TensorFlow enum member",
                    STRING: "not one of its strings", INTEGER: "an int"}[setting.form]
            fix = None
            if setting.intended is not None:
                new = f'"{keras3_string(name, setting.intended)}"'
                fix = make_fix(UNSAFE if assumed else SAFE, f"Replace with `{new}`",
                               ctx.replace(span, new))
            condition = f" {assumed}" if assumed else ""
            message = (f"`{text}` is {what}: {site.api.title} takes {expected} and raises "
                       f"ValueError (\"Invalid value for argument `{name}`\"){condition}")
            return ctx.finding(span, message, WARNING if assumed else ERROR, fix)
        if setting.form == NONE_VALUE and name == tfapi.SYNC:
            verdict = ctx.judge(site, tfapi.MIRRORING_STRATEGIES)
            where = verdict.where if verdict else ("under MirroredStrategy, "
                                                   "MultiWorkerMirroredStrategy or TPUStrategy")
            fix = make_fix(SAFE, "Remove `synchronization=None` (the default is \"auto\")",
                           *ctx.drop_setting(site, setting, '"auto"'))
            message = (f"`synchronization=None` means \"none\" in Keras 3 (not AUTO as in "
                       f"tf.Variable): it raises ValueError (\"`NONE` variable synchronization "
                       f"mode is not supported with tf.distribute strategy\") {where}")
            return ctx.finding(span, message, verdict.severity if verdict else WARNING, fix)
        return None
