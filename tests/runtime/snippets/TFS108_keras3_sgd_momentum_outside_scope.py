# claim: a Keras 3 SGD with momentum made outside the scope and handed to `compile` inside it
# raises in `fit`: its momentum slots are made under the strategy it captured when it was made.
# syncadvisor-expect: TFS108 error 16
# tensorflow-raises: RuntimeError: Mixing different tf.distribute.Strategy objects
import numpy as np
import tensorflow as tf

features = np.random.rand(64, 4).astype("float32")
labels = np.random.rand(64, 1).astype("float32")

# Reductions without collective ops: a snippet that fails inside `fit` can leave a
# collective pending in the process, and later snippets' collectives would meet it.
strategy = tf.distribute.MirroredStrategy(
    ["/cpu:0", "/cpu:1"], cross_device_ops=tf.distribute.ReductionToOneDevice())

optimizer = tf.keras.optimizers.SGD(0.1, 0.9)
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])
    model.compile(optimizer, "mse")
model.fit(features, labels, batch_size=16, epochs=1, verbose=0)
