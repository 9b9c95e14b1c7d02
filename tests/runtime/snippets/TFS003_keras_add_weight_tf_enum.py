# claim: Keras 3 `Layer.add_weight(aggregation=tf.VariableAggregation.SUM)` raises: Keras 3 wants "sum".
# syncadvisor-expect: TFS003 error 16
# tensorflow-raises: ValueError: Invalid value for argument `aggregation`. Expected one of
# without-strategy: raises ValueError: Received: aggregation=VariableAggregationV2.SUM
import keras
import tensorflow as tf


class RunningTotal(keras.layers.Layer):
    def build(self, input_shape):
        self.total = self.add_weight(
            shape=(),
            initializer="zeros",
            trainable=False,
            name="total",
            aggregation=tf.VariableAggregation.SUM,
        )

    def call(self, inputs):
        self.total.assign_add(tf.reduce_sum(inputs))
        return inputs


strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    layer = RunningTotal()
    layer.build((None, 3))
