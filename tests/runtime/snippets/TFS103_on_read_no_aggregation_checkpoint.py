# claim: an ON_READ variable without aggregation makes `tf.train.Checkpoint.write` fail.
# syncadvisor-expect: TFS103 error 13
# tensorflow-raises: ValueError: Could not convert from `tf.VariableAggregation`
# without-strategy: clean
import tempfile

import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

with strategy.scope():
    moving_max = tf.Variable(0.0, trainable=False, synchronization=tf.VariableSynchronization.ON_READ,
                             aggregation=tf.VariableAggregation.NONE)


@tf.function
def observe(values):
    def step_fn(x):
        moving_max.assign(tf.maximum(moving_max, tf.reduce_max(x)))

    strategy.run(step_fn, args=(values,))


observe(tf.constant([1.0, 5.0, 3.0]))
checkpoint = tf.train.Checkpoint(moving_max=moving_max)
checkpoint.write(tempfile.mkdtemp() + "/ckpt")
