# claim: the lowercase string "sum" runs.
# result-assert: RESULT == "SUM"
import keras
import tensorflow as tf


class RunningTotal(keras.layers.Layer):
    def build(self, input_shape):
        self.total = self.add_weight(
            shape=(),
            initializer="zeros",
            trainable=False,
            name="total",
            aggregation="sum",
        )

    def call(self, inputs):
        self.total.assign_add(tf.reduce_sum(inputs))
        return inputs


strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    layer = RunningTotal()
    layer.build((None, 3))

RESULT = layer.total.value.aggregation.name
