# claim: a tf_keras model built outside `strategy.scope()` and compiled inside it raises in `compile`.
# syncadvisor-expect: TFS108 error 13
# tensorflow-raises: ValueError: was not created in the distribution strategy scope of
import numpy as np
import tensorflow as tf
import tf_keras

features = np.random.rand(64, 4).astype("float32")
labels = np.random.rand(64, 1).astype("float32")

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

model = tf_keras.Sequential([tf_keras.Input((4,)), tf_keras.layers.Dense(8, activation="relu"), tf_keras.layers.Dense(1)])
with strategy.scope():
    model.compile(optimizer="adam", loss="mse")
model.fit(features, labels, batch_size=16, epochs=1, verbose=0)
