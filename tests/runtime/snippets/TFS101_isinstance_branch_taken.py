# claim: the branch where `isinstance(strategy, OneDeviceStrategy)` passes runs under a
# OneDeviceStrategy, which accepts NONE synchronization: it runs, and nothing is reported.
# syncadvisor-expect-none: TFS101
# result-assert: RESULT == 0
import tensorflow as tf


def make_strategy(devices):
    if len(devices) > 1:
        return tf.distribute.MirroredStrategy(
            devices, cross_device_ops=tf.distribute.ReductionToOneDevice())
    return tf.distribute.OneDeviceStrategy(devices[0])


strategy = make_strategy(["/cpu:0"])
with strategy.scope():
    if isinstance(strategy, tf.distribute.OneDeviceStrategy):
        steps = tf.Variable(0, synchronization=tf.VariableSynchronization.NONE)
    else:
        steps = tf.Variable(0)

RESULT = int(steps.numpy())
