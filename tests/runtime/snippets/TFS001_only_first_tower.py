# claim: `ONLY_FIRST_TOWER` exists only on the v1 enum; `tf.VariableAggregation` (v2) has no such member: AttributeError.
# syncadvisor-expect: TFS001 error 10
# tensorflow-raises: AttributeError: ONLY_FIRST_TOWER
# without-strategy: raises AttributeError: ONLY_FIRST_TOWER
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

with strategy.scope():
    global_step = tf.Variable(0, trainable=False, aggregation=tf.VariableAggregation.ONLY_FIRST_TOWER)


@tf.function
def train_step():
    strategy.run(lambda: global_step.assign_add(1))


train_step()
