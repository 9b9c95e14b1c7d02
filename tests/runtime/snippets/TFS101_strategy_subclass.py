# claim: a subclass of MirroredStrategy is a MirroredStrategy: `synchronization=NONE` is rejected at creation under it.
# syncadvisor-expect: TFS101 error 14
# tensorflow-raises: ValueError: `NONE` variable synchronization mode is not supported with tf.distribute strategy
import tensorflow as tf


class DataParallel(tf.distribute.MirroredStrategy):
    """A project's own strategy class (dm-sonnet's Replicator is one)."""


strategy = DataParallel(["/cpu:0", "/cpu:1"])

with strategy.scope():
    ready = tf.Variable(True, trainable=False, synchronization=tf.VariableSynchronization.NONE)

print("ready:", ready.numpy())
