# claim: a tf_keras Metric (weights are ON_READ + SUM by default) whose `update_state` is called directly,
# outside `strategy.run`, raises.
# syncadvisor-expect: TFS105 error 28
# tensorflow-raises: ValueError: SyncOnReadVariable does not support `assign_add` in cross-replica context
# without-strategy: clean
import tensorflow as tf
import tf_keras


class ExamplesSeen(tf_keras.metrics.Metric):
    def __init__(self, name="examples_seen", **kwargs):
        super().__init__(name=name, **kwargs)
        self.count = self.add_weight(name="count", initializer="zeros")

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

print("examples seen:", examples_seen.result().numpy())
