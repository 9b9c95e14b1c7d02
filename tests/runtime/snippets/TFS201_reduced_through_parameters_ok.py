# claim: NONE-aggregation weights assigned in private methods and a nested def from their parameters,
# where every call passes a value that is the same on every replica (the batch variance all-reduced
# before `tf.cond`, handed on through two private methods, as tensorflow-addons' WeightNormalization
# once fixed; a literal default), stay the same on every replica under MirroredStrategy while the
# replicas see different data: no finding.
# syncadvisor-expect-none: TFS201
# result-assert: RESULT["g"][0] == RESULT["g"][1] and RESULT["step"] == [0.5, 0.5] and RESULT["seen"][0] != RESULT["seen"][1]
import tensorflow as tf
import tf_keras

# replica 0 gets [[1, 2], [3, 5]], replica 1 gets [[0, 0], [10, 30]]
BATCHES = tf.constant([[[1.0, 2.0], [3.0, 5.0]], [[0.0, 0.0], [10.0, 30.0]]])


class Normalized(tf_keras.layers.Layer):
    def build(self, input_shape):
        self.g = self.add_weight(name="g", shape=(input_shape[-1],), initializer="ones")
        self.step = self.add_weight(name="step", shape=(), initializer="zeros")
        self.initialized = self.add_weight(name="initialized", shape=(), dtype=tf.bool,
                                           initializer="zeros", trainable=False)

    def call(self, inputs):
        _, variance = tf.nn.moments(inputs, [0])
        variance = tf.distribute.get_replica_context().all_reduce(
            tf.distribute.ReduceOp.MEAN, variance)

        def _update_weights():
            with tf.control_dependencies(self._initialize_weights(variance)):
                return tf.identity(self.g)

        g = tf.cond(self.initialized, lambda: tf.identity(self.g), _update_weights)
        with tf.control_dependencies([g]):
            self._advance()
        return tf.reduce_sum(inputs * g)

    def _initialize_weights(self, variance):
        return self._data_dep_init(variance, epsilon=1e-10) + [self.initialized.assign(True)]

    def _data_dep_init(self, variance, epsilon):
        scale_init = 1.0 / tf.sqrt(variance + epsilon)
        return [self.g.assign(self.g * scale_init)]

    def _advance(self, by=1.0):
        def bump(amount):
            return self.step.assign_add(amount)
        return bump(by * 0.5)


strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"],
                                          cross_device_ops=tf.distribute.ReductionToOneDevice())
with strategy.scope():
    layer = Normalized()
    layer.build((None, 2))


@tf.function
def step(values):
    return strategy.run(layer, args=(values,))


seen = step(strategy.experimental_distribute_values_from_function(
    lambda context: BATCHES[context.replica_id_in_sync_group]))
RESULT = {
    "g": [copy.numpy().tolist() for copy in layer.g.values],
    "step": [float(copy.numpy()) for copy in layer.step.values],
    "seen": [float(s.numpy()) for s in strategy.experimental_local_results(seen)],
}
print(RESULT)
