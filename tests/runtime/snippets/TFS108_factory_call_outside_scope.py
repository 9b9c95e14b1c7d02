# claim: a Keras 3 optimizer a factory returns, called outside the scope and handed to
# `compile` inside it, raises when it builds its slot variables; the finding is at the
# factory's call, where `with strategy.scope():` goes.
# syncadvisor-expect: TFS108 error 22
# tensorflow-raises: RuntimeError: Mixing different tf.distribute.Strategy objects
import numpy as np
import tensorflow as tf


def build_optimizer(rate):
    return tf.keras.optimizers.Adam(rate)


def build_model():
    return tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])


features = np.random.rand(32, 4).astype("float32")
labels = np.random.rand(32, 1).astype("float32")
strategy = tf.distribute.MirroredStrategy(
    ["/cpu:0", "/cpu:1"], cross_device_ops=tf.distribute.ReductionToOneDevice())
optimizer = build_optimizer(0.01)
with strategy.scope():
    model = build_model()
    model.compile(optimizer=optimizer, loss="mse")
model.fit(features, labels, batch_size=16, epochs=1, verbose=0)
