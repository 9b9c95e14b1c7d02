# claim: the same SGD with momentum made inside the scope trains.
# result-assert: RESULT == 2
import numpy as np
import tensorflow as tf

features = np.random.rand(64, 4).astype("float32")
labels = np.random.rand(64, 1).astype("float32")

strategy = tf.distribute.MirroredStrategy(
    ["/cpu:0", "/cpu:1"], cross_device_ops=tf.distribute.ReductionToOneDevice())

with strategy.scope():
    optimizer = tf.keras.optimizers.SGD(0.1, 0.9)
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])
    model.compile(optimizer, "mse")
model.fit(features, labels, batch_size=16, epochs=1, verbose=0)
RESULT = len(optimizer.momentums)
