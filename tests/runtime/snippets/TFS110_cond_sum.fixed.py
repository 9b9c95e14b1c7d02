# claim: the update moved out of the branch, weighted by the condition (a batch without a NaN
# adds 0), runs: SUM adds the replicas' counts, 1 NaN in all.
# result-assert: RESULT["copies"] == [1.0, 1.0]
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    skipped = tf.Variable(0.0, trainable=False, aggregation=tf.VariableAggregation.SUM)


def step(x):
    nan = tf.math.is_nan(x)
    # counts the NaNs of the batches that had any (a batch with none adds 0)
    skipped.assign_add(tf.reduce_sum(tf.cast(nan, tf.float32)))
    return tf.reduce_sum(tf.where(tf.math.is_nan(x), 0.0, x))


@tf.function
def train_step(batch):
    return strategy.run(step, args=(batch,))


dataset = tf.data.Dataset.from_tensor_slices([1.0, float("nan"), 2.0, 3.0]).batch(4)
for batch in strategy.experimental_distribute_dataset(dataset):
    train_step(batch)
RESULT = {"copies": [float(c.numpy()) for c in strategy.experimental_local_results(skipped)]}
print(RESULT)
