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
