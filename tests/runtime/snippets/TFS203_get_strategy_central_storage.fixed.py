# claim: without the ON_READ setting the variable behaves the same under CentralStorageStrategy: it
# aggregates on every write, which is what the code gets there anyway.
# result-assert: RESULT["kind"] == "AggregatingVariable" and RESULT["read_in_replica"] == [3.0, 3.0]
import tensorflow as tf


def make_counter():
    strategy = tf.distribute.get_strategy()
    with strategy.scope():
        return tf.Variable(0.0, trainable=False,
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
