# claim: the fix of TFS104_replicator_mean_int.py: SUM on the int32 counter, which the creator makes ON_READ; it runs.
import contextlib

import tensorflow as tf


def replica_local_creator(next_creator, **kwargs) -> tf.Variable:
    """Variable creator that by default creates replica local variables."""
    if kwargs["synchronization"] == tf.VariableSynchronization.AUTO:
        kwargs["synchronization"] = tf.VariableSynchronization.ON_READ
        if kwargs["aggregation"] == tf.VariableAggregation.NONE:
            kwargs["aggregation"] = tf.VariableAggregation.ONLY_FIRST_REPLICA
        if kwargs["trainable"] is None:
            kwargs["trainable"] = True
    return next_creator(**kwargs)


class Replicator(tf.distribute.MirroredStrategy):
    @contextlib.contextmanager
    def scope(self):
        with contextlib.ExitStack() as stack:
            stack.enter_context(super().scope())
            stack.enter_context(tf.variable_creator_scope(replica_local_creator))
            yield


replicator = Replicator(["/cpu:0", "/cpu:1"])
with replicator.scope():
    steps = tf.Variable(0, aggregation=tf.VariableAggregation.SUM)

print(steps.numpy())
