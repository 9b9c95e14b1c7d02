# claim: dropping `synchronization=None` ("auto") runs under MirroredStrategy.
# result-assert: RESULT == ["MirroredVariable", "ON_WRITE"]
import keras
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    loss_scale = keras.Variable(2.0**15, trainable=False, name="loss_scale")

print("loss scale:", loss_scale.numpy())
RESULT = [type(loss_scale.value).__name__, loss_scale.value.synchronization.name]
