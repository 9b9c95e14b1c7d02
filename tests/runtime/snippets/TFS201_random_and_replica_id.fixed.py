# claim: with aggregation MEAN the replicas' assigns are averaged: every copy holds the same value.
# result-assert: RESULT["noise"][0] == RESULT["noise"][1] and RESULT["scale"] == [1.5, 1.5]
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    noise = tf.Variable(0.0, trainable=False, aggregation=tf.VariableAggregation.MEAN)
    scale = tf.Variable(0.0, trainable=False, aggregation=tf.VariableAggregation.MEAN)


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
