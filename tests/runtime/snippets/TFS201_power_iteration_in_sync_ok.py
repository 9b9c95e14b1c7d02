# claim: a NONE-aggregation variable updated in replica context with a value computed only from
# mirrored variables (a power iteration over a kernel, as spectral normalization does) stays the
# same on every replica under MirroredStrategy, even while each replica sees different data: no
# finding.
# syncadvisor-expect-none: TFS201
# result-assert: RESULT["u"][0] == RESULT["u"][1] and RESULT["mean"][0] != RESULT["mean"][1]
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

with strategy.scope():
    kernel = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    u = tf.Variable([[1.0, 0.0]], trainable=False)

# replica 0 gets [0, 0], replica 1 gets [10, 10]
dataset = tf.data.Dataset.from_tensor_slices([0.0, 0.0, 10.0, 10.0]).batch(4)


@tf.function
def train(batch):
    def step_fn(x):
        v = u.value()
        for _ in range(3):
            w = tf.math.l2_normalize(tf.matmul(v, tf.transpose(kernel)))
            v = tf.math.l2_normalize(tf.matmul(w, kernel))
        u.assign(v)
        return tf.reduce_mean(x)  # what this replica saw

    return strategy.run(step_fn, args=(batch,))


for batch in strategy.experimental_distribute_dataset(dataset):
    means = strategy.experimental_local_results(train(batch))

RESULT = {
    "u": [copy.numpy().tolist() for copy in u.values],
    "mean": [float(m.numpy()) for m in means],
}
print(RESULT)
