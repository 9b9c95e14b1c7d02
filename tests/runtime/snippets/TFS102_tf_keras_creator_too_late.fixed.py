# claim: the fix of TFS102_tf_keras_creator_too_late.py: trainable=False, which tf_keras accepts with ON_READ.
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
                trainable=False,
                synchronization=tf.VariableSynchronization.ON_READ,
                aggregation=tf.VariableAggregation.MEAN,
            )


strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    layer = Stats()
    layer.build(())
print(layer.mean.trainable)
