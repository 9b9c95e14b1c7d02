# claim: building the model inside the scope runs (compile and fit).
# result-assert: RESULT == "MirroredVariable"
import numpy as np
import tensorflow as tf
import tf_keras

features = np.random.rand(64, 4).astype("float32")
labels = np.random.rand(64, 1).astype("float32")

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

with strategy.scope():
    model = tf_keras.Sequential([tf_keras.Input((4,)), tf_keras.layers.Dense(8, activation="relu"), tf_keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
model.fit(features, labels, batch_size=16, epochs=1, verbose=0)
RESULT = type(model.layers[0].kernel).__name__
