# claim: `trainable=False` runs.
# result-assert: RESULT == ["SyncOnReadVariable", False]
import tensorflow as tf
import tf_keras


class GradientAccumulator(tf_keras.layers.Layer):
    def build(self, input_shape):
        self.accumulated = self.add_weight(
            name="accumulated",
            shape=input_shape[1:],
            initializer="zeros",
            trainable=False,
            synchronization=tf.VariableSynchronization.ON_READ,
            aggregation=tf.VariableAggregation.MEAN,
        )

    def call(self, inputs):
        self.accumulated.assign_add(tf.reduce_mean(inputs, axis=0))
        return inputs


strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    accumulator = GradientAccumulator()
    accumulator.build((None, 4))

RESULT = [type(accumulator.accumulated).__name__, accumulator.accumulated.trainable]
