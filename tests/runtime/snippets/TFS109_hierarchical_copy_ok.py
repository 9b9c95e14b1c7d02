# claim: (negative) with `cross_device_ops=tf.distribute.HierarchicalCopyAllReduce()` instead of
# TF 2.21's default collective all-reduce, the Adam first built in the traced step trains.
# syncadvisor-expect-none: TFS109
# result-assert: RESULT["slots"] == 6
import keras
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(
    ["/cpu:0", "/cpu:1"], cross_device_ops=tf.distribute.HierarchicalCopyAllReduce())
with strategy.scope():
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    optimizer = keras.optimizers.Adam()


def step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(x) - y) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


@tf.function
def train(x, y):
    return strategy.run(step, args=(x, y))


dataset = tf.data.Dataset.from_tensor_slices((tf.ones((16, 4)), tf.zeros((16, 1)))).batch(8)
for x, y in strategy.experimental_distribute_dataset(dataset):
    train(x, y)
RESULT = {"slots": len(optimizer.variables)}
print(RESULT)
