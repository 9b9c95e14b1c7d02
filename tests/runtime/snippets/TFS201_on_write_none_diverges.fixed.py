# claim: with `aggregation=MEAN` the replica updates are averaged and both copies stay equal.
# result-assert: RESULT["copies"] == [0.5, 0.5] and RESULT["read"] == 0.5
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

with strategy.scope():
    # running mean of the input feature, like a normalization layer's moving mean
    feature_mean = tf.Variable(0.0, trainable=False, name="feature_mean", aggregation=tf.VariableAggregation.MEAN)

# replica 0 gets [0, 0], replica 1 gets [10, 10]
dataset = tf.data.Dataset.from_tensor_slices([0.0, 0.0, 10.0, 10.0]).batch(4)


@tf.function
def update_statistics(batch):
    def step_fn(x):
        feature_mean.assign(0.9 * feature_mean + 0.1 * tf.reduce_mean(x))

    strategy.run(step_fn, args=(batch,))


for batch in strategy.experimental_distribute_dataset(dataset):
    update_statistics(batch)

RESULT = {
    "copies": [copy.numpy() for copy in feature_mean.values],
    "read": feature_mean.numpy(),
}
print(RESULT)
