# claim: without the argument (AUTO), the creator leaves it alone and the strategy mirrors it.
# result-assert: RESULT == "MirroredVariable"
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
            0.0, trainable=False)

print(seen.numpy())
RESULT = type(seen).__name__
