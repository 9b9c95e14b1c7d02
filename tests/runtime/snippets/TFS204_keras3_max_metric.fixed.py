# claim: gathering the replicas' maxima (`ReplicaContext.all_gather`) before the assign puts the
# global maximum in every copy; with aggregation "only_first_replica" the read is that maximum.
# result-assert: RESULT == 5.0
import keras
import tensorflow as tf

# replica 0 sees [1, 3], replica 1 sees [2, 5]
BATCHES = tf.constant([[1.0, 3.0], [2.0, 5.0]])


class MaxSeen(keras.metrics.Metric):
    def __init__(self, name="max_seen", **kwargs):
        super().__init__(name=name, **kwargs)
        self.max = self.add_variable(shape=(), initializer="zeros", name="max",
                                     aggregation="only_first_replica")

    def update_state(self, values):
        local_max = keras.ops.reshape(keras.ops.max(values), [1])
        replicas_max = tf.distribute.get_replica_context().all_gather(local_max, axis=0)
        self.max.assign(keras.ops.maximum(self.max, keras.ops.max(replicas_max)))

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
