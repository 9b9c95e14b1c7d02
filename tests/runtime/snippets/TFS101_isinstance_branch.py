# claim: in the branch where `isinstance(strategy, OneDeviceStrategy)` fails, a strategy
# that is MirroredStrategy or OneDeviceStrategy is a MirroredStrategy: NONE
# synchronization raises at creation there.
# syncadvisor-expect: TFS101 error 21
# tensorflow-raises: ValueError: `NONE` variable synchronization mode is not supported
import tensorflow as tf


def make_strategy(devices):
    if len(devices) > 1:
        return tf.distribute.MirroredStrategy(
            devices, cross_device_ops=tf.distribute.ReductionToOneDevice())
    return tf.distribute.OneDeviceStrategy(devices[0])


strategy = make_strategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    if isinstance(strategy, tf.distribute.OneDeviceStrategy):
        steps = tf.Variable(0, synchronization=tf.VariableSynchronization.NONE)
    else:
        steps = tf.Variable(0, synchronization=tf.VariableSynchronization.NONE)
