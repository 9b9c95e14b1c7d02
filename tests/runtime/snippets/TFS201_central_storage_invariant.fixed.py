# claim: with `aggregation=ONLY_FIRST_REPLICA` the counter is updated once per step.
# result-assert: RESULT == 1.0
import tensorflow as tf

strategy = tf.distribute.experimental.CentralStorageStrategy(["/cpu:0", "/cpu:1"])

with strategy.scope():
    steps = tf.Variable(0.0, trainable=False, name="steps",
                        aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)


def count_step():
    steps.assign_add(1.0)


strategy.run(count_step)
RESULT = float(steps.numpy())
