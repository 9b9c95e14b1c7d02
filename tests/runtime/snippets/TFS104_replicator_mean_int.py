# claim: under a strategy subclass whose scope enters sonnet's replica-local creator (dm-sonnet
# 2.0.2's `snt.distribute.Replicator`, copied verbatim), an AUTO variable becomes ON_READ but keeps
# the aggregation it asked for: MEAN on an int32 variable still raises at creation.
# syncadvisor-expect: TFS104 error 33
# tensorflow-raises: ValueError: creating distributed tf.Variable with aggregation=MEAN and a non-floating dtype is not supported
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
    steps = tf.Variable(0, aggregation=tf.VariableAggregation.MEAN)

print(steps.numpy())
