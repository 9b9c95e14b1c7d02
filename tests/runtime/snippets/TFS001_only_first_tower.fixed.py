# claim: ONLY_FIRST_TOWER -> ONLY_FIRST_REPLICA runs, and the counter stays in sync.
# result-assert: RESULT == [1, 1]
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

with strategy.scope():
    global_step = tf.Variable(0, trainable=False, aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)


@tf.function
def train_step():
    strategy.run(lambda: global_step.assign_add(1))


train_step()
RESULT = [copy.numpy() for copy in global_step.values]
