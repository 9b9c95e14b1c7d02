# claim: (negative) the same `tf.cond` around a SUM update runs when `strategy.run` is called
# eagerly (no `tf.function` on the way): `tf.cond` then runs the chosen branch as Python. (With a
# predicate that differs between replicas it would raise another RuntimeError, "Some replicas
# made a different number of replica_context().merge_call() calls": here every replica reads the
# same mirrored `enabled`.)
# syncadvisor-expect-none: TFS110
# result-assert: RESULT["copies"] == [3.0, 3.0]
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    total = tf.Variable(0.0, trainable=False, aggregation=tf.VariableAggregation.SUM)
    enabled = tf.Variable(True, trainable=False)


def step(x):
    tf.cond(enabled, lambda: total.assign_add(tf.reduce_sum(x)), lambda: tf.identity(total))
    return x


dataset = tf.data.Dataset.from_tensor_slices([1.0, 0.0, 2.0, 0.0]).batch(4)
for batch in strategy.experimental_distribute_dataset(dataset):
    strategy.run(step, args=(batch,))
RESULT = {"copies": [float(c.numpy()) for c in strategy.experimental_local_results(total)]}
print(RESULT)
