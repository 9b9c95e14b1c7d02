# claim: a string `synchronization` is rejected by `tf.Variable` with or without a strategy.
# syncadvisor-expect: TFS002 error 13
# tensorflow-raises: ValueError: Invalid variable synchronization mode: ON_READ for variable
# without-strategy: raises ValueError: Invalid variable synchronization mode: ON_READ for variable
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

with strategy.scope():
    examples_seen = tf.Variable(
        0.0,
        trainable=False,
        synchronization="ON_READ",
        aggregation=tf.VariableAggregation.SUM,
    )
