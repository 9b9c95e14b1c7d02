# claim: (negative) an OpenNMT-style gradient accumulator: ON_READ variables without an aggregation,
# held by a plain Python object, updated and read (`.value()`) only in replica context. Nothing ever
# reduces them, and a checkpoint of the tf.Module that holds the accumulator does not reach them (a
# plain object is not trackable): it runs clean under MirroredStrategy, and TFS103 stays silent.
# syncadvisor-expect-none: TFS103
# result-assert: RESULT == {"weight": 0.4, "saved": ["model/weight/.ATTRIBUTES/VARIABLE_VALUE"]}
import tempfile

import tensorflow as tf


class GradientAccumulator:
    """Accumulates gradients on each replica, without synchronization."""

    def __init__(self):
        self._gradients = []

    @property
    def gradients(self):
        return list(gradient.value() for gradient in self._gradients)

    def __call__(self, gradients):
        if not self._gradients:
            self._gradients.extend([
                tf.Variable(tf.zeros_like(gradient), trainable=False,
                            synchronization=tf.VariableSynchronization.ON_READ)
                for gradient in gradients
            ])
        for accumulated, gradient in zip(self._gradients, gradients):
            accumulated.assign_add(gradient, read_value=False)


class Model(tf.Module):
    def __init__(self):
        super().__init__()
        self.weight = tf.Variable(1.0, aggregation=tf.VariableAggregation.SUM)
        self.accumulator = GradientAccumulator()


strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    model = Model()

# replica 0's gradient is 1, replica 1's is 2
GRADIENTS = tf.constant([1.0, 2.0])


def accumulate(gradient):
    model.accumulator([gradient])


def apply():
    (accumulated,) = model.accumulator.gradients
    model.weight.assign_sub(0.1 * accumulated)


gradient = strategy.experimental_distribute_values_from_function(
    lambda context: GRADIENTS[context.replica_id_in_sync_group])
strategy.run(accumulate, args=(gradient,))
strategy.run(accumulate, args=(gradient,))
strategy.run(apply)

path = tf.train.Checkpoint(model=model).write(tempfile.mkdtemp() + "/ckpt")
RESULT = {
    "weight": round(float(model.weight.numpy()), 5),
    "saved": sorted(name for name, _ in tf.train.list_variables(path)
                    if name != "_CHECKPOINTABLE_OBJECT_GRAPH"),
}
print(RESULT)
