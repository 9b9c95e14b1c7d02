# claim: a dense update (`assign_add` of a bincount) keeps ON_READ + SUM and counts correctly.
# result-assert: RESULT == [0.0, 1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0]
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
        counts = tf.math.bincount(ids, minlength=VOCAB_SIZE, maxlength=VOCAB_SIZE, dtype=tf.float32)
        token_counts.assign_add(counts)

    strategy.run(step_fn, args=(batch,))


for batch in strategy.experimental_distribute_dataset(token_ids):
    count_tokens(batch)
RESULT = token_counts.numpy()
