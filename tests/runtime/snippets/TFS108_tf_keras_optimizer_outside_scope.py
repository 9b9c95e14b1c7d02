# claim: a tf_keras optimizer made outside the scope trains: it makes its slot variables
# under the strategy current when it builds, so TFS108 says nothing.
# syncadvisor-expect-none: TFS108
# result-assert: RESULT == 8
import numpy as np
import tensorflow as tf
import tf_keras

features = np.random.rand(64, 4).astype("float32")
labels = np.random.rand(64, 1).astype("float32")

# Reductions without collective ops: a snippet that fails inside `fit` can leave a
# collective pending in the process, and later snippets' collectives would meet it.
strategy = tf.distribute.MirroredStrategy(
    ["/cpu:0", "/cpu:1"], cross_device_ops=tf.distribute.ReductionToOneDevice())

optimizer = tf_keras.optimizers.Adam()
with strategy.scope():
    model = tf_keras.Sequential([tf_keras.Input((4,)), tf_keras.layers.Dense(1)])
    model.compile(optimizer=optimizer, loss="mse")
model.fit(features, labels, batch_size=16, epochs=2, verbose=0)
RESULT = int(optimizer.iterations.numpy())
