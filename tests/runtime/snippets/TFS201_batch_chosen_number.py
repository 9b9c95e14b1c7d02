# claim: a NONE-aggregation weight assigned in `Layer.call` a Python number chosen by the replica's
# batch (not by the `training` flag) differs between replicas under MirroredStrategy: the copies
# silently diverge.
# syncadvisor-expect: TFS201 warning 15
# result-assert: RESULT["flag"] == [0.0, 1.0]
import tensorflow as tf
import keras

# replica 0 gets [-1, -1], replica 1 gets [10, 10]
BATCHES = tf.constant([[-1.0, -1.0], [10.0, 10.0]])


class Flag(keras.layers.Layer):
    def build(self, shape):
        self.flag = self.add_weight(shape=(), initializer="zeros", trainable=False)

    def call(self, inputs, training=None):
        mode = 1.0 if keras.ops.sum(inputs) > 0 else 0.0
        self.flag.assign(mode)
        return keras.ops.sum(inputs)


strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"],
                                          cross_device_ops=tf.distribute.ReductionToOneDevice())
with strategy.scope():
    layer = Flag()
    layer.build((2,))


def step(values):  # eagerly: Keras does not convert `call`'s Python `if` for a graph
    return strategy.run(lambda x: layer(x, training=True), args=(values,))


seen = step(strategy.experimental_distribute_values_from_function(
    lambda context: BATCHES[context.replica_id_in_sync_group]))
RESULT = {
    "flag": [float(copy.numpy()) for copy in layer.flag.value.values],
    "seen": [float(s.numpy()) for s in strategy.experimental_local_results(seen)],
}
print(RESULT)
