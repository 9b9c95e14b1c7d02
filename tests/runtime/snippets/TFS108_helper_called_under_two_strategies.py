# claim: a helper that makes and compiles a model runs once per call, under that call's
# scope: called under two strategies, each model is made and compiled under its own.
# syncadvisor-expect-none: TFS108
# result-assert: RESULT == [1, 1]
import numpy as np
import tensorflow as tf


def build_and_compile():
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])
    model.compile(optimizer=tf.keras.optimizers.Adam(), loss="mse")
    return model


features = np.random.rand(32, 4).astype("float32")
labels = np.random.rand(32, 1).astype("float32")
first = tf.distribute.MirroredStrategy(
    ["/cpu:0", "/cpu:1"], cross_device_ops=tf.distribute.ReductionToOneDevice())
second = tf.distribute.MirroredStrategy(
    ["/cpu:0", "/cpu:1"], cross_device_ops=tf.distribute.ReductionToOneDevice())
with first.scope():
    one = build_and_compile()
with second.scope():
    two = build_and_compile()
RESULT = [len(m.fit(features, labels, batch_size=16, epochs=1, verbose=0).history["loss"])
          for m in (one, two)]
