# claim: a NONE-aggregation variable assigned only inside a `tf.cond` branch (data-dependent
# initialisation, as tensorflow-addons' WeightNormalization does) runs in the replica context
# of `strategy.run`: each replica assigns the spread of its own batch and the two copies
# silently diverge. No aggregation can fix it there (its merge_call raises inside the
# branch: tests/runtime/test_control_flow.py); the fix reduces the value before the branch.
# syncadvisor-expect: TFS201 warning 13
# result-assert: RESULT["copies"][0] != RESULT["copies"][1]
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(
    ["/cpu:0", "/cpu:1"], cross_device_ops=tf.distribute.ReductionToOneDevice())
with strategy.scope():
    scale = tf.Variable(1.0, trainable=False)
    ready = tf.Variable(False, trainable=False)


def initialise(x):
    scale.assign(1.0 / tf.math.reduce_std(x))
    return tf.identity(scale)


@tf.function
def train_step(batch):
    def step_fn(x):
        return tf.cond(ready, lambda: tf.identity(scale), lambda: initialise(x))

    strategy.run(step_fn, args=(batch,))


# replica 0 gets [0, 1], replica 1 gets [0, 4]: different spreads
dataset = tf.data.Dataset.from_tensor_slices([0.0, 1.0, 0.0, 4.0]).batch(4)
for batch in strategy.experimental_distribute_dataset(dataset):
    train_step(batch)

RESULT = {"copies": [float(copy.numpy()) for copy in scale.values]}
print(RESULT)
