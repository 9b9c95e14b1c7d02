# claim: `synchronization=None` means AUTO without a strategy but is rejected under MirroredStrategy.
# syncadvisor-expect: TFS002 error 9
# tensorflow-raises: ValueError: Invalid variable synchronization mode: None for variable
# without-strategy: clean
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    learning_rate = tf.Variable(1e-3, trainable=False, synchronization=None, name="learning_rate")

print("lr:", learning_rate.numpy())
