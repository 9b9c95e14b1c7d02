# claim: dropping the argument (AUTO) runs under the MirroredStrategy subclass: a mirrored variable.
# result-assert: RESULT == "MirroredVariable"
import tensorflow as tf


class DataParallel(tf.distribute.MirroredStrategy):
    """A project's own strategy class (dm-sonnet's Replicator is one)."""


strategy = DataParallel(["/cpu:0", "/cpu:1"])

with strategy.scope():
    ready = tf.Variable(True, trainable=False)

print("ready:", ready.numpy())
RESULT = type(ready).__name__
