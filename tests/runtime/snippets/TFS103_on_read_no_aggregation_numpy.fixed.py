# claim: with `aggregation=SUM` (an assign_add accumulator) the cross-replica read works and sums the replicas.
# result-assert: RESULT == 16.0
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

with strategy.scope():
    examples_seen = tf.Variable(0.0, trainable=False, synchronization=tf.VariableSynchronization.ON_READ,
                                aggregation=tf.VariableAggregation.SUM)

dataset = tf.data.Dataset.from_tensor_slices(tf.zeros([16, 4])).batch(8)


@tf.function
def train_step(batch):
    def step_fn(features):
        examples_seen.assign_add(tf.cast(tf.shape(features)[0], tf.float32))

    strategy.run(step_fn, args=(batch,))


for batch in strategy.experimental_distribute_dataset(dataset):
    train_step(batch)

print("examples seen:", examples_seen.numpy())
RESULT = examples_seen.numpy()
