# claim: tf_keras `add_weight` refuses ON_READ with trainable=True before it creates the variable,
# so a variable creator that would set `trainable=False` comes too late: ValueError all the same.
# syncadvisor-expect: TFS102 error 21
# tensorflow-raises: ValueError: Synchronization value can be set to VariableSynchronization.ON_READ only for non-trainable variables
import tensorflow as tf
import tf_keras


def frozen(next_creator, **kwargs):
    kwargs["trainable"] = False
    return next_creator(**kwargs)


class Stats(tf_keras.layers.Layer):
    def build(self, input_shape):
        with tf.variable_creator_scope(frozen):
            self.mean = self.add_weight(
                name="mean",
                shape=(),
                initializer="zeros",
                trainable=True,
                synchronization=tf.VariableSynchronization.ON_READ,
                aggregation=tf.VariableAggregation.MEAN,
            )


strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    layer = Stats()
    layer.build(())
print(layer.mean.trainable)
