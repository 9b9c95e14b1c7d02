# claim: a NONE-aggregation weight assigned in `Layer.call` a table computed from the padded length
# of the batch (axis 1 of its shape, as transformers' sinusoidal positions do) stays the same on
# every replica under MirroredStrategy when the global batch is split between replicas by
# `experimental_distribute_dataset` (as Keras `fit` does), the uneven last batch included: every
# replica's share has the global batch's length, only its size on axis 0 differs. No finding.
# syncadvisor-expect-none: TFS201
# result-assert: all(lengths[0] == lengths[1] and equal for lengths, sizes, equal in RESULT["steps"])
# result-assert: RESULT["steps"][-1][1] == [2, 1]
import tensorflow as tf
import keras

LENGTHS = [3, 7, 5, 2, 9, 4, 6]  # 7 sequences: padded global batches of 4, then an uneven 3


def shape_list(tensor):
    """transformers' helper: the static dimensions where known, else the dynamic ones."""
    dynamic = tf.shape(tensor)
    return [dynamic[i] if size is None else size for i, size in enumerate(tensor.shape.as_list())]


def positions(n):
    return tf.cast(tf.range(16) % n, tf.float32)


class PositionTable(keras.layers.Layer):
    def build(self, input_shape):
        self.table = self.add_weight(shape=(16,), initializer="zeros", trainable=False)

    def call(self, ids):
        bsz, seq_len = shape_list(ids)
        self.table.assign(positions(seq_len + 2))
        return tf.shape(ids)  # (the shapes tf.function traced can be Python ints: a tensor)


strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"],
                                          cross_device_ops=tf.distribute.ReductionToOneDevice())
with strategy.scope():
    layer = PositionTable()
    layer.build((None, None))

dataset = tf.data.Dataset.from_generator(lambda: (tf.ones(n, tf.int32) for n in LENGTHS),
                                         output_signature=tf.TensorSpec([None], tf.int32))


@tf.function
def step(ids):
    return strategy.run(layer, args=(ids,))


steps = []
for batch in strategy.experimental_distribute_dataset(dataset.padded_batch(4)):
    shapes = [shape.numpy().tolist() for shape in strategy.experimental_local_results(step(batch))]
    copies = [copy.numpy().tolist() for copy in layer.table.value.values]
    steps.append(([length for _, length in shapes], [size for size, _ in shapes],
                  copies[0] == copies[1]))
RESULT = {"steps": steps}
print(RESULT)
