# claim: a NONE-aggregation variable of a plain object (no checkpoint reaches it), assigned each
# replica's batch mean in replica context and read back only there, into an ON_READ + SUM total,
# holds each replica's own value by design: its copies differ, and the total still reads the sum of
# the replicas' means. Nothing combines the buffer's copies: no finding.
# syncadvisor-expect-none: TFS201
# result-assert: RESULT["last"] == [1.0, 10.0] and RESULT["total"] == 11.0
import tensorflow as tf

# replica 0 gets [1, 1], replica 1 gets [10, 10]
BATCHES = tf.constant([[1.0, 1.0], [10.0, 10.0]])


class Stats:
    def __init__(self):
        self.last = tf.Variable(0.0, trainable=False)
        self.total = tf.Variable(0.0, trainable=False,
                                 synchronization=tf.VariableSynchronization.ON_READ,
                                 aggregation=tf.VariableAggregation.SUM)

    def update(self, x):
        self.last.assign(tf.reduce_mean(x))
        self.total.assign_add(self.last)


strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"],
                                          cross_device_ops=tf.distribute.ReductionToOneDevice())
with strategy.scope():
    stats = Stats()


@tf.function
def step(values):
    strategy.run(stats.update, args=(values,))


step(strategy.experimental_distribute_values_from_function(
    lambda context: BATCHES[context.replica_id_in_sync_group]))
RESULT = {"last": [float(copy.numpy()) for copy in stats.last.values],
          "total": float(stats.total.numpy())}
print(RESULT)
