# claim: a NONE-aggregation variable assigned in replica context a value computed only from another
# variable is the same on every replica only while that variable is: computed from a NONE-aggregation
# variable that each replica writes with its own batch's mean, its copies silently diverge too.
# syncadvisor-expect: TFS201 warning 12
# syncadvisor-expect: TFS201 warning 13
# result-assert: RESULT["mean"] == [0.0, 10.0] and RESULT["doubled"] == [0.0, 20.0]
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

with strategy.scope():
    mean = tf.Variable(0.0, trainable=False)
    doubled = tf.Variable(0.0, trainable=False)

# replica 0 gets [0, 0], replica 1 gets [10, 10]
dataset = tf.data.Dataset.from_tensor_slices([0.0, 0.0, 10.0, 10.0]).batch(4)


@tf.function
def train(batch):
    def step_fn(x):
        mean.assign(tf.reduce_mean(x))
        doubled.assign(mean * 2)

    strategy.run(step_fn, args=(batch,))


for batch in strategy.experimental_distribute_dataset(dataset):
    train(batch)

RESULT = {
    "mean": [float(copy.numpy()) for copy in mean.values],
    "doubled": [float(copy.numpy()) for copy in doubled.values],
}
print(RESULT)
