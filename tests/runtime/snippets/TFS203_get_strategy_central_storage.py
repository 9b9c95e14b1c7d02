# claim: library code that makes its variable under `tf.distribute.get_strategy().scope()` gets
# its caller's strategy: called under a CentralStorageStrategy scope, ON_READ is ignored and the
# variable aggregates on every write -- it is one AggregatingVariable, and a replica reads the sum
# of both replicas' updates (3.0), not its own copy (1.0 and 2.0 under MirroredStrategy).
# syncadvisor-expect: TFS203 info 13
# result-assert: RESULT["kind"] == "AggregatingVariable" and RESULT["read_in_replica"] == [3.0, 3.0]
import tensorflow as tf


def make_counter():
    strategy = tf.distribute.get_strategy()
    with strategy.scope():
        return tf.Variable(0.0, trainable=False, synchronization=tf.VariableSynchronization.ON_READ,
                           aggregation=tf.VariableAggregation.SUM)


central = tf.distribute.experimental.CentralStorageStrategy(["/cpu:0", "/cpu:1"])
with central.scope():
    counter = make_counter()


@tf.function
def step():
    def replica_fn():
        replica = tf.distribute.get_replica_context().replica_id_in_sync_group
        counter.assign_add(tf.cast(replica, tf.float32) + 1.0)  # 1.0 on replica 0, 2.0 on 1
        return counter.read_value()

    return central.run(replica_fn)


reads = central.experimental_local_results(step())
RESULT = {"kind": type(counter).__name__, "read_in_replica": [float(read) for read in reads]}
print(RESULT)
