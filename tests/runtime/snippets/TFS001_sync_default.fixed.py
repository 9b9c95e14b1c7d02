# claim: DEFAULT -> AUTO runs.
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

with strategy.scope():
    moving_loss = tf.Variable(
        0.0,
        trainable=False,
        synchronization=tf.VariableSynchronization.AUTO,
        aggregation=tf.VariableAggregation.MEAN,
    )

print("moving loss:", moving_loss.numpy())
RESULT = {"synchronization": moving_loss.synchronization.name, "value": moving_loss.numpy()}
