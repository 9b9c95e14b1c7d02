# claim: (negative) Keras 3 does NOT raise here. Its Metric variables are ON_READ + SUM too, but
# `keras.Variable.assign_add` in cross-replica context goes through `assign(value + delta)`, which
# SyncOnReadVariable divides by the replica count: no error and the right total. TFS105 must not fire
# on Keras 3 (`import keras`) metrics.
# syncadvisor-expect-none: TFS105
# result-assert: RESULT == {"type": "SyncOnReadVariable", "examples_seen": 16.0}
import keras
import tensorflow as tf


class ExamplesSeen(keras.metrics.Metric):
    def __init__(self, name="examples_seen", **kwargs):
        super().__init__(name=name, **kwargs)
        self.count = self.add_variable(shape=(), initializer="zeros", name="count")

    def update_state(self, y_true, y_pred, sample_weight=None):
        self.count.assign_add(tf.cast(tf.shape(y_true)[0], self.dtype))

    def result(self):
        return self.count


strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    examples_seen = ExamplesSeen()

dataset = tf.data.Dataset.from_tensor_slices((tf.zeros([16, 1]), tf.zeros([16, 1]))).batch(8)
for labels, predictions in dataset:
    examples_seen.update_state(labels, predictions)

RESULT = {"type": type(examples_seen.count.value).__name__, "examples_seen": examples_seen.result().numpy()}
