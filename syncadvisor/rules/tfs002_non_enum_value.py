from __future__ import annotations

from typing import Iterator

from ..findings import Finding
from ..model import tfapi
from ..model.variables import INTEGER, NONE_VALUE, STRING, WRONG_ENUM
from .base import (ERROR, SAFE, WARNING, Expect, Invalid, Rule, RuleContext, enum_title, make_fix,
                   snippet, written)


class NonEnumValue(Rule):
    """
    ## What it does
    Flags a string, an int or `None` given as `synchronization` or `aggregation` to a
    TensorFlow API (`tf.Variable`, `tf.compat.v1.Variable`, `get_variable`) or to Keras 2
    (`tf_keras`) `add_weight`, which all expect `tf.VariableSynchronization` /
    `tf.VariableAggregation` members.

    ## Why is this bad?
    A string fails everywhere: `ValueError: Invalid variable synchronization mode:
    ON_READ for variable: v`. An int and `synchronization=None` are converted when no
    strategy is active, so the code works on one device and then raises the same
    ValueError once it runs under MirroredStrategy, MultiWorkerMirroredStrategy or
    TPUStrategy. (`tf.compat.v1.get_variable` converts them first and is not flagged
    for ints.) With tf_keras, `synchronization=3` also skips the check that ON_READ
    weights are not trainable.

    ## Example
    ```python
    with strategy.scope():
        total = tf.Variable(0.0, synchronization=3, aggregation="SUM")
    ```
    Use instead:
    ```python
    with strategy.scope():
        total = tf.Variable(0.0, synchronization=tf.VariableSynchronization.ON_READ,
                            aggregation=tf.VariableAggregation.SUM)
    ```

    ## Fix safety
    Safe: the literal becomes the enum member TensorFlow would have converted it to,
    and `synchronization=None` (which means AUTO) is dropped. Wherever the old code
    worked, the new code does the same. Where the member would bring another finding
    (a lone `'ON_READ'` becomes TFS103, on-read-without-aggregation), `--fix` leaves the
    literal and says so; `--unsafe-fixes` applies both fixes.
    """

    code = "TFS002"
    name = "non-enum-value"
    severity = ERROR
    summary = "a string, int or None given as synchronization/aggregation to a TF or Keras 2 API"
    fix_availability = "sometimes"

    VALID = [
        snippet("""
            import tensorflow as tf
            v = tf.Variable(1., aggregation=tf.VariableAggregation.SUM)
        """),
        snippet("""
            import tensorflow as tf
            v = tf.Variable(1., aggregation=None)
        """),
        snippet("""
            import tensorflow as tf
            v = tf.compat.v1.get_variable('v', [], synchronization=3, aggregation=1)
        """),
        snippet("""
            import keras
            v = keras.Variable(1., aggregation='sum')
        """),
    ]
    INVALID = [
        Invalid(
            snippet("""
                import tensorflow as tf
                v = tf.Variable(1., trainable=False, synchronization='ON_READ', aggregation=tf.VariableAggregation.SUM)
            """),
            (Expect(2, 54, ERROR),),
            fixed=snippet("""
                import tensorflow as tf
                v = tf.Variable(1., trainable=False, synchronization=tf.VariableSynchronization.ON_READ, aggregation=tf.VariableAggregation.SUM)
            """),
        ),
        Invalid(  # the member would bring TFS103 (no aggregation): only --unsafe-fixes adds one
            snippet("""
                import tensorflow as tf
                v = tf.Variable(1., synchronization='ON_READ')
            """),
            (Expect(2, 37, ERROR),),
            fixed=snippet("""
                import tensorflow as tf
                v = tf.Variable(1., synchronization='ON_READ')
            """),
            unsafe_fixed=snippet("""
                import tensorflow as tf
                v = tf.Variable(1., synchronization=tf.VariableSynchronization.ON_READ, aggregation=tf.VariableAggregation.SUM)
            """),
        ),
        Invalid(
            snippet("""
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    v = tf.Variable(1., synchronization=3, aggregation=1)
            """),
            (Expect(4, 41, ERROR), Expect(4, 56, ERROR)),
            fixed=snippet("""
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    v = tf.Variable(1., synchronization=tf.VariableSynchronization.ON_READ, aggregation=tf.VariableAggregation.SUM)
            """),
        ),
        Invalid(
            snippet("""
                import tensorflow as tf
                def make():
                    return tf.Variable(1., synchronization=None)
            """),
            (Expect(3, 44, WARNING),),
            fixed=snippet("""
                import tensorflow as tf
                def make():
                    return tf.Variable(1.)
            """),
        ),
    ]

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for site, name, setting in ctx.written_settings(tfapi.ENUM_VALUES):
            finding = self._check_setting(ctx, site, name, setting)
            if finding is not None:
                yield finding

    def _check_setting(self, ctx: RuleContext, site, name: str, setting):
        enum = enum_title(name)
        text = written(name, setting)
        value_span = setting.arg.value.span
        if setting.form == WRONG_ENUM:
            return ctx.finding(value_span, f"`{text}` is not a `{enum}` member: {site.api.title} "
                                           f"raises ValueError (\"Invalid variable {name} mode\")")
        if setting.form == STRING:
            message = (f"`{text}` is a string, not a `{enum}` member: {site.api.title} raises "
                       f"ValueError (\"Invalid variable {name} mode\") whatever the strategy")
            return ctx.finding(value_span, message, fix=self._member_fix(ctx, name, setting))
        if setting.form == INTEGER and setting.member is None:
            return ctx.finding(value_span, f"`{text}` is not a valid `{enum}` value: "
                                           f"ValueError (\"Invalid variable {name} mode\")")
        converts = site.api.converts_values
        if setting.form == INTEGER and not converts:
            verdict = ctx.judge(site, tfapi.MIRRORING_STRATEGIES)
            where = verdict.where if verdict else ("under MirroredStrategy, MultiWorkerMirroredStrategy "
                                                   "or TPUStrategy (it only works without them)")
            note = ""
            if site.api.on_read_trainable_raises and setting.member == tfapi.SYNC_ON_READ:
                note = "; tf_keras also skips its ON_READ/trainable check for ints"
            message = (f"`{text}` is an int, not a `{enum}` member: it raises ValueError "
                       f"(\"Invalid variable {name} mode: {setting.arg.value.text}\") {where}{note}")
            return ctx.finding(value_span, message, verdict.severity if verdict else WARNING,
                               self._member_fix(ctx, name, setting))
        if setting.form == NONE_VALUE and name == tfapi.SYNC and not converts:
            verdict = ctx.judge(site, tfapi.MIRRORING_STRATEGIES)
            where = verdict.where if verdict else ("under MirroredStrategy, MultiWorkerMirroredStrategy "
                                                   "or TPUStrategy")
            spelling, imports = ctx.enum_spelling(name, tfapi.SYNC_AUTO)
            edits = ctx.drop_setting(site, setting, spelling)
            fix = make_fix(SAFE, "Remove `synchronization=None` (it means AUTO)", *edits,
                           *(imports if setting.positional else ()))
            message = (f"`synchronization=None` means AUTO without a strategy but raises "
                       f"ValueError (\"Invalid variable synchronization mode: None\") {where}")
            return ctx.finding(value_span, message, verdict.severity if verdict else WARNING, fix)
        return None

    @staticmethod
    def _member_fix(ctx: RuleContext, name: str, setting):
        if setting.intended is None:
            return None
        spelling, imports = ctx.enum_spelling(name, setting.intended)
        return make_fix(SAFE, f"Replace with `{spelling}`",
                        ctx.replace(setting.arg.value.span, spelling), *imports)
