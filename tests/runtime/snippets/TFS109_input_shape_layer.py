# claim: a first layer given its input's shape (`input_shape=`, the legacy form Keras 3 still
# builds from) builds the Sequential where it is made; the Adam first built in the traced step
# still fails it, and the fix builds the optimizer after the model in the scope.
# syncadvisor-expect: TFS109 error 13
# tensorflow-raises: InvalidArgumentError: You must feed a value for placeholder tensor
# without-strategy: clean
import keras
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    model = keras.Sequential([keras.layers.Dense(1, input_shape=(4,))])
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
