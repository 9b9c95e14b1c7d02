# claim: enum members run, and the ON_READ/SUM counter sums the examples of both replicas.
# result-assert: RESULT == 8.0
import tensorflow as tf
import tf_keras


class ExampleCounter(tf_keras.layers.Layer):
    def build(self, input_shape):
        self.examples_seen = self.add_weight(
            name="examples_seen",
            shape=(),
            initializer="zeros",
            trainable=False,
            synchronization=tf.VariableSynchronization.ON_READ,
            aggregation=tf.VariableAggregation.SUM,
        )

    def call(self, inputs):
        self.examples_seen.assign_add(tf.cast(tf.shape(inputs)[0], tf.float32))
        return inputs


strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    counter = ExampleCounter()
    counter.build((None, 4))

dataset = tf.data.Dataset.from_tensor_slices(tf.zeros([8, 4])).batch(8)


@tf.function
def step(batch):
    strategy.run(counter, args=(batch,))


for batch in strategy.experimental_distribute_dataset(dataset):
    step(batch)
RESULT = counter.examples_seen.numpy()
