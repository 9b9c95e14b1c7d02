# claim: the Keras 3 way to get an ON_READ weight, `keras.Variable(..., synchronization="on_read")`,
# runs and sums the examples of both replicas when read.
# result-assert: RESULT == {"type": "SyncOnReadVariable", "examples_seen": 8.0}
import keras
import tensorflow as tf


class ExampleCounter(keras.layers.Layer):
    def build(self, input_shape):
        self.examples_seen = keras.Variable(
            0.0,
            trainable=False,
            synchronization="on_read",
            aggregation="sum",
            name="examples_seen",
        )

    def call(self, inputs):
        self.examples_seen.assign_add(tf.cast(tf.shape(inputs)[0], "float32"))
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
RESULT = {"type": type(counter.examples_seen.value).__name__, "examples_seen": counter.examples_seen.numpy()}
