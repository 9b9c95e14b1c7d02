# claim: Keras 2 (tf_keras) `Layer.add_weight` passes string synchronization/aggregation to tf.Variable: ValueError everywhere.
# syncadvisor-expect: TFS002 error 18
# syncadvisor-expect: TFS002 error 19
# tensorflow-raises: ValueError: Invalid variable synchronization mode: on_read for variable: examples_seen
# (without a strategy TF validates `aggregation` first, so the message names the aggregation string)
# without-strategy: raises ValueError: Invalid variable aggregation mode: sum for variable: examples_seen
import tensorflow as tf
import tf_keras


class ExampleCounter(tf_keras.layers.Layer):
    def build(self, input_shape):
        self.examples_seen = self.add_weight(
            name="examples_seen",
            shape=(),
            initializer="zeros",
            trainable=False,
            synchronization="on_read",
            aggregation="sum",
        )

    def call(self, inputs):
        self.examples_seen.assign_add(tf.cast(tf.shape(inputs)[0], tf.float32))
        return inputs


strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    counter = ExampleCounter()
    counter.build((None, 4))
