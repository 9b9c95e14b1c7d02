# claim: Keras 3 `Layer.add_weight` has no `synchronization` parameter: TypeError, whatever the strategy.
# syncadvisor-expect: TFS004 error 15
# tensorflow-raises: TypeError: Layer.add_weight() got an unexpected keyword argument 'synchronization'
# without-strategy: raises TypeError: Layer.add_weight() got an unexpected keyword argument 'synchronization'
import keras
import tensorflow as tf


class ExampleCounter(keras.layers.Layer):
    def build(self, input_shape):
        self.examples_seen = self.add_weight(
            shape=(),
            initializer="zeros",
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
