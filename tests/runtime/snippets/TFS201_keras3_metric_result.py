# claim: a Keras 3 metric keeps each replica's own state, and its `result()` in replica context
# reads the replica's own: a NONE-aggregation weight assigned it differs between replicas under
# MirroredStrategy (unlike tf_keras, whose `result()` goes through `merge_call`): the copies
# silently diverge.
# syncadvisor-expect: TFS201 warning 16
# result-assert: RESULT["last"] == [2.0, 20.0]
import tensorflow as tf
import keras

# replica 0 gets [1, 1], replica 1 gets [10, 10]
BATCHES = tf.constant([[1.0, 1.0], [10.0, 10.0]])


class Tracker(keras.layers.Layer):
    def build(self, shape):
        self.last = self.add_weight(shape=(), initializer="zeros", trainable=False)
        self.total = keras.metrics.Sum()

    def call(self, inputs):
        self.total.update_state(keras.ops.sum(inputs))
        self.last.assign(self.total.result())
        return inputs


strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"],
                                          cross_device_ops=tf.distribute.ReductionToOneDevice())
with strategy.scope():
    tracker = Tracker()
    tracker.build((2,))


@tf.function
def step(values):
    strategy.run(tracker, args=(values,))


step(strategy.experimental_distribute_values_from_function(
    lambda context: BATCHES[context.replica_id_in_sync_group]))
RESULT = {"last": [float(copy.numpy()) for copy in tracker.last.value.values]}
print(RESULT)
