# claim: under CentralStorageStrategy a replica-context update of a NONE-aggregation variable
# raises even when the value is the same on every replica (`assign_add(1.0)`).
# syncadvisor-expect: TFS201 error 11
# tensorflow-raises: ValueError: You must specify an aggregation method to update a AggregatingVariable in Replica Context
# without-strategy: clean
import tensorflow as tf

strategy = tf.distribute.experimental.CentralStorageStrategy(["/cpu:0", "/cpu:1"])

with strategy.scope():
    steps = tf.Variable(0.0, trainable=False, name="steps")


def count_step():
    steps.assign_add(1.0)


strategy.run(count_step)
print("steps:", steps.numpy())
