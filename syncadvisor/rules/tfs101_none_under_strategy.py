from __future__ import annotations

from typing import Iterator

from ..findings import Finding
from ..model import tfapi
from ..model.variables import ENUM, KERAS_STRING
from .base import ERROR, UNSAFE, WARNING, Expect, Invalid, Rule, RuleContext, make_fix, written


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
    which strategies it fails.

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
        "import tensorflow as tf\nv = tf.Variable(1., synchronization=tf.VariableSynchronization.NONE)\n",
        "import tensorflow as tf\nstrategy = tf.distribute.OneDeviceStrategy('/cpu:0')\n"
        "with strategy.scope():\n"
        "    v = tf.Variable(1., synchronization=tf.VariableSynchronization.NONE)\n",
    ]
    INVALID = [
        Invalid(
            "import tensorflow as tf\nstrategy = tf.distribute.MirroredStrategy()\n"
            "with strategy.scope():\n"
            "    v = tf.Variable(1., synchronization=tf.VariableSynchronization.NONE)\n",
            (Expect(4, 25, ERROR),),
            unsafe_fixed="import tensorflow as tf\nstrategy = tf.distribute.MirroredStrategy()\n"
            "with strategy.scope():\n    v = tf.Variable(1.)\n",
        ),
        Invalid(
            "from tensorflow import Variable as V, VariableSynchronization as VS\n"
            "def make():\n    return V(0., synchronization=VS.NONE)\n",
            (Expect(3, 18, WARNING),),
        ),
        Invalid(
            "import keras\nimport tensorflow as tf\n"
            "strategy = tf.distribute.experimental.MultiWorkerMirroredStrategy()\n"
            "with strategy.scope():\n    v = keras.Variable(1., synchronization='none')\n",
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
