# claim: a helper that makes an optimizer, then compiles inside the scope it is given,
# raises on the call made outside any scope (the optimizer is made under the default
# strategy there) and runs on the call made inside: the error names that call.
# syncadvisor-expect: TFS108 error 11
# tensorflow-raises: RuntimeError: Mixing different tf.distribute.Strategy objects
import numpy as np
import tensorflow as tf


def train(strategy, features, labels):
    optimizer = tf.keras.optimizers.Adam(0.01)
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])
        model.compile(optimizer=optimizer, loss="mse")
    model.fit(features, labels, batch_size=16, epochs=1, verbose=0)


features = np.random.rand(32, 4).astype("float32")
labels = np.random.rand(32, 1).astype("float32")
strategy = tf.distribute.MirroredStrategy(
    ["/cpu:0", "/cpu:1"], cross_device_ops=tf.distribute.ReductionToOneDevice())
with strategy.scope():
    train(strategy, features, labels)
train(strategy, features, labels)
