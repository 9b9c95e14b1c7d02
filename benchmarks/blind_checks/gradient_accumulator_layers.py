"""gradient-accumulator 0.5.2, AccumBatchNormalization (TFS003/TFS004 at layers.py:79-113).

Run twice: `python gradient_accumulator_layers.py` (TF 2.21's tf.keras = Keras 3) and
`TF_USE_LEGACY_KERAS=1 python gradient_accumulator_layers.py` (tf.keras = tf_keras 2.21, the
Keras 2 API of the TF 2.13.1 that pip resolves for this package).
"""

import os

from common import load_file, project, trial, two_cpus

root = project("gradient-accumulator-0.5.2")
strategy = two_cpus()
import tensorflow as tf  # noqa: E402

print("tf.keras is", tf.keras.__name__, getattr(tf.keras, "__version__", ""),
      "TF_USE_LEGACY_KERAS =", os.environ.get("TF_USE_LEGACY_KERAS"))
layers = load_file(root / "gradient_accumulator" / "layers.py", "ga_layers")


def build():
    with strategy.scope():
        layer = layers.AccumBatchNormalization(accum_steps=2)
        layer.build((None, 3))
    return [(v.name, type(v).__name__, str(v.synchronization), str(v.aggregation))
            for v in layer.weights if "moving" in v.name or "accum" in v.name]


trial("build AccumBatchNormalization under MirroredStrategy", build)
