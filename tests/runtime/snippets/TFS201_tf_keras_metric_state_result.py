# claim: a NONE-aggregation variable a tf_keras metric holds, assigned the replica's batch
# statistic in `update_state`, diverges under MirroredStrategy ([1, 2]); tf_keras computes
# `result()` in cross-replica context through `merge_call`, so every replica gets the value
# from replica 0's copy (one value, 1.0), and so does a read outside.
# syncadvisor-expect: TFS201 warning 16
# result-assert: RESULT["per_replica"] == [1.0, 2.0] and RESULT["inside"] == [1.0] and RESULT["outside"] == 1.0
import tensorflow as tf
import tf_keras

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])


class LastBatchMean(tf_keras.metrics.Metric):
    def __init__(self, name="last_batch_mean"):
        super().__init__(name=name)
        self.last = tf.Variable(0.0, trainable=False)

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
