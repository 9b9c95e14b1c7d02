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
with strategy.scope():
    optimizer = build_optimizer(0.01)
    model = build_model()
    model.compile(optimizer=optimizer, loss="mse")
model.fit(features, labels, batch_size=16, epochs=1, verbose=0)
