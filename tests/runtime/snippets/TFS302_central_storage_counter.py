# claim: under CentralStorageStrategy a step counter with aggregation NONE, advanced by a constant in
# replica context, raises: its one aggregating copy cannot take replica-context updates without an
# aggregation, whatever the value.
# syncadvisor-expect: TFS302 info 12
# tensorflow-raises: ValueError: You must specify an aggregation method to update a
# without-strategy: clean
import tensorflow as tf

strategy = tf.distribute.experimental.CentralStorageStrategy(["/cpu:0", "/cpu:1"])

with strategy.scope():
    step = tf.Variable(0, trainable=False)


@tf.function
def train_step():
    strategy.run(lambda: step.assign_add(1))


train_step()
print("step:", step.numpy())
