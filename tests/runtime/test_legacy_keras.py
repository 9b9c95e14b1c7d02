"""Runtime truth for TF_USE_LEGACY_KERAS (engine/legacy.py, tests/fixtures/check/keras_legacy
and keras_legacy_clean): each fixture package is imported in a fresh interpreter on 2
logical CPUs, since `tf.keras` is chosen once per process, when it is first loaded.
`keras_legacy` sets the variable before that, so its metric made outside the scope is
tf_keras' and `compile` raises the ValueError TFS108 claims; `keras_legacy_clean` sets
it after loading `tf.keras`, which stays Keras 3, and the same code runs."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from tests import paths

if importlib.util.find_spec("tensorflow") is None or importlib.util.find_spec("tf_keras") is None:
    pytest.skip("needs tensorflow and tf_keras", allow_module_level=True)

PROGRAM = """
import json, os, sys
import tensorflow as tf
cpus = tf.config.list_physical_devices("CPU")
tf.config.set_logical_device_configuration(cpus[0], [tf.config.LogicalDeviceConfiguration()] * 2)
sys.path.insert(0, {root!r})
outcome = {{"raised": None}}
try:
    import {package}.train as train
    outcome["keras"] = type(train.accuracy).__module__.split(".")[0]
except Exception as exc:
    outcome["raised"] = type(exc).__name__ + ": " + str(exc)
print("@@" + json.dumps(outcome))
"""


def outcome(package: str) -> dict:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", KERAS_BACKEND="tensorflow",
               CUDA_VISIBLE_DEVICES="-1")
    env.pop("TF_USE_LEGACY_KERAS", None)
    program = PROGRAM.format(root=str(paths.FIXTURES / "check"), package=package)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          env=env, timeout=300)
    line = next(line for line in done.stdout.splitlines() if line.startswith("@@"))
    return json.loads(line[2:])


def test_set_before_tf_keras_loads_makes_it_tf_keras_and_compile_raises():
    raised = outcome("keras_legacy")["raised"]
    assert raised is not None and raised.startswith("ValueError")
    assert "was created inside a different distribution strategy scope" in raised


def test_set_after_tf_keras_loads_leaves_keras_3_and_runs():
    got = outcome("keras_legacy_clean")
    assert got["raised"] is None and got["keras"] == "keras"
