# claim: dropping `synchronization="none"` runs under MirroredStrategy.
# result-assert: RESULT == "MirroredVariable"
import keras
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    step_counter = keras.Variable(0, dtype="int64", trainable=False, name="step_counter")

print("steps:", step_counter.numpy())
RESULT = type(step_counter.value).__name__
