# claim: a tf_keras metric made outside the scope is refused by `compile` inside it.
# syncadvisor-expect: TFS108 error 16
# tensorflow-raises: ValueError: was created inside a different distribution strategy scope
import numpy as np
import tensorflow as tf
import tf_keras

features = np.random.rand(64, 4).astype("float32")
labels = np.random.rand(64, 1).astype("float32")

# Reductions without collective ops: a snippet that fails inside `fit` can leave a
# collective pending in the process, and later snippets' collectives would meet it.
strategy = tf.distribute.MirroredStrategy(
    ["/cpu:0", "/cpu:1"], cross_device_ops=tf.distribute.ReductionToOneDevice())

error = tf_keras.metrics.MeanAbsoluteError()
with strategy.scope():
    model = tf_keras.Sequential([tf_keras.Input((4,)), tf_keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse", metrics=[error])
model.fit(features, labels, batch_size=16, epochs=1, verbose=0)
