# claim: `keras.Variable(synchronization=None)` means NONE (not AUTO): rejected under MirroredStrategy, fine without.
# syncadvisor-expect: TFS003 error 10
# tensorflow-raises: ValueError: `NONE` variable synchronization mode is not supported with tf.distribute strategy
# without-strategy: clean
import keras
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    loss_scale = keras.Variable(2.0**15, trainable=False, synchronization=None, name="loss_scale")

print("loss scale:", loss_scale.numpy())
