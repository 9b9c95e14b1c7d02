# claim: the same update inside `strategy.run` (replica context) runs and sums correctly.
# result-assert: RESULT == 16.0
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


@tf.function
def eval_step(batch):
    strategy.run(lambda x: eval_loss_sum.assign_add(tf.reduce_sum(x)), args=(batch,))


for batch in strategy.experimental_distribute_dataset(dataset):
    eval_step(batch)

print("eval loss sum:", eval_loss_sum.numpy())
RESULT = eval_loss_sum.numpy()
