# claim: (negative) an ON_READ + SUM variable updated inside a `tf.cond` branch of traced replica
# code runs under MirroredStrategy: each replica adds to its own copy, nothing synchronizes in
# the branch, and a cross-replica read sums the copies (3 + 7).
# syncadvisor-expect-none: TFS110
# result-assert: RESULT["read"] == 10.0
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    seen = tf.Variable(0.0, trainable=False, synchronization=tf.VariableSynchronization.ON_READ,
                       aggregation=tf.VariableAggregation.SUM)


def step(x):
    tf.cond(tf.reduce_sum(x) > 0, lambda: seen.assign_add(tf.reduce_sum(x)), lambda: tf.identity(seen))
    return x


@tf.function
def train_step(batch):
    return strategy.run(step, args=(batch,))


dataset = tf.data.Dataset.from_tensor_slices([1.0, 2.0, 3.0, 4.0]).batch(4)
for batch in strategy.experimental_distribute_dataset(dataset):
    train_step(batch)
RESULT = {"read": float(seen.read_value())}
print(RESULT)
