"""transformers 4.26.1, TFSpeech2TextSinusoidalPositionalEmbedding (TFS201 at
modeling_tf_speech_to_text.py:202): the value assigned is a sinusoidal table whose size is a
function of the padded sequence length (axis 1 of `input_ids`) only. Does that length differ
between replicas when a padded global batch is distributed as Keras fit and TFTrainer do it
(`experimental_distribute_dataset`), the uneven last batch included? A stand-in layer with the
same update (the transformers import needs packages this environment lacks), under tf_keras.
"""

import os

os.environ["TF_USE_LEGACY_KERAS"] = "1"
from common import trial, two_cpus  # noqa: E402

strategy = two_cpus()
import tensorflow as tf  # noqa: E402

LENGTHS = [3, 7, 5, 2, 9, 4, 6]  # 7 sequences: global batches of 4 and an uneven last one of 3


def table(n):  # what _get_embedding(n, dim) computes, reduced to its dependence on n
    return tf.cast(tf.range(16) % n, tf.float32)


with strategy.scope():
    emb = tf.Variable(tf.zeros(16), trainable=False)  # aggregation NONE, as add_weight gives

ds = tf.data.Dataset.from_generator(lambda: (tf.ones(n, tf.int32) for n in LENGTHS),
                                    output_signature=tf.TensorSpec([None], tf.int32))
dist = strategy.experimental_distribute_dataset(ds.padded_batch(4))


@tf.function
def step(ids):
    seq_len = tf.shape(ids)[1]
    emb.assign(table(seq_len + 2))
    return seq_len


rows = []
for batch in dist:
    lens = strategy.experimental_local_results(strategy.run(step, args=(batch,)))
    copies = [v.numpy().tolist() for v in strategy.experimental_local_results(emb)]
    rows.append(([int(x) for x in lens], copies[0] == copies[1]))
trial("per-replica padded lengths, and whether the copies are equal, per step", lambda: rows)
