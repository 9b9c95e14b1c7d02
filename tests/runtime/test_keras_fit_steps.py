"""What Keras 3 `fit` does with a custom `train_step`, under real TensorFlow: `fit` runs it
in `strategy.run` inside a `tf.function`, so it is traced replica code like a custom
training loop's step, and fails the same two ways that TFS109 and TFS110 describe for
those. TFS109 stays silent on `fit` because `fit` builds the compiled optimizer first
(tests/runtime/snippets/TFS109_fit_custom_train_step_ok.py); an optimizer not handed to
`compile` is not built by it, and TFS109 does not follow Keras' own steps yet (their
entry is `fit`, not a `strategy.run` the code makes): this pins what it would claim
there. TFS110 follows them (tests/runtime/snippets/TFS110_fit_train_step*.py).
MirroredStrategy over 2 logical CPUs, TF 2.21 / Keras 3.15.
Skipped without TensorFlow unless SYNCADVISOR_REQUIRE_TF=1.
"""
from __future__ import annotations

import importlib.util
import os

import pytest

from syncadvisor.model import tfapi

from .runner import run_snippets

SOURCE = """\
import keras
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])


class Model(keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(1)
        self.steps = tf.Variable(0.0, trainable=False, aggregation=tf.VariableAggregation.SUM)
        self.other = keras.optimizers.Adam()  # not handed to compile

    def call(self, x):
        return self.dense(x)

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((self(x) - y) ** 2)
        grads = tape.gradient(loss, self.trainable_variables)
        APPLY
        UPDATE
        return {"loss": loss}


with strategy.scope():
    model = Model()
    model.compile(optimizer=keras.optimizers.Adam())
model.fit(tf.ones((16, 4)), tf.zeros((16, 1)), batch_size=8, epochs=1, verbose=0)
RESULT = {"steps": float(model.steps.numpy())}
"""
COMPILED = "self.optimizer.apply_gradients(zip(grads, self.trainable_variables))"
OTHER = "self.other.apply_gradients(zip(grads, self.trainable_variables))"
IN_BRANCH = "tf.cond(loss > 0, lambda: self.steps.assign_add(1.0), lambda: tf.identity(self.steps))"
WEIGHTED = "self.steps.assign_add(tf.cast(loss > 0, tf.float32))"
PLACEHOLDER = "You must feed a value for placeholder tensor"
REFUSED = tfapi.MERGE_CALL_REFUSED_ERROR.split('"')[1]


def _source(apply: str, update: str) -> str:
    return SOURCE.replace("APPLY", apply).replace("UPDATE", update)


def test_custom_train_step_under_fit_fails_as_a_custom_loop_step_does():
    if importlib.util.find_spec("tensorflow") is None:
        if os.environ.get("SYNCADVISOR_REQUIRE_TF") == "1":
            pytest.fail("SYNCADVISOR_REQUIRE_TF=1 but tensorflow is not installed", pytrace=False)
        pytest.skip("tensorflow is not installed")
    results = run_snippets({
        "compiled": _source(COMPILED, WEIGHTED),
        "other-optimizer": _source(OTHER, WEIGHTED),
        "sum-in-branch": _source(COMPILED, IN_BRANCH),
    }, per_snippet_timeout=120.0)
    compiled, other, branch = (results[k] for k in ("compiled", "other-optimizer",
                                                     "sum-in-branch"))
    # the compiled optimizer, and the update weighted outside any branch: it trains
    # (2 steps, each replica adds 1 a step, SUM adds the replicas')
    assert compiled["ok"], compiled
    assert compiled["result"] == {"steps": 4.0}, compiled["result"]
    # a second Keras 3 optimizer first applied in the step: TFS109's failure
    assert not other["ok"] and other["exc_type"] == "InvalidArgumentError", other
    assert PLACEHOLDER in other["message"], other["message"][-300:]
    # a SUM update inside `tf.cond` in the step: TFS110's failure
    assert not branch["ok"] and branch["exc_type"] == "RuntimeError", branch
    assert REFUSED in branch["message"], branch["message"][-300:]
