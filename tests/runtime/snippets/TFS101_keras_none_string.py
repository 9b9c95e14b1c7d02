# claim: Keras 3 `synchronization="none"` becomes NONE and is rejected under MirroredStrategy; fine without.
# syncadvisor-expect: TFS101 error 10
# tensorflow-raises: ValueError: `NONE` variable synchronization mode is not supported with tf.distribute strategy
# without-strategy: clean
import keras
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    step_counter = keras.Variable(0, dtype="int64", trainable=False, synchronization="none", name="step_counter")

print("steps:", step_counter.numpy())
