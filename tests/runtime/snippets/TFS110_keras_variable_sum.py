# claim: a Keras 3 `keras.Variable(aggregation="sum")` (AUTO: ON_WRITE under MirroredStrategy)
# updated inside a `tf.cond` branch of traced replica code raises the same RuntimeError.
# syncadvisor-expect: TFS110 error 16
# tensorflow-raises: RuntimeError: `merge_call` called while defining a new graph or a tf.function
# without-strategy: clean
import keras
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    positives = keras.Variable(0.0, trainable=False, aggregation="sum")


def step(x):
    total = keras.ops.sum(x)
    tf.cond(total > 0, lambda: positives.assign_add(total), lambda: positives.value)
    return total


@tf.function
def train_step(batch):
    return strategy.run(step, args=(batch,))


dataset = tf.data.Dataset.from_tensor_slices([1.0, 2.0, 3.0, 4.0]).batch(4)
for batch in strategy.experimental_distribute_dataset(dataset):
    train_step(batch)
RESULT = {"copies": [float(c.numpy()) for c in strategy.experimental_local_results(positives.value)]}
print(RESULT)
