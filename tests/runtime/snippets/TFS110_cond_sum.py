# claim: an ON_WRITE + SUM variable updated inside a `tf.cond` branch of the function given to
# `strategy.run`, with `strategy.run` inside a `tf.function`, raises when it is traced: the
# update's merge_call cannot run in a branch being built (MirroredStrategy over 2 replicas).
# syncadvisor-expect: TFS110 error 17
# tensorflow-raises: RuntimeError: `merge_call` called while defining a new graph or a tf.function
# without-strategy: clean
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    skipped = tf.Variable(0.0, trainable=False, aggregation=tf.VariableAggregation.SUM)


def step(x):
    nan = tf.math.is_nan(x)
    # counts the NaNs of the batches that had any
    tf.cond(tf.reduce_any(nan), lambda: skipped.assign_add(tf.reduce_sum(tf.cast(nan, tf.float32))),
            lambda: tf.identity(skipped))
    return tf.reduce_sum(tf.where(tf.math.is_nan(x), 0.0, x))


@tf.function
def train_step(batch):
    return strategy.run(step, args=(batch,))


dataset = tf.data.Dataset.from_tensor_slices([1.0, float("nan"), 2.0, 3.0]).batch(4)
for batch in strategy.experimental_distribute_dataset(dataset):
    train_step(batch)
RESULT = {"copies": [float(c.numpy()) for c in strategy.experimental_local_results(skipped)]}
print(RESULT)
