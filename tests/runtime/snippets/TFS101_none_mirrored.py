# claim: `synchronization=NONE` is rejected at creation under MirroredStrategy; accepted without a strategy / OneDevice.
# syncadvisor-expect: TFS101 error 13
# tensorflow-raises: ValueError: `NONE` variable synchronization mode is not supported with tf.distribute strategy
# without-strategy: clean
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

with strategy.scope():
    should_compute_metrics = tf.Variable(
        True,
        trainable=False,
        synchronization=tf.VariableSynchronization.NONE,
        name="should_compute_metrics",
    )

print("compute metrics:", should_compute_metrics.numpy())
