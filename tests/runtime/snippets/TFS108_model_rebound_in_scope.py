# claim: a name bound to a model made outside the scope, then bound again to a new model
# made inside it, names the new one where it is compiled and trained: that runs.
# syncadvisor-expect-none: TFS108
# result-assert: RESULT == 1
import numpy as np
import tensorflow as tf

features = np.random.rand(32, 4).astype("float32")
labels = np.random.rand(32, 1).astype("float32")
net = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])
config = net.get_config()
strategy = tf.distribute.MirroredStrategy(
    ["/cpu:0", "/cpu:1"], cross_device_ops=tf.distribute.ReductionToOneDevice())
with strategy.scope():
    net = tf.keras.Sequential.from_config(config)
    net.compile(optimizer=tf.keras.optimizers.Adam(), loss="mse")
RESULT = len(net.fit(features, labels, batch_size=16, epochs=1, verbose=0).history["loss"])
