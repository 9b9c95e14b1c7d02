# claim: (negative) the module function `tf.compat.v1.scatter_add(v, ...)` on an ON_READ variable runs
# in replica context: state_ops writes the replica's own copy through `v.handle` (what
# tf.compat.v1.metrics.mean_per_class_accuracy does). Only the `v.scatter_add(...)` method raises.
# syncadvisor-expect-none: TFS106
# result-assert: RESULT == [[1.0, 0.0, 0.0], [1.0, 0.0, 0.0]]
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

with strategy.scope():
    counts = tf.Variable(tf.zeros([3]), trainable=False,
                         synchronization=tf.VariableSynchronization.ON_READ,
                         aggregation=tf.VariableAggregation.SUM)


@tf.function
def count(ids):
    strategy.run(lambda: tf.compat.v1.scatter_add(counts, ids, tf.ones([1])))


count(tf.constant([0]))
RESULT = [copy.numpy().tolist() for copy in counts.values]
