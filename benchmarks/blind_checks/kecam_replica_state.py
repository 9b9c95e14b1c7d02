"""keras-cv-attention-models 1.4.3: TFS201 on `class_acc` (coco/tf_losses.py) and `KVCache.cache`
(llama2/llama2.py). The package sets TF_USE_LEGACY_KERAS=1 itself on TF >= 2.16 (backend.py), so
tf.keras is tf_keras here. Each replica gets a different batch; the question is whether the copies
of the NONE-aggregation variable diverge, and what a cross-replica read and the package's own
metric wrapper (ClassAccuracyWithBboxWrapper, which reads `loss.class_acc` in update_state) see.
"""

import os

os.environ["TF_USE_LEGACY_KERAS"] = "1"
from common import project, stub, trial, two_cpus  # noqa: E402

project("keras-cv-attention-models-1.4.3")
stub("tqdm", "tqdm.auto", "ftfy", "regex")
strategy = two_cpus()
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from keras_cv_attention_models.coco import tf_losses  # noqa: E402
from keras_cv_attention_models.llama2.llama2 import KVCache  # noqa: E402

print("tf.keras.losses.Loss is", tf.keras.losses.Loss.__module__)
local = strategy.experimental_local_results

# --- FocalLossWithBbox.class_acc -------------------------------------------------------------
# 1 anchor per sample, 2 classes. y_true = [bbox(4), one-hot(2), anchor_mark];
# y_pred = [bbox(4), probs(2)].
# Replica 0's two samples are both classified right (acc 1.0), replica 1's one of two (acc 0.5).
y_true = np.array([[[0, 0, 1, 1, 1, 0, 1]], [[0, 0, 1, 1, 0, 1, 1]],
                   [[0, 0, 1, 1, 1, 0, 1]], [[0, 0, 1, 1, 0, 1, 1]]], "float32")
y_pred = np.array([[[0, 0, 1, 1, .9, .1]], [[0, 0, 1, 1, .1, .9]],
                   [[0, 0, 1, 1, .9, .1]], [[0, 0, 1, 1, .9, .1]]], "float32")
with strategy.scope():
    # SUM: a loss called by hand under a strategy must not use AUTO (compile() would allow it)
    loss = tf_losses.FocalLossWithBbox(reduction=tf.keras.losses.Reduction.SUM)
    metric = tf_losses.ClassAccuracyWithBboxWrapper(loss)
print("class_acc is", type(loss.class_acc).__name__, loss.class_acc.aggregation)
dist = strategy.experimental_distribute_values_from_function(
    lambda ctx: (y_true[2 * ctx.replica_id_in_sync_group:2 * ctx.replica_id_in_sync_group + 2],
                 y_pred[2 * ctx.replica_id_in_sync_group:2 * ctx.replica_id_in_sync_group + 2]))


@tf.function
def step(batch):
    yt, yp = batch
    out = loss(yt, yp)
    metric.update_state(yt, yp)
    return out


strategy.run(step, args=(dist,))
print()  # after the loss's own tf.print
trial("class_acc per replica after one step", lambda: [float(v) for v in local(loss.class_acc)])
trial("class_acc read in cross-replica context", lambda: float(loss.class_acc.numpy()))
trial("ClassAccuracyWithBboxWrapper.result() (the package's own reader)",
      lambda: float(metric.result()))
ckpt = tf.train.Checkpoint(loss_var=loss.class_acc)
path = ckpt.write(os.path.join(os.environ.get("TMPDIR", "/tmp"), "kecam_ckpt"))
trial("checkpointed class_acc",
      lambda: float(tf.train.load_variable(path, "loss_var/.ATTRIBUTES/VARIABLE_VALUE")))

# --- KVCache.cache ----------------------------------------------------------------------------
with strategy.scope():
    cache = KVCache(max_batch_size=2, max_seq_len=4)
    cache.build([(None, 4, 1, 1), (1,)])
print("cache is", type(cache.cache).__name__, cache.cache.aggregation)
toks = strategy.experimental_distribute_values_from_function(
    lambda ctx: tf.fill((1, 2, 1, 1), float(ctx.replica_id_in_sync_group + 1)))
strategy.run(tf.function(lambda t: cache([t, tf.constant([0])])), args=(toks,))
trial("KVCache.cache[0, :2] per replica after one call",
      lambda: [v[0, :2, 0, 0].numpy().tolist() for v in local(cache.cache)])

# --- does a model's checkpoint reach the loss's variable? --------------------------------------
inp = tf.keras.Input((1, 6))
model = tf.keras.Model(inp, tf.keras.layers.Dense(6)(inp))
fit_loss = tf_losses.FocalLossWithBbox()
model.compile("sgd", loss=fit_loss, metrics=[tf_losses.ClassAccuracyWithBboxWrapper(fit_loss)])
model.fit(tf.zeros((2, 1, 6)), tf.concat([tf.zeros((2, 1, 6)), tf.ones((2, 1, 1))], -1), verbose=0)
saved = tf.train.Checkpoint(model=model).write(
    os.path.join(os.environ.get("TMPDIR", "/tmp"), "kecam_model_ckpt"))
trial("variables in the compiled model's checkpoint",
      lambda: [k.split("/.ATTRIBUTES")[0] for k, _ in tf.train.list_variables(saved)
               if "OBJECT_GRAPH" not in k])
