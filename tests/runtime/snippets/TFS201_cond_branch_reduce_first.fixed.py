# claim: with the batch's spread reduced across replicas before the `tf.cond` (an all-reduce
# outside the branch), every replica assigns the same value and both copies agree.
# result-assert: RESULT["copies"][0] == RESULT["copies"][1]
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(
    ["/cpu:0", "/cpu:1"], cross_device_ops=tf.distribute.ReductionToOneDevice())
with strategy.scope():
    scale = tf.Variable(1.0, trainable=False)
    ready = tf.Variable(False, trainable=False)


@tf.function
def train_step(batch):
    def step_fn(x):
        context = tf.distribute.get_replica_context()
        spread = context.all_reduce(tf.distribute.ReduceOp.MEAN, tf.math.reduce_std(x))

        def initialise():
            scale.assign(1.0 / spread)
            return tf.identity(scale)

        return tf.cond(ready, lambda: tf.identity(scale), initialise)

    strategy.run(step_fn, args=(batch,))


dataset = tf.data.Dataset.from_tensor_slices([0.0, 1.0, 0.0, 4.0]).batch(4)
for batch in strategy.experimental_distribute_dataset(dataset):
    train_step(batch)

RESULT = {"copies": [float(copy.numpy()) for copy in scale.values]}
print(RESULT)
