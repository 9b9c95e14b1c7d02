# claim: tf_keras `add_weight(synchronization=ON_READ, trainable=True)` called on a layer instance, not `self`, raises, with any strategy or none.
# syncadvisor-expect: TFS102 error 17
# tensorflow-raises: ValueError: Synchronization value can be set to VariableSynchronization.ON_READ only for non-trainable variables
# without-strategy: raises ValueError: Synchronization value can be set to VariableSynchronization.ON_READ only for non-trainable variables
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
        trainable=True,
        synchronization=tf.VariableSynchronization.ON_READ,
        aggregation=tf.VariableAggregation.SUM,
    )
