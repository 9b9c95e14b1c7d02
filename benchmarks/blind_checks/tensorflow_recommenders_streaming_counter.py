"""tensorflow-recommenders 0.7.7: TFS201 on `Streaming._counter` (layers/factorized_top_k.py:380),
`assign_add(tf.shape(batch)[0])` in `enumerate_rows`, mapped over `self._candidates` in
`Streaming.call`. The `batch` there is a batch of the candidate dataset given to
`index_from_dataset`, the same dataset on every replica, not the replica's share of the input.

The package requires tf-keras and refuses Keras 3 (its __init__ asks for TF_USE_LEGACY_KERAS=1).
Its FactorizedTopK metric (metrics/factorized_top_k.py) wraps a candidate dataset in Streaming,
so Streaming.call runs in replica context whenever a retrieval model is fit or evaluated under a
strategy.
"""

import os

os.environ["TF_USE_LEGACY_KERAS"] = "1"
from common import project, trial, two_cpus  # noqa: E402

project("tensorflow-recommenders-0.7.7")
strategy = two_cpus()
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow_recommenders.layers.factorized_top_k import Streaming  # noqa: E402
from tensorflow_recommenders.metrics import FactorizedTopK  # noqa: E402

local = strategy.experimental_local_results
rng = np.random.default_rng(0)
cand = rng.normal(size=(10, 3)).astype("float32")   # 10 candidates, batches of 4, 4, 2
queries = rng.normal(size=(4, 3)).astype("float32")  # 2 queries per replica
candidates = tf.data.Dataset.from_tensor_slices(cand).batch(4)

ref = Streaming(k=3).index_from_dataset(candidates)
ref_scores, ref_ids = ref(queries)
print("no strategy: top-3 ids per query", ref_ids.numpy().tolist(), "counter", int(ref._counter))

with strategy.scope():
    layer = Streaming(k=3).index_from_dataset(candidates)
print("_counter is", type(layer._counter).__name__, layer._counter.aggregation)
dist = strategy.experimental_distribute_values_from_function(
    lambda ctx: queries[2 * ctx.replica_id_in_sync_group:2 * ctx.replica_id_in_sync_group + 2])


@tf.function
def step(q):
    return strategy.run(lambda x: layer(x)[1], args=(q,))


trial("top-3 ids per query under MirroredStrategy (replica 0's queries, replica 1's)",
      lambda: [t.numpy().tolist() for t in local(step(dist))])
trial("_counter per replica after one call", lambda: [int(v) for v in local(layer._counter)])
trial("_counter read in cross-replica context", lambda: int(layer._counter.numpy()))

# The package's own path: FactorizedTopK given a candidate dataset wraps it in Streaming.
with strategy.scope():
    metric = FactorizedTopK(candidates=candidates, ks=(1, 3))


@tf.function
def metric_step(q, t):
    strategy.run(lambda x, y: metric.update_state(x, y), args=(q, t))


top1 = ref_ids.numpy()[:, 0]
true_cand = strategy.experimental_distribute_values_from_function(
    lambda ctx: cand[top1[2 * ctx.replica_id_in_sync_group:2 * ctx.replica_id_in_sync_group + 2]])


def accuracies(m):
    return {t.name.split("/")[-1]: float(t.result()) for t in m._top_k_metrics}


trial("FactorizedTopK.update_state under MirroredStrategy (true candidate = each query's top-1)",
      lambda: [metric_step(dist, true_cand), accuracies(metric)][1])
trial("its Streaming _counter per replica",
      lambda: [int(v) for v in local(metric._candidates._counter)])
plain = FactorizedTopK(candidates=candidates, ks=(1, 3))
plain.update_state(queries, cand[ref_ids.numpy()[:, 0]])
print("the same metric without a strategy:", accuracies(plain))

# The message's other clause: CentralStorageStrategy (variables are AggregatingVariables).
central = tf.distribute.experimental.CentralStorageStrategy(
    ["/cpu:0", "/cpu:1"], parameter_device="/cpu:0")
with central.scope():
    clayer = Streaming(k=3).index_from_dataset(candidates)
cdist = central.experimental_distribute_values_from_function(
    lambda ctx: queries[2 * ctx.replica_id_in_sync_group:2 * ctx.replica_id_in_sync_group + 2])
try:
    central.run(tf.function(lambda x: clayer(x)[1]), args=(cdist,))
    print("[OK]  Streaming under CentralStorageStrategy: ran")
except Exception as e:  # noqa: BLE001
    msg = " ".join(str(e).split())
    at = [m for m in msg.split("File ") if "factorized_top_k.py" in m]
    print(f"[ERR] Streaming under CentralStorageStrategy: {type(e).__name__} at "
          f"{at[-1].split('/')[-1][:60] if at else '?'}: {msg[msg.find('You must'):][:110]}")
