# claim: a strategy chosen by configuration the module spells out is that strategy: with
# "mirrored", NONE synchronization raises at creation.
# syncadvisor-expect: TFS101 error 15
# tensorflow-raises: ValueError: `NONE` variable synchronization mode is not supported
import tensorflow as tf

CONFIG = {"strategy": "mirrored", "learning_rate": 0.1}

if CONFIG["strategy"] == "mirrored":
    strategy = tf.distribute.MirroredStrategy(
        ["/cpu:0", "/cpu:1"], cross_device_ops=tf.distribute.ReductionToOneDevice())
else:
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
with strategy.scope():
    steps = tf.Variable(0, synchronization=tf.VariableSynchronization.NONE)
