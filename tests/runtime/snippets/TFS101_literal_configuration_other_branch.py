# claim: the same code with "one_device" spelled out builds a OneDeviceStrategy, which
# accepts NONE synchronization: it runs, and nothing is reported.
# syncadvisor-expect-none: TFS101
# result-assert: RESULT == 1
import tensorflow as tf

STRATEGY = "one_device"

if STRATEGY == "mirrored":
    strategy = tf.distribute.MirroredStrategy(
        ["/cpu:0", "/cpu:1"], cross_device_ops=tf.distribute.ReductionToOneDevice())
else:
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
with strategy.scope():
    steps = tf.Variable(0, synchronization=tf.VariableSynchronization.NONE)
steps.assign_add(1)
RESULT = int(steps.numpy())
