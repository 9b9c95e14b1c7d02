"""A gradient accumulator of the common public kind, profiled (`--run`).

`tests/fixtures/profile/accumulate/train.py` keeps one ON_READ + SUM buffer per trainable
variable, fills them through `strategy.run` with each replica's gradient, then divides
them and applies them with `optimizer.apply_gradients` inside `strategy.run`, whose
all-reduce sums the replicas' partial gradients: the program on two replicas trains the
weights the program on one replica trains. The profile must keep the buffers on ON_READ,
and whatever it recommends must leave those weights: checked here by running the program
itself, rewritten to the recommended choice, on two replicas and on one.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from tests import paths
from tests.profile.test_profile import _env, tensorflow_required  # noqa: F401

PROGRAM = paths.FIXTURES / "profile" / "accumulate" / "train.py"
BUFFER_LINE = 28  # the tf.Variable(...) of `make_buffers`
STEPS = 7  # stopped after an accumulation, before its apply: the buffers hold gradients

# Runs a program with the CPU split into N logical devices (1: the CPU as one device).
_ON_DEVICES = """
import runpy, sys
import tensorflow as tf
count = int(sys.argv[1])
if count > 1:
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(
        cpu, [tf.config.LogicalDeviceConfiguration() for _ in range(count)])
sys.argv = sys.argv[2:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def _weights(program, devices: int, tmp_path) -> list:
    out = tmp_path / f"weights-{program.stem}-{devices}.json"
    result = subprocess.run(
        [sys.executable, "-c", _ON_DEVICES, str(devices), str(program), "--steps", str(STEPS),
         "--dump", str(out)], env=_env(), capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(out.read_text())


def _rewritten(choice, tmp_path):
    """The program with its buffers made as `choice` (synchronization, aggregation)."""
    text = PROGRAM.read_text()
    text = text.replace("VariableSynchronization.ON_READ", f"VariableSynchronization.{choice[0]}")
    text = text.replace("VariableAggregation.SUM", f"VariableAggregation.{choice[1]}")
    path = tmp_path / f"train_{choice[0]}_{choice[1]}.py".lower()
    path.write_text(text)
    return path


def _largest_gap(a, b) -> float:
    import numpy as np

    return max(float(np.max(np.abs(np.asarray(x) - np.asarray(y))) /
                     max(float(np.max(np.abs(np.asarray(y)))), 1e-12)) for x, y in zip(a, b))


@pytest.fixture(scope="module")
def profiled(tensorflow_required):  # noqa: F811
    result = subprocess.run(
        [sys.executable, "-m", "syncadvisor", "profile", "--run", str(PROGRAM), "--choices",
         "all", "--format", "json", "--steps", str(STEPS - 1), "--warmup", "1"],
        cwd=paths.REPO, env=_env(), capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-4000:]
    data = json.loads(result.stdout)
    (site,) = [s for s in data["sites"] if s["line"] == BUFFER_LINE]
    return data, site


def test_tf_the_buffers_stay_on_read_and_nothing_is_to_fix(profiled):
    data, site = profiled
    assert data["reference"]["problem"] is None and data["reference"]["replicas"] == 1
    assert data["summary"]["fix"] == 0
    verdict = site["verdict"]
    assert verdict["action"] == "keep", verdict
    assert (verdict["synchronization"], verdict["aggregation"]) == ("ON_READ", "SUM")
    by = {m["choice"]: m for m in site["measurements"]}
    written = by["ON_READ + SUM"]
    assert written["as_written"] and written["values_agree"] is True and not written["error"]
    # The advice the issue reports: each replica's buffer holds the summed gradient, which
    # apply_gradients sums again: the weights are no longer the one-replica run's.
    summed = by["ON_WRITE + SUM"]
    assert summed["values_agree"] is False
    assert {"sequential/dense/kernel", "sequential/dense_1/kernel"} <= set(summed["differ"])
    # Copies of a mirrored buffer without aggregation diverge (each holds its replica's part).
    assert by["ON_WRITE + NONE"]["copies_agree"] is False
    # ON_READ + NONE is read by nobody across replicas: the profiler makes no such read,
    # so no error is blamed on it.
    assert by["ON_READ + NONE"]["error"] is None


def test_tf_no_recommended_choice_changes_the_weights_of_one_replica(profiled, tmp_path):
    data, site = profiled
    recommended = (site["verdict"]["synchronization"], site["verdict"]["aggregation"])
    usable = [m for m in site["measurements"]
              if not m["error"] and m["copies_agree"] is not False and m["values_agree"]]
    assert recommended in {(m["synchronization"], m["aggregation"]) for m in usable}
    one = _weights(PROGRAM, 1, tmp_path)
    assert _largest_gap(_weights(PROGRAM, 2, tmp_path), one) < 1e-4  # as written: the same
    # the program itself, rewritten to the recommended choice, on two replicas
    assert _largest_gap(_weights(_rewritten(recommended, tmp_path), 2, tmp_path), one) < 1e-4
    # and the check can fail: the choice the issue reports changes them
    assert _largest_gap(_weights(_rewritten(("ON_WRITE", "SUM"), tmp_path), 2, tmp_path),
                        one) > 0.1


def test_the_fixture_names_its_buffers_where_the_test_looks():
    line = PROGRAM.read_text().splitlines()[BUFFER_LINE - 1]
    assert re.search(r"\btf\.Variable\(", line), line
