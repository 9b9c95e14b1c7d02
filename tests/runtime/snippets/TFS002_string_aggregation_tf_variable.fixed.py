# claim: the enum member runs.
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    running_loss = tf.Variable(0.0, trainable=False, aggregation=tf.VariableAggregation.MEAN)

RESULT = running_loss.aggregation.name
