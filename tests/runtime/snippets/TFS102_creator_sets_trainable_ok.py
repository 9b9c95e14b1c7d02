# claim: a variable creator that sets `trainable` to a literal decides the variable's: an ON_READ
# `tf.Variable(..., trainable=True)` made under a creator that sets `trainable=False` is not
# trainable (no finding), and one left without `trainable` under a creator that sets True where
# it was left out (sonnet's replica-local creator does) is trainable.
# syncadvisor-expect-none: TFS102
# result-assert: RESULT == {"frozen": False, "thawed": True, "plain": False}
import tensorflow as tf


def frozen(next_creator, **kwargs):
    kwargs["trainable"] = False
    return next_creator(**kwargs)


def thawed(next_creator, **kwargs):
    if kwargs["trainable"] is None:
        kwargs["trainable"] = True
    return next_creator(**kwargs)


strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    with tf.variable_creator_scope(frozen):
        statistic = tf.Variable(0.0, trainable=True,
                                synchronization=tf.VariableSynchronization.ON_READ,
                                aggregation=tf.VariableAggregation.SUM)
    with tf.variable_creator_scope(thawed):
        total = tf.Variable(0.0, trainable=False,
                            synchronization=tf.VariableSynchronization.ON_READ,
                            aggregation=tf.VariableAggregation.SUM)
        made_trainable = tf.Variable(0.0)
    plain = tf.Variable(0.0, synchronization=tf.VariableSynchronization.ON_READ,
                        aggregation=tf.VariableAggregation.SUM)

RESULT = {"frozen": statistic.trainable, "thawed": made_trainable.trainable,
          "plain": plain.trainable}
print(RESULT, total.trainable)
