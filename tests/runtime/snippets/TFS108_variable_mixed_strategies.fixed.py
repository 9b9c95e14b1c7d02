# claim: creating the variable under the strategy that runs the update works.
# result-assert: RESULT == 16.0
import tensorflow as tf

train_strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
eval_strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

with eval_strategy.scope():
    eval_loss_sum = tf.Variable(
        0.0,
        trainable=False,
        synchronization=tf.VariableSynchronization.ON_READ,
        aggregation=tf.VariableAggregation.SUM,
    )

dataset = tf.data.Dataset.from_tensor_slices(tf.ones([16])).batch(8)


@tf.function
def eval_step(batch):
    eval_strategy.run(lambda x: eval_loss_sum.assign_add(tf.reduce_sum(x)), args=(batch,))


for batch in eval_strategy.experimental_distribute_dataset(dataset):
    eval_step(batch)
RESULT = eval_loss_sum.numpy()
