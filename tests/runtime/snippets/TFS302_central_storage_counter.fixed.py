# claim: with aggregation ONLY_FIRST_REPLICA the counter takes replica 0's step.
# result-assert: RESULT == 2
import tensorflow as tf

strategy = tf.distribute.experimental.CentralStorageStrategy(["/cpu:0", "/cpu:1"])

with strategy.scope():
    step = tf.Variable(0, trainable=False, aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)


@tf.function
def train_step():
    strategy.run(lambda: step.assign_add(1))


train_step()
train_step()
RESULT = int(step.numpy())
