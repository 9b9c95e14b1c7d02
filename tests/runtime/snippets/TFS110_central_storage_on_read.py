# claim: CentralStorageStrategy ignores ON_READ (one aggregating copy): an ON_READ + SUM variable
# updated inside a `tf.cond` branch of traced replica code raises the same RuntimeError there,
# although it runs under MirroredStrategy (TFS110_on_read_mirrored_ok.py).
# syncadvisor-expect: TFS110 error 16
# tensorflow-raises: RuntimeError: `merge_call` called while defining a new graph or a tf.function
# without-strategy: clean
import tensorflow as tf

strategy = tf.distribute.experimental.CentralStorageStrategy(["/cpu:0", "/cpu:1"])
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
