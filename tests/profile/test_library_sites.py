"""Variables library code makes on a line of the program are sites of that line (`--run`).

`tests/fixtures/profile/keras_loop/train.py` makes no variable itself: Keras makes the
model's weights (line 18), a metric's state (21), an optimizer's iteration and learning
rate (22) and its slots on `optimizer.build` (23). Also here: programs whose run on one
replica is not the same program, which the profile says it cannot judge, and why.
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests import paths
from tests.profile.test_profile import _env, tensorflow_required  # noqa: F401

LOOP = "tests/fixtures/profile/keras_loop/train.py"
UNJUDGEABLE = "tests/fixtures/profile/unjudgeable/train.py"
FEW = ["--steps", "4", "--warmup", "2"]
WEIGHTS, METRIC, OPTIMIZER, SLOTS = 18, 21, 22, 23


def _profile(*args, timeout=400):
    return subprocess.run([sys.executable, "-m", "syncadvisor", "profile", *args],
                          cwd=paths.REPO, env=_env(), capture_output=True, text=True,
                          timeout=timeout)


def test_tf_nothing_to_profile_lists_what_keras_made_and_why(tensorflow_required):  # noqa: F811
    result = _profile("--run", LOOP, *FEW)
    assert result.returncode == 0, result.stderr[-3000:]
    text = result.stdout
    assert "nothing to profile: no variable the program made is at a site with a finding" in text
    listed = {line.split(":")[1]: line for line in text.splitlines()
              if line.startswith(f"  {LOOP}:")}
    assert set(listed) == {str(n) for n in (WEIGHTS, METRIC, OPTIMIZER, SLOTS)}
    assert "total, count, made by the Keras metric Mean as ON_READ + SUM: nothing on this " \
           "line chooses their synchronization or aggregation" in listed[str(METRIC)]
    assert "made by the optimizer Adam as ON_WRITE + ONLY_FIRST_REPLICA" in listed[str(OPTIMIZER)]
    assert "momentum" in listed[str(SLOTS)] and "made by the optimizer Adam" in listed[str(SLOTS)]
    assert "kernel, bias, made by the layer Dense" in listed[str(WEIGHTS)]


@pytest.fixture(scope="module")
def sites(tensorflow_required):  # noqa: F811
    result = _profile("--run", LOOP, "--format", "json", *FEW, "--site", f"{LOOP}:{METRIC}",
                      "--site", f"{LOOP}:{OPTIMIZER}", "--site", f"{LOOP}:{SLOTS}")
    assert result.returncode == 0, result.stderr[-3000:]
    data = json.loads(result.stdout)
    return {site["line"]: site for site in data["sites"]}


def test_tf_site_on_a_keras_metric_line_measures_its_variables(sites):
    metric = sites[METRIC]
    assert metric["name"] == "Mean" and metric["made_by_library"].startswith("total, count")
    (written,) = metric["measurements"]
    assert written["choice"] == "ON_READ + SUM" and written["as_written"]
    assert written["reductions_per_step"] > 0 and written["error"] is None
    # Each replica adds its share of the loss and a count of one: the total matches the
    # one-replica run, the count is twice its count, so result() reads half the loss.
    assert written["values_agree"] is False and written["differ"] == ["train_loss/count"]
    assert sites[METRIC]["verdict"]["action"] == "none"
    assert "nothing on this line changes it (Mean makes them so)" in metric["verdict"]["text"]


def test_tf_site_on_an_optimizer_line_measures_its_variables(sites):
    for line, names in ((OPTIMIZER, "iteration, learning_rate"), (SLOTS, "sequential_dense")):
        site = sites[line]
        assert site["name"] == "Adam" and site["made_by_library"].startswith(names)
        (written,) = site["measurements"]
        assert written["values_agree"] is True and written["error"] is None
        assert site["verdict"]["action"] == "keep"
        assert site["verdict"]["text"].startswith(f"keep {written['choice']}: its values agree "
                                                  f"with the one-replica run's")
    assert sites[SLOTS]["measurements"][0]["choice"] == "ON_WRITE + NONE"


def test_tf_site_where_nothing_was_made_is_a_usage_error(tensorflow_required):  # noqa: F811
    result = _profile("--run", LOOP, *FEW, "--site", f"{LOOP}:30")
    assert result.returncode == 2, result.stderr
    assert f"--site {LOOP}:30: the program as written made no variable there" in result.stderr
    assert f"{LOOP}:{METRIC}" in result.stderr and "Traceback" not in result.stderr
    result = _profile("--run", LOOP, "--site", "no/such.py:3")
    assert result.returncode == 2 and "no/such.py: no such file" in result.stderr


@pytest.mark.parametrize("argument, why", [
    ("--dropout", "its steps draw random numbers (RandomUniform), which one replica draws "
                  "differently"),
    ("--batch-per-replica", f"the program reads num_replicas_in_sync ({UNJUDGEABLE}:10): what "
                            f"it computes from it differs on one replica"),
])
def test_tf_a_program_unlike_its_one_replica_run_cannot_be_judged(
        tensorflow_required, argument, why):  # noqa: F811
    result = _profile("--run", UNJUDGEABLE, "--format", "json", *FEW, "--", argument)
    assert result.returncode == 0, result.stderr[-3000:]
    (site,) = json.loads(result.stdout)["sites"]
    assert site["verdict"]["action"] == "cannot judge"
    assert site["verdict"]["synchronization"] is None  # nothing is recommended
    assert site["judgement"]["unaffected"] == ["kernel"]
    assert site["verdict"]["text"] == (
        "cannot judge AUTO + SUM: no measured choice of this site leaves the values of the "
        "program on one replica, nor does the rest of the program (kernel differs under every "
        f"choice here); {why}")
    assert [f["verdict"] for f in site["recommendation"]["static_findings"]] == ["not measured"]


def test_tf_the_same_program_without_them_is_judged(tensorflow_required):  # noqa: F811
    result = _profile("--run", UNJUDGEABLE, "--format", "json", *FEW)
    assert result.returncode == 0, result.stderr[-3000:]
    (site,) = json.loads(result.stdout)["sites"]
    assert (site["verdict"]["action"], site["verdict"]["synchronization"]) == \
        ("switch", "ON_READ")
