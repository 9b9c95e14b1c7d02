# claim: the Keras 3 form of the helper: a `keras.Variable` ON_READ + SUM, made in the scope,
# runs.
import keras
import tensorflow as tf


def add_replica_state(layer: keras.layers.Layer):
    return keras.Variable(0.0, trainable=False, synchronization="on_read", aggregation="sum",
                          name="seen")


HELPERS = {"replica_state": add_replica_state}

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    dense = keras.layers.Dense(2)
    seen = HELPERS["replica_state"](dense)  # (before `build`: a built layer takes no new state)
    dense.build((None, 4))
