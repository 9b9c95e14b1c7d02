"""The editor's case: flake8 on an unsaved buffer from standard input, as editor
extensions run it, the buffer changing between calls as it does while one types.

Each call is a new flake8 process reading a 300-line training program (a strategy, a
Keras layer that makes its own weights, a custom training loop) from stdin, with one line
edited since the call before, so that no cache of either tool holds its model. Plain
flake8 and flake8 with the TFS plugin alternate, call by call, through
``flake8_runner.py`` (so that they differ in the plugin alone); the plugin runs with its
cache on, as shipped. The target: a call with the plugin takes at most 1.25 times a call
without it (the median of the pairs' ratios).
"""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path

from benchmarks.measure import run_measured
from benchmarks.tools import Tool

TARGET = 1.25
LINES = 300

_HEAD = '''\
"""A training program, as an editor holds it while one types."""
import functools
import os

import numpy as np
import tensorflow as tf

LEARNING_RATE = 0.001 * {edit}
BATCH = 64
strategy = tf.distribute.MirroredStrategy()


class Scale(tf.keras.layers.Layer):
    def build(self, shape):
        self.scale = self.add_weight(name="scale", shape=(shape[-1],), initializer="ones")
        self.calls = self.add_weight(name="calls", shape=(), trainable=False,
                                     dtype=tf.int64, initializer="zeros")

    def call(self, x):
        self.calls.assign_add(1)
        return x * self.scale


def make_model():
    return tf.keras.Sequential([tf.keras.layers.Dense(32), Scale(), tf.keras.layers.Dense(1)])


with strategy.scope():
    model = make_model()
    optimizer = tf.keras.optimizers.Adam(LEARNING_RATE)
    loss_total = tf.Variable(0.0, synchronization=tf.VariableSynchronization.ON_READ)
    steps = tf.Variable(0, dtype=tf.int64, aggregation=tf.VariableAggregation.MEAN)


@tf.function
def train_step(inputs):
    features, labels = inputs

    def step(features, labels):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(features) - labels))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        loss_total.assign_add(loss)
        steps.assign_add(1)
        return loss

    return strategy.run(step, args=(features, labels))
'''

_FILLER = '''

def preprocess_{i}(features, labels):
    """Scale and shift the inputs of batch kind {i}."""
    features = tf.cast(features, tf.float32) / 255.0
    features = features - tf.reduce_mean(features, axis=0, keepdims=True)
    labels = tf.cast(labels, tf.float32)
    return features, labels


def dataset_{i}(path=os.path.join("data", "part-{i}")):
    data = np.load(path)
    ds = tf.data.Dataset.from_tensor_slices((data["x"], data["y"]))
    ds = ds.map(functools.partial(preprocess_{i}), num_parallel_calls=tf.data.AUTOTUNE)
    return ds.shuffle(1024).batch(BATCH).prefetch(2)
'''


def buffer(edit: int, lines: int = LINES) -> str:
    """The program after `edit` keystrokes: `lines` lines, the learning rate line edited."""
    text = _HEAD.format(edit=edit)
    i = 0
    while text.count("\n") < lines:
        text += _FILLER.format(i=i)
        i += 1
    return "".join(text.splitlines(keepends=True)[:lines])


def run_editor(plain: Tool, plugged: Tool, calls: int = 20, warmup: int = 2,
               timeout: float | None = 120, log=print) -> dict:
    """`calls` pairs of flake8 calls on an edited buffer, plain and with the plugin in turn
    (which goes first alternates); each pair reads the same buffer."""
    if not (plain.available and plugged.available):
        why = plain.na_reason if not plain.available else plugged.na_reason
        return {"status": "n/a", "reason": why}
    times: dict = {plain.key: [], plugged.key: []}
    with tempfile.TemporaryDirectory(prefix="syncadvisor-editor-") as scratch:
        folder = Path(scratch)
        for n in range(warmup + calls):
            data = buffer(n).encode()
            order = (plain, plugged) if n % 2 == 0 else (plugged, plain)
            for tool in order:
                # The tools' own argv and environment, but the plugin's cache where a project
                # without settings keeps it: in the buffer's folder.
                argv = tool.argv + ["--stdin-display-name", "train.py", "-"]
                r = run_measured(argv, cwd=folder, timeout=timeout, track_tree=False, stdin=data)
                if r.timed_out or r.returncode not in (0, 1):
                    return {"status": "error", "reason": f"{tool.key}: exit {r.returncode}: "
                                                         f"{r.stderr_tail[-300:]}"}
                if n >= warmup:
                    times[tool.key].append(r.seconds)
    pairs = [b / a for a, b in zip(times[plain.key], times[plugged.key])]
    result = {
        "status": "ok", "calls": calls, "lines": LINES,
        "plain_median_s": statistics.median(times[plain.key]),
        "plugin_median_s": statistics.median(times[plugged.key]),
        "ratio_median": statistics.median(pairs), "ratio_min": min(pairs),
        "ratio_max": max(pairs), "target": TARGET,
    }
    result["verdict"] = "PASS" if result["ratio_median"] <= TARGET else "FAIL"
    log(f"  editor: flake8 {result['plain_median_s'] * 1000:.0f} ms, with TFS "
        f"{result['plugin_median_s'] * 1000:.0f} ms per call ({result['ratio_median']:.2f}x)")
    return result


def format_editor(res: dict) -> str:
    if res.get("status") != "ok":
        return f"== editor (flake8 on a changed buffer from stdin): {res.get('status')} " \
               f"({res.get('reason', '')})"
    return "\n".join([
        f"== editor: flake8 on a changed {res['lines']}-line buffer from stdin, "
        f"{res['calls']} calls each, alternating",
        f"   flake8 alone      {res['plain_median_s'] * 1000:7.0f} ms median per call",
        f"   flake8 with TFS   {res['plugin_median_s'] * 1000:7.0f} ms median per call",
        f"  [{res['verdict']:<6}] with TFS / alone, pair by pair: median {res['ratio_median']:.2f}x "
        f"({res['ratio_min']:.2f}-{res['ratio_max']:.2f}); target <= {res['target']}x",
    ])
