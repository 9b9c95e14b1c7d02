"""`tfapi.KERAS3_OPTIMIZERS_WITH_SLOTS` under real TensorFlow: each of these Keras 3
optimizers, made in the scope of a MirroredStrategy over 2 logical CPUs (its default,
collective all-reduce) and first applied inside `strategy.run` in a `tf.function`, fails
the step with InvalidArgumentError ("You must feed a value for placeholder tensor"), which
is what TFS109 claims of them; built in the scope first, each trains. SGD is in the table
of options instead (`tfapi.KERAS3_SLOT_OPTIONS`): without them it trains unbuilt.

Every entry of the table has a run here, so that the table cannot claim more than was
run. A failed step aborts the process's collective ops, so the harness runs each raising
snippet in a process of its own (about 6 s each). Skipped without TensorFlow unless
SYNCADVISOR_REQUIRE_TF=1.
"""
from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys

import pytest

from syncadvisor.model import tfapi

from .runner import run_snippets

SOURCE = """\
import keras
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    model = keras.Sequential([keras.Input((4, 4)), keras.layers.Dense(2)])
    optimizer = MAKE
    BUILD


def step(x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(x))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


@tf.function
def train(x):
    return strategy.run(step, args=(x,))


train(tf.ones((2, 4, 4)))
RESULT = len(optimizer.variables)
"""

# The optimizers whose construction needs more than the class.
MAKE = {"LossScaleOptimizer": "keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD())"}
UNBUILT_RUNS = {"SGD": "keras.optimizers.SGD()"}
# SGD with each option of `tfapi.KERAS3_SLOT_OPTIONS["SGD"]` that makes variables, but
# gradient accumulation (ACCUMULATING below: built or not, its step fails another way).
SGD_OPTIONS = {f"SGD({option})": f"keras.optimizers.SGD({option})"
               for option in ("momentum=0.9", "use_ema=True")}
ACCUMULATING = {name: f"keras.optimizers.{name}("
                      f"{tfapi.KERAS3_GRADIENT_ACCUMULATION_ARGUMENT}=2)"
                for name in ("SGD", "Adam")}
PLACEHOLDER = "You must feed a value for placeholder tensor"


def _source(make: str, build: bool) -> str:
    built = "optimizer.build(model.trainable_variables)" if build else "pass"
    return SOURCE.replace("MAKE", make).replace("BUILD", built)


def _tensorflow_or_skip() -> None:
    if importlib.util.find_spec("tensorflow") is None:
        if os.environ.get("SYNCADVISOR_REQUIRE_TF") == "1":
            pytest.fail("SYNCADVISOR_REQUIRE_TF=1 but tensorflow is not installed", pytrace=False)
        pytest.skip("tensorflow is not installed")


def test_sgd_options_that_make_slots_are_the_table_s():
    assert {make.partition("(")[2].partition("=")[0] for make in SGD_OPTIONS} | \
        {tfapi.KERAS3_GRADIENT_ACCUMULATION_ARGUMENT} == set(tfapi.KERAS3_SLOT_OPTIONS["SGD"])


def test_an_accumulating_optimizer_raises_merge_call_built_or_not_and_tfs109_leaves_it():
    """`tfapi.KERAS3_GRADIENT_ACCUMULATION_ARGUMENT`: with gradient accumulation, Keras 3
    applies the update under a cond, a synchronization point inside a branch of traced
    replica code: the step raises the merge_call RuntimeError even when the optimizer was
    built in the scope, so TFS109's claim (and its fix) does not hold there, and it is
    silent."""
    from syncadvisor.api import check_source

    for name, make in ACCUMULATING.items():
        plain = make.replace(f"{tfapi.KERAS3_GRADIENT_ACCUMULATION_ARGUMENT}=2", "momentum=0.9"
                             if name == "SGD" else "")
        assert "TFS109" in {f.code for f in check_source(_source(plain, False), "snippet.py")}
        codes = {f.code for f in check_source(_source(make, False), "snippet.py")}
        assert "TFS109" not in codes, (name, codes)
    _tensorflow_or_skip()
    refused = tfapi.MERGE_CALL_REFUSED_ERROR.split('"')[1]
    snippets = {f"{state}:{name}": _source(make, state == "built")
                for name, make in ACCUMULATING.items() for state in ("built", "unbuilt")}
    results = run_snippets(snippets, per_snippet_timeout=120.0)
    wrong = [(key, record["exc_type"], (record["message"] or "")[-200:])
             for key, record in results.items()
             if record["ok"] or record["exc_type"] != "RuntimeError" or
             refused not in (record["message"] or "")]
    assert not wrong, wrong


