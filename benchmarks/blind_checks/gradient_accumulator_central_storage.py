"""gradient-accumulator 0.5.2, GradientAccumulateModel (TFS110 at accumulators.py:171, 173).

The claim: under CentralStorageStrategy, the ON_READ + ONLY_FIRST_REPLICA variables'
`.assign(...)` inside `tf.cond` in the traced train_step raises RuntimeError (merge_call).
Run with `TF_USE_LEGACY_KERAS=1 python gradient_accumulator_central_storage.py` (tf.keras =
tf_keras 2.21, the Keras 2 API of the TF 2.13.1 that pip resolves for this package), once
under CentralStorageStrategy over 2 CPUs and once under MirroredStrategy, fit for 4 steps.
"""

import os

from common import project, stub, trial, two_cpus

root = project("gradient-accumulator-0.5.2")
mirrored = two_cpus()
import tensorflow as tf  # noqa: E402

print("tf.keras is", tf.keras.__name__, "TF_USE_LEGACY_KERAS =",
      os.environ.get("TF_USE_LEGACY_KERAS"))
from gradient_accumulator.accumulators import GradientAccumulateModel  # noqa: E402

central = tf.distribute.experimental.CentralStorageStrategy(["/cpu:0", "/cpu:1"])
x = tf.random.stateless_normal((16, 3), seed=(1, 2))
y = tf.random.stateless_normal((16, 1), seed=(3, 4))


def fit(strategy):
    def run():
        with strategy.scope():
            inputs = tf.keras.Input((3,))
            outputs = tf.keras.layers.Dense(1)(inputs)
            model = GradientAccumulateModel(accum_steps=2, inputs=inputs, outputs=outputs)
            model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
        history = model.fit(x, y, batch_size=4, epochs=1, verbose=0)
        return f"trained, loss {history.history['loss'][-1]:.4f}"
    return run


def last_lines(fn):
    """The error's own last lines (a traced error's text begins with the user-code trace)."""
    def run():
        try:
            return fn()
        except Exception as e:  # noqa: BLE001 - the point is to print what TF raises
            lines = [line.strip() for line in str(e).splitlines() if line.strip()]
            where = [line for line in lines if "accumulators.py" in line]
            raise type(e)(f"{lines[-1]} (last of the package's frames: {where[-1:]})") from None
    return run


trial("fit under CentralStorageStrategy", last_lines(fit(central)))
trial("fit under MirroredStrategy", last_lines(fit(mirrored)))
