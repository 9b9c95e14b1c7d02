# claim: (negative) a variable creator entered inside the strategy's scope runs before the strategy's
# own: rewriting `synchronization=NONE` into ON_READ there makes the variable valid under
# MirroredStrategy (a SyncOnReadVariable), so TFS101 stays silent.
# syncadvisor-expect-none: TFS101
# result-assert: RESULT == ["SyncOnReadVariable", "ON_READ", "SUM"]
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])


def replica_local(next_creator, **kwargs):
    if kwargs.get("synchronization") == tf.VariableSynchronization.NONE:
        kwargs["synchronization"] = tf.VariableSynchronization.ON_READ
        kwargs["aggregation"] = tf.VariableAggregation.SUM
    return next_creator(**kwargs)


with strategy.scope():
    with tf.variable_creator_scope(replica_local):
        seen = tf.Variable(0.0, trainable=False, synchronization=tf.VariableSynchronization.NONE)

RESULT = [type(seen).__name__, seen.synchronization.name, seen.aggregation.name]
print(RESULT)
