# claim: `assign_add` on an ON_READ + SUM variable outside `strategy.run` (cross-replica context) raises.
# syncadvisor-expect: TFS105 error 19
# tensorflow-raises: ValueError: SyncOnReadVariable does not support `assign_add` in cross-replica context when aggregation is set to `tf.VariableAggregation.SUM`
# without-strategy: clean
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

with strategy.scope():
    eval_loss_sum = tf.Variable(
        0.0,
        trainable=False,
        synchronization=tf.VariableSynchronization.ON_READ,
        aggregation=tf.VariableAggregation.SUM,
    )

dataset = tf.data.Dataset.from_tensor_slices(tf.ones([16])).batch(8)
for batch in dataset:
    eval_loss_sum.assign_add(tf.reduce_sum(batch))

print("eval loss sum:", eval_loss_sum.numpy())
