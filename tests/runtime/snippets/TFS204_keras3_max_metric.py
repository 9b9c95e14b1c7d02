# claim: a Keras 3 Metric's variables are ON_READ + SUM by default (`Metric.add_variable`); assigning it a
# running maximum in replica context leaves each replica's own maximum in its copy, and the
# cross-replica read (`result()`) adds them: replicas whose maxima are 3 and 5 report 8.
# syncadvisor-expect: TFS204 warning 16
# result-assert: RESULT == 8.0
import tensorflow as tf
import keras

# replica 0 sees [1, 3], replica 1 sees [2, 5]
BATCHES = tf.constant([[1.0, 3.0], [2.0, 5.0]])


class MaxSeen(keras.metrics.Metric):
    def __init__(self, name="max_seen", **kwargs):
        super().__init__(name=name, **kwargs)
        self.max = self.add_variable(shape=(), initializer="zeros", name="max")

    def update_state(self, values):
        self.max.assign(keras.ops.maximum(self.max, keras.ops.max(values)))

    def result(self):
        return keras.ops.convert_to_tensor(self.max)


# Reduced on one device, not with collective ops: those take instance keys per process, and the
# harness runs every snippet in one process, after other strategies took them.
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"],
                                          cross_device_ops=tf.distribute.ReductionToOneDevice())
with strategy.scope():
    max_seen = MaxSeen()


@tf.function
def observe(values):
    strategy.run(max_seen.update_state, args=(values,))


observe(strategy.experimental_distribute_values_from_function(
    lambda context: BATCHES[context.replica_id_in_sync_group]))
RESULT = float(max_seen.result().numpy())
print("max seen:", RESULT)
