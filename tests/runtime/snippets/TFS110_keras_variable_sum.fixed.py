# claim: the update outside the branch, weighted by the condition, runs; note that Keras 3's
# assign_add assigns `v + x`, which SUM then adds up across the replicas (TFS205): starting
# from 0 the copies hold the sum of the replicas' totals, 3 + 7.
# result-assert: RESULT["copies"] == [10.0, 10.0]
import keras
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    positives = keras.Variable(0.0, trainable=False, aggregation="sum")


def step(x):
    total = keras.ops.sum(x)
    positives.assign_add(keras.ops.where(total > 0, total, 0.0))
    return total


@tf.function
def train_step(batch):
    return strategy.run(step, args=(batch,))


dataset = tf.data.Dataset.from_tensor_slices([1.0, 2.0, 3.0, 4.0]).batch(4)
for batch in strategy.experimental_distribute_dataset(dataset):
    train_step(batch)
RESULT = {"copies": [float(c.numpy()) for c in strategy.experimental_local_results(positives.value)]}
print(RESULT)
