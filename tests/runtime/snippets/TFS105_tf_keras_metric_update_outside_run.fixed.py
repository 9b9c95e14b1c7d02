# claim: calling `update_state` through `strategy.run` runs and counts every example once.
# result-assert: RESULT == 16.0
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


@tf.function
def eval_step(labels, predictions):
    strategy.run(examples_seen.update_state, args=(labels, predictions))


for labels, predictions in strategy.experimental_distribute_dataset(dataset):
    eval_step(labels, predictions)

print("examples seen:", examples_seen.result().numpy())
RESULT = examples_seen.result().numpy()
