# claim: a factory's optimizer made by a caller outside any scope, and never handed to a
# strategy's model, runs; the one made inside the scope trains there.
# syncadvisor-expect-none: TFS108
# result-assert: RESULT == [1, 1]
import numpy as np
import tensorflow as tf


def make_optimizer():
    return tf.keras.optimizers.Adam(0.01)


features = np.random.rand(32, 4).astype("float32")
labels = np.random.rand(32, 1).astype("float32")
strategy = tf.distribute.MirroredStrategy(
    ["/cpu:0", "/cpu:1"], cross_device_ops=tf.distribute.ReductionToOneDevice())
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])
    model.compile(optimizer=make_optimizer(), loss="mse")
trained = model.fit(features, labels, batch_size=16, epochs=1, verbose=0)

local = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])
local.compile(optimizer=make_optimizer(), loss="mse")
RESULT = [len(h.history["loss"]) for h in
          (trained, local.fit(features, labels, batch_size=16, epochs=1, verbose=0))]
