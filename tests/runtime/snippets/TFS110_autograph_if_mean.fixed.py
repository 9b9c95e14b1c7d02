# claim: the variable made ON_READ (MEAN), each replica updates its own copy in the branch and
# nothing synchronizes there: it runs, and a cross-replica read averages the copies
# (replica 0 saw 2.0, replica 1 saw 5.0).
# result-assert: RESULT["read"] == 3.5
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    largest = tf.Variable(0.0, trainable=False, synchronization=tf.VariableSynchronization.ON_READ,
                          aggregation=tf.VariableAggregation.MEAN)


@tf.function
def step(x):
    peak = tf.reduce_max(x)
    if peak > largest:
        largest.assign(peak)
    return peak


dataset = tf.data.Dataset.from_tensor_slices([1.0, 2.0, 3.0, 5.0]).batch(4)
for batch in strategy.experimental_distribute_dataset(dataset):
    strategy.run(step, args=(batch,))
RESULT = {"read": float(largest.read_value())}
print(RESULT)
