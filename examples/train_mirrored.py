"""A small custom training loop under MirroredStrategy, with the mistakes people make.

Run `syncadvisor check examples/train_mirrored.py` to see them; each comment says
what TensorFlow 2.21 does with that line.
"""
import tensorflow as tf
import tf_keras

strategy = tf.distribute.MirroredStrategy()
GLOBAL_BATCH = 64


def make_dataset():
    x = tf.random.normal([1024, 8])
    y = tf.reduce_sum(x, axis=1, keepdims=True)
    return tf.data.Dataset.from_tensor_slices((x, y)).batch(GLOBAL_BATCH)


# Built outside the scope, compiled inside it: tf_keras raises ValueError in compile().
model = tf_keras.Sequential([tf_keras.layers.Dense(16, activation="relu"), tf_keras.layers.Dense(1)])

with strategy.scope():
    optimizer = tf_keras.optimizers.SGD(0.01)
    model.compile(optimizer=optimizer, loss="mse")

    # A flag that must never be synchronized... NONE raises ValueError under MirroredStrategy.
    should_log = tf.Variable(True, trainable=False,
                             synchronization=tf.VariableSynchronization.NONE)

    # Running mean of the loss: aggregation NONE, assigned per replica -> copies diverge.
    loss_ema = tf.Variable(0.0, trainable=False)

    # Step counter with MEAN on an int: ValueError at creation.
    step = tf.Variable(0, trainable=False, aggregation=tf.VariableAggregation.MEAN)

    # Examples seen: ON_READ without an aggregation; the print below raises.
    examples_seen = tf.Variable(0.0, trainable=False,
                                synchronization=tf.VariableSynchronization.ON_READ)

    accuracy = tf_keras.metrics.MeanAbsoluteError()


def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    loss_ema.assign(0.9 * loss_ema + 0.1 * loss)
    examples_seen.assign_add(tf.cast(tf.shape(x)[0], tf.float32))
    step.assign_add(1)
    return loss


@tf.function
def distributed_step(x, y):
    return strategy.run(train_step, args=(x, y))


for x, y in strategy.experimental_distribute_dataset(make_dataset()):
    distributed_step(x, y)

for x, y in make_dataset():
    # Outside strategy.run: a tf_keras metric's assign_add raises here.
    accuracy.update_state(y, model(x))

print("examples seen:", examples_seen.numpy())
