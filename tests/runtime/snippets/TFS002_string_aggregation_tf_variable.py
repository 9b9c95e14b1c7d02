# claim: a string `aggregation` is rejected by `tf.Variable` with or without a strategy.
# syncadvisor-expect: TFS002 error 9
# tensorflow-raises: ValueError: Invalid variable aggregation mode: mean for variable
# without-strategy: raises ValueError: Invalid variable aggregation mode: mean for variable
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    running_loss = tf.Variable(0.0, trainable=False, aggregation="mean")
