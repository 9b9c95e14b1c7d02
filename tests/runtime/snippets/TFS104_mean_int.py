# claim: aggregation MEAN on an integer variable is rejected at creation under MirroredStrategy; fine without.
# syncadvisor-expect: TFS104 error 10
# tensorflow-raises: ValueError: creating distributed tf.Variable with aggregation=MEAN and a non-floating dtype is not supported
# without-strategy: clean
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

with strategy.scope():
    epoch = tf.Variable(0, trainable=False, aggregation=tf.VariableAggregation.MEAN, name="epoch")

for _ in range(3):
    epoch.assign_add(1)
print("epoch:", epoch.numpy())
