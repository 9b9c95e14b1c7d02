# claim: `strategy.run(fn, args=(batch, 0.5), kwargs={"decay": 0.9})` hands every replica the same
# Python numbers for `fn`'s parameters, as a direct call `fn(batch, 0.5, decay=0.9)` would: a
# NONE-aggregation variable assigned from them stays the same on every replica under
# MirroredStrategy while the replicas see different data. No finding.
# syncadvisor-expect-none: TFS201
# result-assert: RESULT["scale"] == [1.0, 1.0] and RESULT["decay"] == [0.9, 0.9]
# result-assert: RESULT["seen"][0] != RESULT["seen"][1]
import tensorflow as tf

# replica 0 gets [1, 1], replica 1 gets [10, 10]
BATCHES = tf.constant([[1.0, 1.0], [10.0, 10.0]])

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"],
                                          cross_device_ops=tf.distribute.ReductionToOneDevice())
with strategy.scope():
    scale = tf.Variable(0.0)
    decay = tf.Variable(0.0)


def _step(x, factor, decay_rate=0.5):
    scale.assign(factor * 2.0)
    decay.assign(decay_rate)
    return tf.reduce_sum(x)


@tf.function
def train(batch):
    return strategy.run(_step, args=(batch, 0.5), kwargs={"decay_rate": 0.9})


seen = train(strategy.experimental_distribute_values_from_function(
    lambda context: BATCHES[context.replica_id_in_sync_group]))
RESULT = {"scale": [float(copy.numpy()) for copy in scale.values],
          "decay": [round(float(copy.numpy()), 4) for copy in decay.values],
          "seen": [float(s.numpy()) for s in strategy.experimental_local_results(seen)]}
print(RESULT)
