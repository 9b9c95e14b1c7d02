# claim: the same optimizer made inside the scope trains.
# result-assert: RESULT == 8
import numpy as np
import tensorflow as tf

features = np.random.rand(64, 4).astype("float32")
labels = np.random.rand(64, 1).astype("float32")

# Reductions without collective ops: a snippet that fails inside `fit` can leave a
# collective pending in the process, and later snippets' collectives would meet it.
strategy = tf.distribute.MirroredStrategy(
    ["/cpu:0", "/cpu:1"], cross_device_ops=tf.distribute.ReductionToOneDevice())

with strategy.scope():
    optimizer = tf.keras.optimizers.Adam()
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])
    model.compile(optimizer=optimizer, loss="mse")
model.fit(features, labels, batch_size=16, epochs=2, verbose=0)
RESULT = int(optimizer.iterations.numpy())
