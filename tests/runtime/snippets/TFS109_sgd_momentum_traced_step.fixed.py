# claim: built in the scope, SGD with momentum trains in the same traced step.
# result-assert: RESULT["slots"] == 4
import keras
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    optimizer = keras.optimizers.SGD(0.01, momentum=0.9)
    optimizer.build(model.trainable_variables)


@tf.function
def step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(x) - y) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


dataset = tf.data.Dataset.from_tensor_slices((tf.ones((16, 4)), tf.zeros((16, 1)))).batch(8)
for x, y in strategy.experimental_distribute_dataset(dataset):
    strategy.run(step, args=(x, y))
RESULT = {"slots": len(optimizer.variables)}
print(RESULT)
