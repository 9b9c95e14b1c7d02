"""A custom training loop that accumulates gradients over micro-batches.

`syncadvisor check examples/train_accumulate.py` says what is wrong statically;
`syncadvisor profile --run examples/train_accumulate.py` runs this program under each
choice for the three variables below and measures what each one costs and whether the
replicas stay in step.
"""
import tensorflow as tf

GLOBAL_BATCH = 32
ACCUMULATE = 2  # micro-batches per optimizer step

strategy = tf.distribute.MirroredStrategy()


def make_dataset():
    x = tf.random.stateless_normal([4096, 16], seed=[1, 2])
    y = tf.reduce_sum(x, axis=1, keepdims=True)
    return tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(GLOBAL_BATCH)


with strategy.scope():
    kernel = tf.Variable(tf.zeros([16, 1]), name="kernel")
    optimizer = tf.keras.optimizers.SGD(0.01)
    optimizer.build([kernel])
    # The gradient summed over micro-batches. Each replica adds its own gradient: with
    # the default aggregation NONE the replicas' copies drift apart.
    grad_accum = tf.Variable(tf.zeros([16, 1]), trainable=False, name="grad_accum")
    # The loss summed over the run, for logging.
    loss_total = tf.Variable(0.0, trainable=False, name="loss_total",
                             aggregation=tf.VariableAggregation.SUM)
    # Micro-batches seen.
    micro_steps = tf.Variable(0, dtype=tf.int64, trainable=False, name="micro_steps",
                              aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)


def replica_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.square(tf.matmul(x, kernel) - y)) / GLOBAL_BATCH
    grad_accum.assign_add(tape.gradient(loss, kernel))
    loss_total.assign_add(loss)
    micro_steps.assign_add(1)


@tf.function
def train_step(x, y):
    strategy.run(replica_step, args=(x, y))


@tf.function
def apply_accumulated():
    optimizer.apply([grad_accum / ACCUMULATE], [kernel])
    grad_accum.assign(tf.zeros_like(grad_accum))


def main(steps=40):
    batches = iter(strategy.experimental_distribute_dataset(make_dataset()))
    for i in range(steps):
        train_step(*next(batches))
        if (i + 1) % ACCUMULATE == 0:
            apply_accumulated()
    print("loss total:", float(loss_total.numpy()), "micro-batches:", int(micro_steps.numpy()))


if __name__ == "__main__":
    main()
