# claim: (negative) `scatter_add` on an ON_WRITE + SUM mirrored variable does NOT raise in TF 2.21,
# in replica context (the per-replica deltas are summed: both copies agree) or cross-replica (applied
# to every copy). Only scatter_update/min/max are refused on SUM/MEAN mirrored variables.
# syncadvisor-expect-none: TFS106
# result-assert: RESULT == [[2.0, 1.0, 1.0, 0.0], [2.0, 1.0, 1.0, 0.0]]
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

with strategy.scope():
    id_counts = tf.Variable(tf.zeros([4]), trainable=False, aggregation=tf.VariableAggregation.SUM)

ids = tf.data.Dataset.from_tensor_slices(tf.constant([0, 1, 0, 2])).batch(4)


@tf.function
def count_ids(batch):
    def step_fn(ids):
        id_counts.scatter_add(tf.IndexedSlices(tf.ones_like(ids, dtype=tf.float32), ids))

    strategy.run(step_fn, args=(batch,))


for batch in strategy.experimental_distribute_dataset(ids):
    count_ids(batch)
RESULT = [copy.numpy() for copy in id_counts.values]
