# claim: tf_keras wraps `Metric.result()` in `merge_call`: in replica context every replica gets the
# result of all replicas' updates, so a NONE-aggregation variable assigned it stays the same on
# every replica under MirroredStrategy while the replicas count different data: no finding.
# syncadvisor-expect-none: TFS201
# result-assert: RESULT["last"] == [22.0, 22.0]
import tensorflow as tf
import tf_keras

# replica 0 gets [1, 1], replica 1 gets [10, 10]
BATCHES = tf.constant([[1.0, 1.0], [10.0, 10.0]])


class Tracker(tf_keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.total = tf_keras.metrics.Sum()
        self.last = self.add_weight(name="last", shape=(), initializer="zeros", trainable=False)

    def call(self, inputs):
        self.total.update_state(tf.reduce_sum(inputs))
        self.last.assign(self.total.result())
        return inputs


strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"],
                                          cross_device_ops=tf.distribute.ReductionToOneDevice())
with strategy.scope():
    tracker = Tracker()


@tf.function
def step(values):
    strategy.run(tracker, args=(values,))


step(strategy.experimental_distribute_values_from_function(
    lambda context: BATCHES[context.replica_id_in_sync_group]))
RESULT = {"last": [float(copy.numpy()) for copy in tracker.last.values]}
print(RESULT)
