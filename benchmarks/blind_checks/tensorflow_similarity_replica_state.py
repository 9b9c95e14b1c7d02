"""tensorflow-similarity 0.17.1: TFS201 on XBM's memory (`var = tf.Variable(` in
losses/xbm_loss.py, assigned in XBM.call under tf.cond), TFS302 on `XBM._total_steps`
(assign_add(1), NONE), and TFS201 on `DistanceGapMetric.gap` (training_metrics/distance_metrics.py).

The package declares tensorflow>=2.7,<=2.11 (extras), so tf.keras is Keras 2: tf_keras 2.21 stands
in (TF_USE_LEGACY_KERAS=1). The package's top __init__ imports its whole tree (indexers, nmslib,
visualization, ...), so `tensorflow_similarity` is made an empty package over the wheel's folder
and only `losses` and `training_metrics` are imported (tqdm and tensorflow_datasets, used only by
the samplers that training_metrics/__init__ pulls in, are stubbed): the classes are the wheel's own
code, unchanged.
"""

import os
import re
import sys
import types

os.environ["TF_USE_LEGACY_KERAS"] = "1"
from common import project, stub, trial, two_cpus  # noqa: E402

root = project("tensorflow-similarity-0.17.1")
pkg = types.ModuleType("tensorflow_similarity")
pkg.__path__ = [str(root / "tensorflow_similarity")]
sys.modules["tensorflow_similarity"] = pkg
stub("tqdm", "tqdm.auto", "tensorflow_datasets")  # samplers pulled in by training_metrics; unused
strategy = two_cpus()
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow_similarity.losses import XBM, MultiSimilarityLoss, xbm_loss  # noqa: E402
from tensorflow_similarity.training_metrics import DistanceGapMetric  # noqa: E402

print("tf.keras.Model is", tf.keras.Model.__module__)
local = strategy.experimental_local_results
TMP = os.environ.get("TMPDIR", "/tmp")
SUM = tf.keras.losses.Reduction.SUM  # a loss called by hand under a strategy must not use AUTO


def trial_end(label, fn):
    """common.trial, printing where in xbm_loss.py and the gist (TF puts 'in user code' first)."""
    try:
        print(f"[OK]  {label}: {fn()}", flush=True)
    except Exception as e:  # noqa: BLE001
        msg = " ".join(str(e).split())
        where = re.findall(r"(xbm_loss\.py\", line \d+)", msg)
        start = re.search(r"(You must specify[^.]*|merge_call[^.]*|You must feed[^.]*)", msg)
        nodes = sorted(set(re.findall(r"XBM/Variable[\w/]*", msg)))
        print(f"[ERR] {label}: {type(e).__name__} at {where[-1:] or nodes or '?'}: "
              f"{start.group(1)[:200] if start else ''} ... {msg[-160:]}", flush=True)


def per_replica(var, fn=lambda v: v.numpy().ravel().tolist()):
    return [fn(v) for v in local(var)]


def new_xbm():
    return XBM(MultiSimilarityLoss(reduction=SUM), memory_size=16, warmup_steps=0, reduction=SUM)


rng = np.random.default_rng(0)
# a global batch of 8: 4 per replica, 2 classes per replica
labels = np.array([0, 0, 1, 1, 2, 2, 3, 3], "int32")
emb = rng.normal(size=(8, 4)).astype("float32")
emb /= np.linalg.norm(emb, axis=1, keepdims=True)


def shard(ctx, *arrays):
    i = ctx.replica_id_in_sync_group
    return tuple(a[4 * i:4 * i + 4] for a in arrays)


dist = strategy.experimental_distribute_values_from_function(lambda ctx: shard(ctx, labels, emb))

# --- XBM: memory variables and the step counter -----------------------------------------------
print("\n== XBM under MirroredStrategy (loss made in strategy.scope(), called in strategy.run) ==")
with strategy.scope():
    xbm = new_xbm()
print("_total_steps is", type(xbm._total_steps).__name__, xbm._total_steps.aggregation)
step = tf.function(lambda b: xbm(b[0][:, None], b[1]))
for _ in range(2):
    strategy.run(step, args=(dist,))
print("memory is", type(xbm._y_pred_memory).__name__, xbm._y_pred_memory.aggregation)
trial("_y_true_memory per replica after 2 steps", lambda: per_replica(xbm._y_true_memory))
trial("_y_pred_memory[:, 0] per replica",
      lambda: per_replica(xbm._y_pred_memory, lambda v: np.round(v.numpy()[:, 0], 2).tolist()))
trial("_y_true_memory read in cross-replica context",
      lambda: xbm._y_true_memory.numpy().ravel().tolist())
trial("_total_steps per replica", lambda: per_replica(xbm._total_steps, int))

with strategy.scope():
    xbm_outer = new_xbm()
outer_step = tf.function(
    lambda d: strategy.run(lambda b: xbm_outer(b[0][:, None], b[1]), args=(d,)))
trial_end("a fresh XBM, 2 steps as tf.function(lambda: strategy.run(...)) (a custom loop's shape)",
          lambda: [outer_step(dist), outer_step(dist)] and "ran")
