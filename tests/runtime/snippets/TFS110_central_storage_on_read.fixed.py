# claim: with the update outside the branch, weighted by the condition, it runs under
# CentralStorageStrategy: the one copy gets the sum of the replicas' updates.
# result-assert: RESULT["read"] == 10.0
import tensorflow as tf

strategy = tf.distribute.experimental.CentralStorageStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    seen = tf.Variable(0.0, trainable=False, synchronization=tf.VariableSynchronization.ON_READ,
                       aggregation=tf.VariableAggregation.SUM)


def step(x):
    total = tf.reduce_sum(x)
    seen.assign_add(tf.where(total > 0, total, 0.0))
    return x


@tf.function
def train_step(batch):
    return strategy.run(step, args=(batch,))


dataset = tf.data.Dataset.from_tensor_slices([1.0, 2.0, 3.0, 4.0]).batch(4)
for batch in strategy.experimental_distribute_dataset(dataset):
    train_step(batch)
RESULT = {"read": float(seen.read_value())}
print(RESULT)
