# claim: a Keras 3 model built outside the scope compiles inside it, then `fit` fails with a bare
# AssertionError (MirroredExtended._update) when the optimizer has no slot variables (plain SGD).
# syncadvisor-expect: TFS108 error 14
# tensorflow-raises: AssertionError
import keras
import numpy as np
import tensorflow as tf

features = np.random.rand(64, 4).astype("float32")
labels = np.random.rand(64, 1).astype("float32")

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(1)])
with strategy.scope():
    model.compile(optimizer="sgd", loss="mse")
    model.fit(features, labels, batch_size=16, epochs=1, verbose=0)
