# claim: `tf.VariableSynchronization.DEFAULT` is not a member (AUTO is): AttributeError, whatever the strategy.
# syncadvisor-expect: TFS001 error 13
# tensorflow-raises: AttributeError: DEFAULT
# without-strategy: raises AttributeError: DEFAULT
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

with strategy.scope():
    moving_loss = tf.Variable(
        0.0,
        trainable=False,
        synchronization=tf.VariableSynchronization.DEFAULT,
        aggregation=tf.VariableAggregation.MEAN,
    )

print("moving loss:", moving_loss.numpy())
