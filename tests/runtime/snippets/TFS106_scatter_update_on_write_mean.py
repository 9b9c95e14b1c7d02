# claim: on an ON_WRITE (mirrored) variable with SUM/MEAN aggregation, `scatter_update`/`scatter_min`/
# `scatter_max` raise NotImplementedError (in any context); `scatter_add`/`scatter_sub`/`scatter_mul`/
# `scatter_div` do not (see TFS106_scatter_add_on_write_sum_ok.py).
# syncadvisor-expect: TFS106 error 20
# tensorflow-raises: NotImplementedError: scatter_update is only supported for mirrored variable
# without-strategy: clean
import tensorflow as tf

NUM_ITEMS = 6
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

with strategy.scope():
    last_seen_epoch = tf.Variable(
        tf.zeros([NUM_ITEMS]),
        trainable=False,
        aggregation=tf.VariableAggregation.MEAN,
    )

for epoch, seen_ids in enumerate([[0, 1], [1, 4]], start=1):
    last_seen_epoch.scatter_update(tf.IndexedSlices(tf.fill([len(seen_ids)], float(epoch)), tf.constant(seen_ids)))

print("last seen:", last_seen_epoch.numpy())
