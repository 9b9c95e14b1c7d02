# claim: `scatter_*` on an ON_READ variable raises NotImplementedError under MirroredStrategy.
# syncadvisor-expect: TFS106 error 25
# tensorflow-raises: NotImplementedError: Variables with `synchronization=ON_READ` doesn't support `scatter_add`
# without-strategy: clean
import tensorflow as tf

VOCAB_SIZE = 10
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

with strategy.scope():
    token_counts = tf.Variable(
        tf.zeros([VOCAB_SIZE]),
        trainable=False,
        synchronization=tf.VariableSynchronization.ON_READ,
        aggregation=tf.VariableAggregation.SUM,
    )

token_ids = tf.data.Dataset.from_tensor_slices(tf.constant([1, 2, 2, 3, 3, 3, 9, 9])).batch(8)


@tf.function
def count_tokens(batch):
    def step_fn(ids):
        updates = tf.IndexedSlices(tf.ones_like(ids, dtype=tf.float32), ids)
        token_counts.scatter_add(updates)

    strategy.run(step_fn, args=(batch,))


for batch in strategy.experimental_distribute_dataset(token_ids):
    count_tokens(batch)
