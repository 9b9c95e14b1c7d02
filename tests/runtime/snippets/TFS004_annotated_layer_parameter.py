# claim: a helper whose parameter is annotated as a Keras 3 layer, reached only through a
# registry the checker does not follow (as a library's entry point is called by its users),
# raises the TypeError of Keras 3 `Layer.add_weight(synchronization=...)` on the layer it is given.
# syncadvisor-expect: TFS004 error 13
# tensorflow-raises: TypeError: Layer.add_weight() got an unexpected keyword argument 'synchronization'
# without-strategy: raises TypeError: Layer.add_weight() got an unexpected keyword argument 'synchronization'
import keras
import tensorflow as tf


def add_replica_state(layer: keras.layers.Layer):
    return layer.add_weight(shape=(), initializer="zeros", trainable=False,
                            synchronization="on_read", aggregation="sum", name="seen")


HELPERS = {"replica_state": add_replica_state}

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    dense = keras.layers.Dense(2)
    seen = HELPERS["replica_state"](dense)  # (before `build`: a built layer takes no new state)
    dense.build((None, 4))
