# claim: the same metric made inside the scope is compiled and updated.
# result-assert: RESULT > 0
import numpy as np
import tensorflow as tf
import tf_keras

features = np.random.rand(64, 4).astype("float32")
labels = np.random.rand(64, 1).astype("float32")

# Reductions without collective ops: a snippet that fails inside `fit` can leave a
# collective pending in the process, and later snippets' collectives would meet it.
strategy = tf.distribute.MirroredStrategy(
    ["/cpu:0", "/cpu:1"], cross_device_ops=tf.distribute.ReductionToOneDevice())

with strategy.scope():
    error = tf_keras.metrics.MeanAbsoluteError()
    model = tf_keras.Sequential([tf_keras.Input((4,)), tf_keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse", metrics=[error])
model.fit(features, labels, batch_size=16, epochs=1, verbose=0)
RESULT = float(error.count.numpy())
