# claim: a variable creator entered outside the strategy's scope runs after the strategy's own, which
# has already refused `synchronization=NONE`: the rewrite into ON_READ comes too late.
# syncadvisor-expect: TFS101 error 20
# tensorflow-raises: ValueError: `NONE` variable synchronization mode is not supported with tf.distribute strategy
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])


def replica_local(next_creator, **kwargs):
    if kwargs.get("synchronization") == tf.VariableSynchronization.NONE:
        kwargs["synchronization"] = tf.VariableSynchronization.ON_READ
        kwargs["aggregation"] = tf.VariableAggregation.SUM
    return next_creator(**kwargs)


with tf.variable_creator_scope(replica_local):
    with strategy.scope():
        seen = tf.Variable(
            0.0, trainable=False, synchronization=tf.VariableSynchronization.NONE)

print(seen.numpy())
