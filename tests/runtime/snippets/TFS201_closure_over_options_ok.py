# claim: a NONE-aggregation variable updated in replica context with a value computed from a
# closure over an options object (the parameter of the factory that returns the step, bound
# before any replica runs) and a conditional expression over it stays the same on every
# replica, even while each replica sees different data: no finding.
# syncadvisor-expect-none: TFS201
# result-assert: RESULT["lr"][0] == RESULT["lr"][1] == 0.1 and RESULT["mean"][0] != RESULT["mean"][1]
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])


class Options:
    def __init__(self, lr, warmup):
        self.lr = lr
        self.warmup = warmup


with strategy.scope():
    learning_rate = tf.Variable(0.0, trainable=False)

# replica 0 gets [0, 0], replica 1 gets [10, 10]
dataset = tf.data.Dataset.from_tensor_slices([0.0, 0.0, 10.0, 10.0]).batch(4)


def make_train(options):
    def step_fn(x):
        learning_rate.assign(options.lr * (0.5 if options.warmup else 1.0))
        return tf.reduce_mean(x)  # what this replica saw

    @tf.function
    def train(batch):
        return strategy.run(step_fn, args=(batch,))

    return train


train = make_train(Options(0.1, warmup=False))
for batch in strategy.experimental_distribute_dataset(dataset):
    means = strategy.experimental_local_results(train(batch))

RESULT = {
    "lr": [round(float(copy.numpy()), 6) for copy in learning_rate.values],
    "mean": [float(m.numpy()) for m in means],
}
print(RESULT)
