# claim: the same replica-context update without an aggregation raises under CentralStorageStrategy.
# syncadvisor-expect: TFS201 error 10
# tensorflow-raises: ValueError: You must specify an aggregation method to update a AggregatingVariable in Replica Context
# without-strategy: clean
import tensorflow as tf

strategy = tf.distribute.experimental.CentralStorageStrategy(["/cpu:0", "/cpu:1"])

with strategy.scope():
    feature_mean = tf.Variable(0.0, trainable=False, name="feature_mean")

dataset = tf.data.Dataset.from_tensor_slices([0.0, 0.0, 10.0, 10.0]).batch(4)


@tf.function
def update_statistics(batch):
    def step_fn(x):
        feature_mean.assign(0.9 * feature_mean + 0.1 * tf.reduce_mean(x))

    strategy.run(step_fn, args=(batch,))


for batch in strategy.experimental_distribute_dataset(dataset):
    update_statistics(batch)
print("feature mean:", feature_mean.numpy())
