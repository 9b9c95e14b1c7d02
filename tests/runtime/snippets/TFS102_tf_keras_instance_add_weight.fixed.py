# claim: `trainable=False` runs: the instance gets a SyncOnRead weight.
# result-assert: RESULT == ["SyncOnReadVariable", False, True]
import tensorflow as tf
import tf_keras

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    dense = tf_keras.layers.Dense(3)
    dense.build((None, 4))
    # A per-replica statistic added to an existing layer from outside it.
    seen = dense.add_weight(
        name="seen",
        shape=(),
        initializer="zeros",
        trainable=False,
        synchronization=tf.VariableSynchronization.ON_READ,
        aggregation=tf.VariableAggregation.SUM,
    )

RESULT = [type(seen).__name__, seen.trainable, any(w is seen for w in dense.non_trainable_weights)]
