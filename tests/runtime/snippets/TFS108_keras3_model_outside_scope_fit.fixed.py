# claim: building the model inside the scope runs (compile and fit).
# result-assert: RESULT == "MirroredVariable"
import keras
import numpy as np
import tensorflow as tf

features = np.random.rand(64, 4).astype("float32")
labels = np.random.rand(64, 1).astype("float32")

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

with strategy.scope():
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(features, labels, batch_size=16, epochs=1, verbose=0)
RESULT = type(model.layers[0].kernel.value).__name__
