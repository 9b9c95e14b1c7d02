from __future__ import annotations

from typing import Iterator

from ..findings import Finding
from ..model import tfapi
from ..model.variables import ENUM, KERAS_STRING
from .base import INFO, UNSAFE, Expect, Invalid, Rule, RuleContext, make_fix, snippet


class ExplicitOnWrite(Rule):
    """
    ## What it does
    Flags `synchronization=ON_WRITE` written out on a trainable variable.

    ## Why is this bad?
    AUTO resolves to ON_WRITE under every strategy that synchronizes variables
    (Mirrored, MultiWorkerMirrored, TPU), and the other strategies ignore the setting.
    Writing ON_WRITE says nothing AUTO does not, and suggests it was a deliberate,
    measured choice. TensorFlow's guidance is AUTO unless a benchmark says otherwise.
    Users who prefer to spell it out can turn this rule off (`ignore = ["TFS303"]`).

    ## Example
    ```python
    w = tf.Variable(tf.zeros([10]), synchronization=tf.VariableSynchronization.ON_WRITE)
    ```
    Use instead:
    ```python
    w = tf.Variable(tf.zeros([10]))
    ```

    ## Fix safety
    Unsafe: the argument is removed (or, when passed by position, replaced by AUTO). The
    variable syncs the same under every strategy, but what the code can observe changes:
    `v.synchronization` reads AUTO instead of ON_WRITE, and so does every creator
    installed with `tf.variable_creator_scope` (they receive the arguments as written), so
    code or tests that look at them see the difference.
    """

    code = "TFS303"
    name = "explicit-on-write"
    severity = INFO
    summary = "synchronization=ON_WRITE written out on a trainable variable (AUTO says the same)"
    fix_availability = "unsafe"

    VALID = [
        snippet("""
            import tensorflow as tf
            w = tf.Variable(1.)
        """),
        snippet("""
            import tensorflow as tf
            w = tf.Variable(1., trainable=False, synchronization=tf.VariableSynchronization.ON_WRITE)
        """),
    ]
    INVALID = [
        Invalid(
            snippet("""
                import tensorflow as tf
                w = tf.Variable(1., synchronization=tf.VariableSynchronization.ON_WRITE)
            """),
            (Expect(2, 21, INFO),),
            unsafe_fixed=snippet("""
                import tensorflow as tf
                w = tf.Variable(1.)
            """),
        ),
        Invalid(
            snippet("""
                import keras
                w = keras.Variable(1., synchronization='on_write')
            """),
            (Expect(2, 24, INFO),),
            unsafe_fixed=snippet("""
                import keras
                w = keras.Variable(1.)
            """),
        ),
    ]

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for site in ctx.sites:
            sync = site.sync
            if sync.member != tfapi.SYNC_ON_WRITE or sync.form not in (ENUM, KERAS_STRING) \
                    or sync.arg is None:
                continue
            if site.trainable is not True:
                continue
            default = '"auto"' if site.family == tfapi.KERAS3 else \
                ctx.enum_spelling(tfapi.SYNC, tfapi.SYNC_AUTO, sync.arg.value.prefix_text)[0]
            fix = make_fix(UNSAFE, "Remove `synchronization` (AUTO is ON_WRITE where it matters)",
                           *ctx.drop_setting(site, sync, default))
            yield ctx.finding(sync.arg.span, "`synchronization=ON_WRITE` on a trainable variable "
                                             "is what AUTO gives under every strategy that "
                                             "syncs; leave it to AUTO", INFO, fix)
