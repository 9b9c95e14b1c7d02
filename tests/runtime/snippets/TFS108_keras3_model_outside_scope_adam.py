# claim: the same Keras 3 mistake with an optimizer that has slot variables (Adam) fails in `fit`
# with a ValueError about `colocate_vars_with` instead of the bare AssertionError.
# syncadvisor-expect: TFS108 error 14
# tensorflow-raises: ValueError: `colocate_vars_with` must only be passed a variable created in this tf.distribute.Strategy.scope()
import keras
import numpy as np
import tensorflow as tf

features = np.random.rand(64, 4).astype("float32")
labels = np.random.rand(64, 1).astype("float32")

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(1)])
with strategy.scope():
    model.compile(optimizer="adam", loss="mse")
    model.fit(features, labels, batch_size=16, epochs=1, verbose=0)
