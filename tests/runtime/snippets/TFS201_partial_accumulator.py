# claim: a NONE-aggregation accumulator handed to the step function as an argument, through
# `functools.partial(accumulate, accumulator=grad_sum)` rather than captured by a closure, is
# updated in replica context all the same: under MirroredStrategy its two copies silently diverge.
# syncadvisor-expect: TFS201 warning 13
# result-assert: RESULT["copies"][0] != RESULT["copies"][1]
import functools

import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

with strategy.scope():
    grad_sum = tf.Variable(tf.zeros(2), aggregation=tf.VariableAggregation.NONE)

# replica 0 gets two rows of 1s, replica 1 two rows of 10s
dataset = tf.data.Dataset.from_tensor_slices([[1.0, 1.0], [1.0, 1.0], [10.0, 10.0], [10.0, 10.0]]).batch(4)


def accumulate(batch, accumulator):
    accumulator.assign_add(tf.reduce_sum(batch, axis=0))


@tf.function
def train_step(batch):
    strategy.run(functools.partial(accumulate, accumulator=grad_sum), args=(batch,))


for batch in strategy.experimental_distribute_dataset(dataset):
    train_step(batch)

RESULT = {"copies": [copy.numpy().tolist() for copy in grad_sum.values], "read": grad_sum.numpy().tolist()}
print(RESULT)
