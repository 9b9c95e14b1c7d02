# claim: the enum members (3 -> ON_READ, 1 -> SUM) run under MirroredStrategy.
# result-assert: RESULT == ["SyncOnReadVariable", "ON_READ", "SUM"]
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

with strategy.scope():
    total_loss = tf.Variable(0.0,
                             synchronization=tf.VariableSynchronization.ON_READ,
                             aggregation=tf.VariableAggregation.SUM,
                             trainable=False)

print(total_loss.numpy())
RESULT = [type(total_loss).__name__, total_loss.synchronization.name, total_loss.aggregation.name]
