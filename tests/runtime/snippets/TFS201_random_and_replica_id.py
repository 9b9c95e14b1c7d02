# claim: NONE-aggregation variables assigned in replica context a random op's result, or a value
# computed from the replica's id, differ between replicas under MirroredStrategy even when every
# replica is handed the same data: the copies silently diverge.
# syncadvisor-expect: TFS201 warning 11
# syncadvisor-expect: TFS201 warning 12
# result-assert: RESULT["noise"][0] != RESULT["noise"][1] and RESULT["scale"] == [1.0, 2.0]
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    noise = tf.Variable(0.0, trainable=False)
    scale = tf.Variable(0.0, trainable=False)


@tf.function
def step():
    def step_fn():
        noise.assign(tf.random.normal([]))
        replica = tf.distribute.get_replica_context().replica_id_in_sync_group
        scale.assign(tf.cast(replica + 1, tf.float32))

    strategy.run(step_fn)


step()
RESULT = {
    "noise": [float(copy.numpy()) for copy in noise.values],
    "scale": [float(copy.numpy()) for copy in scale.values],
}
print(RESULT)
