# claim: (negative) Keras 3 SGD without momentum has no slot variables: first applied inside a
# traced `strategy.run`, it trains.
# syncadvisor-expect-none: TFS109
# result-assert: RESULT["slots"] == 2
import keras
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    optimizer = keras.optimizers.SGD(0.01)


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
