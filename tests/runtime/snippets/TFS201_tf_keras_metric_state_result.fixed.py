# claim: with the fix (ON_READ + MEAN) each replica keeps its own batch statistic and a
# cross-replica read gives their mean, 1.5.
# result-assert: RESULT["outside"] == 1.5
import tensorflow as tf
import tf_keras

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])


class LastBatchMean(tf_keras.metrics.Metric):
    def __init__(self, name="last_batch_mean"):
        super().__init__(name=name)
        self.last = tf.Variable(0.0, trainable=False, aggregation=tf.VariableAggregation.MEAN, synchronization=tf.VariableSynchronization.ON_READ)

    def update_state(self, x):
        self.last.assign(tf.reduce_mean(x))

    def result(self):
        return tf.identity(self.last)


with strategy.scope():
    metric = LastBatchMean()


def step(x):
    metric.update_state(x)
    return metric.result()


# replica 0 gets [1], replica 1 gets [2]
batches = strategy.experimental_distribute_values_from_function(
    lambda context: tf.constant([float(context.replica_id_in_sync_group + 1)]))
inside = strategy.run(step, args=(batches,))
RESULT = {"inside": [float(t.numpy()) for t in strategy.experimental_local_results(inside)],
          "outside": float(metric.result().numpy()),
          "per_replica": [float(t.numpy()) for t in strategy.experimental_local_results(metric.last)]}
print(RESULT)
