# claim: an AUTO + MEAN variable assigned under a Python `if` whose test is a tensor, in a
# `tf.function` given to an eager `strategy.run`, raises: AutoGraph makes the `if` a `tf.cond`
# and the update's merge_call cannot run in the branch.
# syncadvisor-expect: TFS110 error 18
# tensorflow-raises: RuntimeError: `merge_call` called while defining a new graph or a tf.function
# without-strategy: clean
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    largest = tf.Variable(0.0, trainable=False, aggregation=tf.VariableAggregation.MEAN)


@tf.function
def step(x):
    peak = tf.reduce_max(x)
    if peak > largest:
        largest.assign(peak)
    return peak


dataset = tf.data.Dataset.from_tensor_slices([1.0, 2.0, 3.0, 5.0]).batch(4)
for batch in strategy.experimental_distribute_dataset(dataset):
    strategy.run(step, args=(batch,))
RESULT = {"copies": [float(c.numpy()) for c in strategy.experimental_local_results(largest)]}
print(RESULT)
