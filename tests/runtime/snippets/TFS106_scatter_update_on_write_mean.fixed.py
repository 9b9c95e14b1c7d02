# claim: with ONLY_FIRST_REPLICA (or NONE) aggregation `scatter_update` runs and updates every copy.
# result-assert: RESULT == [[1.0, 2.0, 0.0, 0.0, 2.0, 0.0], [1.0, 2.0, 0.0, 0.0, 2.0, 0.0]]
import tensorflow as tf

NUM_ITEMS = 6
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

with strategy.scope():
    last_seen_epoch = tf.Variable(
        tf.zeros([NUM_ITEMS]),
        trainable=False,
        aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA,
    )

for epoch, seen_ids in enumerate([[0, 1], [1, 4]], start=1):
    last_seen_epoch.scatter_update(tf.IndexedSlices(tf.fill([len(seen_ids)], float(epoch)), tf.constant(seen_ids)))

print("last seen:", last_seen_epoch.numpy())
RESULT = [copy.numpy() for copy in last_seen_epoch.values]
