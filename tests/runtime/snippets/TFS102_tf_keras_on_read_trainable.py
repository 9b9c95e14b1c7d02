# claim: tf_keras `add_weight(synchronization=ON_READ, trainable=True)` raises, with any strategy or none.
# syncadvisor-expect: TFS102 error 15
# tensorflow-raises: ValueError: Synchronization value can be set to VariableSynchronization.ON_READ only for non-trainable variables
# without-strategy: raises ValueError: Synchronization value can be set to VariableSynchronization.ON_READ only for non-trainable variables
import tensorflow as tf
import tf_keras


class GradientAccumulator(tf_keras.layers.Layer):
    def build(self, input_shape):
        self.accumulated = self.add_weight(
            name="accumulated",
            shape=input_shape[1:],
            initializer="zeros",
            trainable=True,
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
