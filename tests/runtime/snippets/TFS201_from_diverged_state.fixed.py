# claim: with aggregation MEAN the replicas' assigns are averaged: both variables' copies stay equal.
# result-assert: RESULT["mean"] == [5.0, 5.0] and RESULT["doubled"] == [10.0, 10.0]
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

with strategy.scope():
    mean = tf.Variable(0.0, trainable=False, aggregation=tf.VariableAggregation.MEAN)
    doubled = tf.Variable(0.0, trainable=False, aggregation=tf.VariableAggregation.MEAN)

# replica 0 gets [0, 0], replica 1 gets [10, 10]
dataset = tf.data.Dataset.from_tensor_slices([0.0, 0.0, 10.0, 10.0]).batch(4)


@tf.function
def train(batch):
    def step_fn(x):
        mean.assign(tf.reduce_mean(x))
        doubled.assign(mean * 2)

    strategy.run(step_fn, args=(batch,))


for batch in strategy.experimental_distribute_dataset(dataset):
    train(batch)

RESULT = {
    "mean": [float(copy.numpy()) for copy in mean.values],
    "doubled": [float(copy.numpy()) for copy in doubled.values],
}
print(RESULT)
