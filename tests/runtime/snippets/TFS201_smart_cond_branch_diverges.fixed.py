# claim: with `aggregation=MEAN` the replicas' assigns through the `smart_cond` branch are
# averaged and both copies hold the same value.
# result-assert: RESULT["copies"][0] == RESULT["copies"][1]
import tensorflow as tf
from tensorflow.python.framework import smart_cond as smart_module

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])


class DataInit(tf.Module):
    """A scale set from the batch's spread, as WeightNormalization's `g`."""

    def __init__(self):
        super().__init__()
        self.g = tf.Variable(1.0, trainable=False, name="g",
                             aggregation=tf.VariableAggregation.MEAN)

    def __call__(self, x, training=True):
        def update():
            return self._data_dep_init(x)

        def keep():
            return tf.identity(self.g)

        return smart_module.smart_cond(training, update, keep) * x

    def _data_dep_init(self, x):
        return self.g.assign(self.g / tf.math.reduce_std(x))


with strategy.scope():
    layer = DataInit()

# replica 0 gets [0, 1], replica 1 gets [0, 4]: different spreads
dataset = tf.data.Dataset.from_tensor_slices([0.0, 1.0, 0.0, 4.0]).batch(4)


@tf.function
def train_step(batch):
    def step_fn(x):
        return layer(x)

    strategy.run(step_fn, args=(batch,))


for batch in strategy.experimental_distribute_dataset(dataset):
    train_step(batch)

RESULT = {"copies": [float(copy.numpy()) for copy in layer.g.values]}
print(RESULT)