def test_keras3_optimizers_with_slots_raise_unbuilt_in_a_traced_step_and_train_built():
    _tensorflow_or_skip()
    makes = {name: MAKE.get(name, f"keras.optimizers.{name}()")
             for name in sorted(tfapi.KERAS3_OPTIMIZERS_WITH_SLOTS)}
    makes.update(SGD_OPTIONS)
    snippets = {f"built:{name}": _source(make, True) for name, make in makes.items()}
    snippets.update({f"unbuilt:{name}": _source(make, False)
                     for name, make in UNBUILT_RUNS.items()})
    snippets.update({f"raises:{name}": _source(make, False) for name, make in makes.items()})
    results = run_snippets(snippets, per_snippet_timeout=120.0)
    wrong = []
    for key, record in results.items():
        kind = key.partition(":")[0]
        if kind == "raises":
            if record["ok"] or record["exc_type"] != "InvalidArgumentError" or \
                    PLACEHOLDER not in (record["message"] or ""):
                wrong.append((key, record["exc_type"], (record["message"] or "")[-200:]))
        elif not record["ok"]:
            wrong.append((key, record["exc_type"], (record["message"] or "")[-200:]))
    assert not wrong, wrong


WORKER = """\
import json, os, sys
os.environ["TF_CONFIG"] = json.dumps({"cluster": {"worker": WORKERS},
                                      "task": {"type": "worker", "index": int(sys.argv[1])}})
import keras
import tensorflow as tf

strategy = tf.distribute.MultiWorkerMirroredStrategy()
with strategy.scope():
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
    optimizer = keras.optimizers.Adam()


def step(x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(x))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


@tf.function
def train(x):
    return strategy.run(step, args=(x,))


dataset = tf.data.Dataset.from_tensor_slices(tf.ones((8, 4))).batch(4)
for x in strategy.experimental_distribute_dataset(dataset):
    train(x)
print("RESULT", strategy.num_replicas_in_sync, len(optimizer.variables))
"""


def _free_ports(count: int):
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("localhost", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def test_multi_worker_mirrored_trains_an_optimizer_first_built_in_a_traced_step(tmp_path):
    """Why `tfapi.OPTIMIZER_BUILT_IN_STEP_STRATEGIES` leaves MultiWorkerMirroredStrategy out:
    two workers (one CPU replica each, collective all-reduce between them) train the Adam
    that fails the same step under MirroredStrategy over two local devices."""
    _tensorflow_or_skip()
    workers = [f"localhost:{port}" for port in _free_ports(2)]
    script = tmp_path / "worker.py"
    script.write_text(WORKER.replace("WORKERS", repr(workers)))
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    procs = [subprocess.Popen([sys.executable, str(script), str(i)], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, env=env) for i in range(2)]
    outputs = []
    for proc in procs:
        try:
            out, _ = proc.communicate(timeout=240)
        except subprocess.TimeoutExpired:
            for p in procs:
                p.kill()
            pytest.fail("a worker did not finish in 240 s")
        outputs.append((proc.returncode, out))
    for code, out in outputs:
        assert code == 0, out[-2000:]
        assert "RESULT 2 6" in out, out[-2000:]  # 2 replicas in sync; Adam's 4 slots + 2
