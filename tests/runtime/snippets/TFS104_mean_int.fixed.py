# claim: ONLY_FIRST_REPLICA (a counter every replica agrees on) runs.
# result-assert: RESULT == [3, 3]
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

with strategy.scope():
    epoch = tf.Variable(0, trainable=False, aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA, name="epoch")

for _ in range(3):
    epoch.assign_add(1)
print("epoch:", epoch.numpy())
RESULT = [copy.numpy() for copy in epoch.values]