trial("  its _y_true_memory per replica", lambda: per_replica(xbm_outer._y_true_memory))

print("\n== XBM in Model.fit (the package's usage: compile(loss=XBM(...))) ==")


def memory_after_fit(scope):
    with scope:
        model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(4)])
        loss = XBM(MultiSimilarityLoss(), memory_size=16, warmup_steps=0)
        model.compile("sgd", loss=loss)
    model.fit(emb, labels[:, None], batch_size=8, epochs=2, verbose=0, shuffle=False)
    ckpt = tf.train.Checkpoint(model=model).write(os.path.join(TMP, "similarity_ckpt"))
    names = [k.split("/.ATTRIBUTES")[0] for k, _ in tf.train.list_variables(ckpt)
             if "OBJECT_GRAPH" not in k]
    memory = loss._y_true_memory
    return {"y_true_memory": per_replica(memory) if hasattr(memory, "values")
            else memory.numpy().ravel().tolist(), "model checkpoint": names}


def fit_without_xbm():
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(4)])
        model.compile("sgd", loss=MultiSimilarityLoss())
    return model.fit(emb, labels[:, None], batch_size=8, epochs=2, verbose=0).history


trial("control: fit under MirroredStrategy with MultiSimilarityLoss, no XBM", fit_without_xbm)
trial("fit without a strategy", lambda: memory_after_fit(tf.distribute.get_strategy().scope()))
trial_end("fit under MirroredStrategy", lambda: memory_after_fit(strategy.scope()))

print("\n== XBM under CentralStorageStrategy (TFS302's and TFS201's raising clause) ==")
central = tf.distribute.experimental.CentralStorageStrategy(
    ["/cpu:0", "/cpu:1"], parameter_device="/cpu:0")
cdist = central.experimental_distribute_values_from_function(lambda ctx: shard(ctx, labels, emb))
with central.scope():
    cxbm = new_xbm()
print("_total_steps is", type(cxbm._total_steps).__name__)
trial_end("XBM step under CentralStorageStrategy",
          lambda: central.run(tf.function(lambda b: cxbm(b[0][:, None], b[1])), args=(cdist,)))

with central.scope():
    cxbm2 = new_xbm()
    # TFS302's advice applied: the counter made as Keras makes optimizer.iterations
    cxbm2._total_steps = tf.Variable(0, dtype=tf.int64, trainable=False,
                                     aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)
trial_end("the same with _total_steps ONLY_FIRST_REPLICA (TFS302's advice)",
          lambda: central.run(tf.function(lambda b: cxbm2(b[0][:, None], b[1])), args=(cdist,)))

print("\n== TFS201's 'an aggregation is no fix here' (memory made with an aggregation) ==")


def _memory_first_replica(tensor):
    """_add_memory_variable with an aggregation (the labels are int: MEAN is refused for them)."""
    return tf.Variable(tf.constant([], shape=[0, *tensor.shape[1:]], dtype=tensor.dtype),
                       shape=[None, *tensor.shape[1:]], dtype=tensor.dtype, trainable=False,
                       aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)


xbm_loss._add_memory_variable = _memory_first_replica
with strategy.scope():
    mxbm = new_xbm()
trial_end("XBM step with ONLY_FIRST_REPLICA memory under MirroredStrategy",
          lambda: strategy.run(tf.function(lambda b: mxbm(b[0][:, None], b[1])), args=(dist,)))

# --- DistanceGapMetric ---------------------------------------------------------------------------
print("\n== DistanceGapMetric under MirroredStrategy ==")
one = DistanceGapMetric("cosine")
one.update_state(labels, emb, None)
for i in (0, 1):
    m = DistanceGapMetric("cosine")
    m.update_state(labels[4 * i:4 * i + 4], emb[4 * i:4 * i + 4], None)
    print(f"no strategy: gap of replica {i}'s 4 samples = {float(m.result()):.4f}")
print(f"no strategy: gap of the global batch of 8 = {float(one.result()):.4f}")
with strategy.scope():
    gm = DistanceGapMetric("cosine")
print("gap is", type(gm.gap).__name__, gm.gap.aggregation)


@tf.function
def gap_step(b):
    gm.update_state(b[0], b[1], None)


strategy.run(gap_step, args=(dist,))
trial("update_state in strategy.run: gap per replica",
      lambda: per_replica(gm.gap, lambda v: round(float(v), 4)))
trial("result() in cross-replica context", lambda: round(float(gm.result()), 4))

print("\n== DistanceGapMetric in Model.evaluate under MirroredStrategy (compile(metrics=[...])) ==")
with strategy.scope():
    ident = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Lambda(lambda x: x)])
    fm = DistanceGapMetric("cosine")
    ident.compile("sgd", loss=lambda y, p: tf.reduce_sum(p) * 0.0, metrics=[fm])
trial("evaluate on the global batch of 8: dist_gap",
      lambda: round(ident.evaluate(emb, labels, batch_size=8, verbose=0,
                                   return_dict=True)["dist_gap"], 4))
trial("gap per replica after evaluate", lambda: per_replica(fm.gap, lambda v: round(float(v), 4)))
