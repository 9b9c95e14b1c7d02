"""`syncadvisor profile --run`: the user's own program, once per candidate choice per site.

Without TensorFlow: the candidates, the verdicts and `check --profile` work on plain data.
With TensorFlow (`test_tf_*`): both bundled training programs profiled end to end in
subprocesses, on MirroredStrategy over 2 logical CPU devices, with few steps. Only counts,
agreement, verdicts and exit codes are asserted, never a step time.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from syncadvisor import measured
from syncadvisor.model import tfapi
from syncadvisor.profile import plan, report, runs, verdict
from syncadvisor.profile.plan import FindingRef, Pattern, SiteSpec, Update
from tests import paths
from tests.profile.test_profile import _env, _png_size, tensorflow_required  # noqa: F401

ROOT = paths.REPO
ACCUMULATE = "examples/train_accumulate.py"
FIT = "examples/train_fit.py"
FEW = ["--steps", "4", "--warmup", "2"]


def _spec(updates, current=("AUTO", "NONE"), trainable=False, family=tfapi.TF, explicit=False,
          findings=()):
    pattern = Pattern(kind="site", title="t", shape=(), dtype="float32", trainable=trainable,
                      updates=tuple(updates),
                      reference=plan.reference_choice(updates, "float32", family))
    return SiteSpec(path="a.py", line=3, name="v", pattern=pattern, current=current,
                    api="tf.Variable", family=family, findings=list(findings), explicit=explicit)


ADD = Update("assign_add", plan.PER_REPLICA, True)


# --------------------------------------------------------------------------------------------
# Without TensorFlow
# --------------------------------------------------------------------------------------------

def test_candidates_code_first_then_reference_default_and_on_read():
    spec = _spec([ADD])
    assert runs.candidates(spec) == [("ON_WRITE", "NONE"), ("ON_WRITE", "SUM"),
                                     ("ON_READ", "SUM")]
    trained = _spec([Update("gradient", plan.PER_REPLICA, True)], trainable=True)
    assert runs.candidates(trained) == [("ON_WRITE", "NONE")]
    assert len(runs.candidates(spec, everything=True)) == 12  # AUTO and ON_WRITE run once


def test_keras3_accumulator_reference_is_on_read_sum():
    # Keras 3's assign_add is assign(v + x): SUM on a mirrored variable multiplies v.
    assert plan.reference_choice([ADD], "float32", tfapi.KERAS3) == ("ON_READ", "SUM")
    assert plan.reference_choice([ADD], "float32", tfapi.KERAS2) == ("ON_WRITE", "SUM")


COUNT_READ_IN_STEP = textwrap.dedent("""\
    import tensorflow as tf

    strategy = tf.distribute.MirroredStrategy()
    with strategy.scope():
        w = tf.Variable(0.0, aggregation=tf.VariableAggregation.MEAN)
        count = tf.Variable(0.0, trainable=False, aggregation=tf.VariableAggregation.SUM)


    def replica_step(x):
        count.assign_add(tf.reduce_sum(x))
        w.assign_add(count * 0.01)


    @tf.function
    def step(x):
        strategy.run(replica_step, args=(x,))
    """)


def test_replica_invariant_update_is_not_measured_as_per_replica(tmp_path):
    # `count` is SUM, so every copy holds the sum: `count * 0.01` is the same on every
    # replica, and the reference keeps one replica's update, not their sum.
    from syncadvisor.profile.program_cli import _sites

    source = tmp_path / "train.py"
    source.write_text(COUNT_READ_IN_STEP)
    specs, _ = _sites([str(source)])
    by_name = {spec.name: spec.pattern for spec in specs}
    assert by_name["w"].updates == (Update("assign_add", plan.CONSTANT, True),)
    # every replica adds the same: the code's own MEAN is the intent, not a SUM
    assert by_name["w"].reference == ("ON_WRITE", "MEAN")
    same = [Update("assign_add", plan.CONSTANT, True)]
    assert plan.reference_choice(same, "float32") == ("ON_WRITE", "ONLY_FIRST_REPLICA")
    assert plan.reference_choice(same, "float32", written="SUM") == ("ON_WRITE", "SUM")
    assert by_name["count"].reference == ("ON_WRITE", "SUM")


def test_sites_that_matter():
    assert not runs.matters(_spec([ADD]))
    assert runs.matters(_spec([ADD], explicit=True))
    assert runs.matters(_spec([ADD], findings=[FindingRef("TFS201", 3, "warning", "m")]))
    assert not runs.matters(_spec([ADD], findings=[FindingRef("TFS901", 3, "info", "m")]))


def _m(sync, agg, nbytes, calls=1, copies=True, values=True, error=None, written=False,
       reference=False):
    return {"synchronization": sync, "aggregation": agg, "bytes_per_step": nbytes,
            "reductions_per_step": calls, "transfers_per_step": 0, "copies_agree": copies,
            "values_agree": values, "error": error, "error_stage": "step" if error else None,
            "as_written": written, "reference": reference,
            "step_time_ms": {"median": 1.0, "p10": 0.9, "p90": 1.1, "n": 4}}


def test_verdict_fix_when_the_copies_diverge():
    spec = _spec([ADD], findings=[FindingRef("TFS201", 3, "warning", "m")])
    decided = verdict.decide(spec, [
        _m("ON_WRITE", "NONE", 0, 0, copies=False, values=False, written=True),
        _m("ON_WRITE", "SUM", 4096, reference=True),
        _m("ON_READ", "SUM", 0, 0, copies=None)])
    assert decided["verdict"]["action"] == verdict.FIX
    assert decided["verdict"]["text"].startswith(
        "AUTO + NONE diverges across replicas: use ON_READ + SUM")
    assert decided["static_findings"][0]["verdict"] == "agrees"
    # in the code's terms, as the tables say: AUTO, not the ON_WRITE it runs as
    assert decided["static_findings"][0]["why"] == (
        "AUTO + NONE reads different values from the one-replica run")


def test_verdict_switch_names_what_it_saves():
    spec = _spec([ADD], current=("AUTO", "SUM"), findings=[FindingRef("TFS301", 3, "info", "m")])
    decided = verdict.decide(spec, [
        _m("ON_WRITE", "SUM", 4096, written=True, reference=True),
        _m("ON_WRITE", "NONE", 0, 0, copies=False, values=False),
        _m("ON_READ", "SUM", 0, 0, copies=None)])
    assert decided["verdict"]["action"] == verdict.SWITCH
    assert decided["verdict"]["text"] == ("switch to ON_READ + SUM: 1 all-reduce (4.0 KiB) "
                                          "fewer per step, values agree; step time within noise")
    assert decided["static_findings"][0]["verdict"] == "agrees"


def test_verdict_ties_keep_the_codes_synchronization():
    # A tf_keras metric count written ON_READ + MEAN (reads half the count): ON_READ + SUM
    # and the implied ON_WRITE + SUM cost the same; the smaller edit is the advice.
    spec = _spec([ADD], current=("ON_READ", "MEAN"))
    decided = verdict.decide(spec, [
        _m("ON_READ", "MEAN", 0, 0, copies=None, values=False, written=True),
        _m("ON_WRITE", "SUM", 0, 0, reference=True),
        _m("ON_READ", "SUM", 0, 0, copies=None)])
    assert decided["verdict"]["text"].startswith(
        "ON_READ + MEAN reads values that differ from the one-replica run's: use ON_READ + SUM")


def test_verdict_keep_and_raise():
    spec = _spec([ADD], current=("AUTO", "SUM"))
    kept = verdict.decide(spec, [_m("ON_WRITE", "SUM", 8, written=True, reference=True),
                                 _m("ON_READ", "SUM", 8, copies=None)])
    assert kept["verdict"]["action"] == verdict.KEEP
    assert kept["verdict"]["text"].startswith("keep AUTO + SUM: no measured choice moves less")
    raised = verdict.decide(_spec([ADD], current=("ON_READ", "NONE")), [
        _m("ON_READ", "NONE", None, None, error="ValueError: no aggregation", written=True),
        _m("ON_WRITE", "SUM", 8, reference=True)])
    assert raised["verdict"]["action"] == verdict.FIX
    assert raised["verdict"]["text"].startswith(
        "ON_READ + NONE raises ValueError: no aggregation in a step: use ON_WRITE + SUM")
    summary = verdict.summary([{"verdict": kept["verdict"]}, {"verdict": raised["verdict"]}], 1)
    assert summary["text"] == ("2 sites measured: 1 to fix, 0 to switch, 1 to keep; 1 site the "
                               "program as written did not create")


SNIPPET = textwrap.dedent("""\
    import tensorflow as tf

    strategy = tf.distribute.MirroredStrategy()
    with strategy.scope():
        total = tf.Variable(0.0, trainable=False, aggregation=tf.VariableAggregation.SUM)


    @tf.function
    def step(x):
        strategy.run(lambda x: total.assign_add(tf.reduce_sum(x)), args=(x,))
    """)


def _saved_profile(tmp_path, source: Path, judged: str) -> Path:
    site = {"path": str(source), "line": 5, "realpath": os.path.realpath(source),
            "source_sha256": measured.file_digest(str(source)),
            "verdict": {"action": "switch", "text": "switch to ON_READ + SUM: 1 all-reduce "
                                                     "(4 B) fewer per step, values agree"},
            "recommendation": {"static_findings": [
                {"code": "TFS301", "line": 5, "verdict": judged, "why": "w"}]}}
    out = tmp_path / f"profile-{judged}.json"
    out.write_text(json.dumps({"mode": "run", "sites": [site]}))
    return out


def _check(*args):
    return subprocess.run([sys.executable, "-m", "syncadvisor", "check", "--no-cache",
                           "--format", "json", *args], cwd=ROOT, env=_env(),
                          capture_output=True, text=True, timeout=120)


def test_check_profile_carries_or_drops_findings(tmp_path):
    source = tmp_path / "train.py"
    source.write_text(SNIPPET)
    plain = json.loads(_check(str(source)).stdout)
    assert [f["code"] for f in plain] == ["TFS301"]
    agrees = _check("--profile", str(_saved_profile(tmp_path, source, "agrees")), str(source))
    (finding,) = json.loads(agrees.stdout)
    assert finding["message"].endswith("[measured: switch to ON_READ + SUM: 1 all-reduce (4 B) "
                                       "fewer per step, values agree]")
    assert "1 finding carries measurements, 0 dropped" in agrees.stderr
    # each finding the profile saw is named with what the measurement said of it
    assert f"{source}:5:13: TFS301: the measurement agrees: w" in agrees.stderr
    disagrees = _check("--profile", str(_saved_profile(tmp_path, source, "disagrees")),
                       str(source))
    assert json.loads(disagrees.stdout) == [] and disagrees.returncode == 0
    assert "0 findings carry measurements, 1 dropped" in disagrees.stderr
    assert f"{source}:5:13: TFS301: the measurement disagrees, left out: w" in \
        disagrees.stderr
    profile = _saved_profile(tmp_path, source, "disagrees")
    source.write_text(SNIPPET + "\n# edited\n")  # lines may have moved: not matched
    stale = _check("--profile", str(profile), str(source))
    assert [f["code"] for f in json.loads(stale.stdout)] == ["TFS301"]
    assert "changed since profiled" in stale.stderr


def test_check_profile_bad_files_are_usage_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    result = _check("--profile", str(bad), str(ROOT / FIT))
    assert result.returncode == 2 and "is not JSON" in result.stderr
    replay = tmp_path / "replay.json"
    replay.write_text(json.dumps({"sites": []}))
    result = _check("--profile", str(replay), str(ROOT / FIT))
    assert result.returncode == 2 and "--run SCRIPT --save" in result.stderr
    result = _check("--profile", str(replay), "--fix", str(ROOT / FIT))
    assert result.returncode == 2 and "cannot be combined" in result.stderr


# --------------------------------------------------------------------------------------------
# With TensorFlow: the bundled programs, end to end
# --------------------------------------------------------------------------------------------

def _profile(*args, timeout=400):
    return subprocess.run([sys.executable, "-m", "syncadvisor", "profile", *args], cwd=ROOT,
                          env=_env(), capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def programs(tensorflow_required, tmp_path_factory):  # noqa: F811
    out = tmp_path_factory.mktemp("run")
    acc = _profile("--run", ACCUMULATE, "--format", "json", *FEW,
                   "--save", str(out / "acc.json"), "--plot", str(out / "acc.png"))
    assert acc.returncode == 0, acc.stderr[-4000:]
    # the Keras program as a module, as `python -m examples.train_fit` runs it
    fit = _profile("--run", "-m", "examples.train_fit", "--format", "json", *FEW)
    assert fit.returncode == 0, fit.stderr[-4000:]
    return {"acc": json.loads(acc.stdout), "fit": json.loads(fit.stdout),
            "saved": out / "acc.json", "png": out / "acc.png", "stderr": acc.stderr}


def _site(data, name):
    (site,) = [s for s in data["sites"] if s["name"] == name]
    return site


def _choice(site, sync, agg):
    (m,) = [m for m in site["measurements"]
            if (m["synchronization"], m["aggregation"]) == (sync, agg)]
    return m


def test_tf_report_fields(programs):
    data = programs["acc"]
    assert data["mode"] == "run" and data["strategy"] == "MirroredStrategy"
    assert data["replicas"] == 2 and all("CPU" in d for d in data["devices"])
    assert "logical devices" in data["device_note"]
    assert {s["name"] for s in data["sites"]} == {"grad_accum", "loss_total", "micro_steps"}
    for site in data["sites"]:
        assert set(site["verdict"]) >= {"action", "text", "synchronization", "aggregation"}
        for m in site["measurements"]:
            assert set(m) >= {"bytes_per_step", "reductions_per_step", "transfers_per_step",
                              "step_time_ms", "copies_agree", "values_agree", "error"}
            assert m["error"] is None and m["steps"] == 4
            assert m["bytes_per_step"] >= 0
    assert data["summary"]["text"] == "3 sites measured: 1 to fix, 1 to switch, 1 to keep"


def test_tf_auto_none_accumulator_diverges(programs):
    site = _site(programs["acc"], "grad_accum")
    written = site["measurements"][0]
    assert written["as_written"] and (written["synchronization"], written["aggregation"]) == \
        ("ON_WRITE", "NONE")
    assert written["copies_agree"] is False and written["values_agree"] is False
    assert _choice(site, "ON_WRITE", "SUM")["copies_agree"] is True
    assert _choice(site, "ON_READ", "SUM")["values_agree"] is True
    assert site["verdict"]["action"] == "fix"
    assert site["verdict"]["text"].startswith("AUTO + NONE diverges across replicas: use ")
    judged = {f["code"]: f["verdict"] for f in site["recommendation"]["static_findings"]}
    assert judged == {"TFS201": "agrees"}


def test_tf_on_read_sum_moves_fewer_bytes_for_an_accumulator(programs):
    site = _site(programs["acc"], "loss_total")
    written = _choice(site, "ON_WRITE", "SUM")
    on_read = _choice(site, "ON_READ", "SUM")
    assert written["as_written"] and on_read["bytes_per_step"] < written["bytes_per_step"]
    assert on_read["reductions_per_step"] < written["reductions_per_step"]
    assert on_read["values_agree"] is True
    assert (site["verdict"]["action"], site["verdict"]["synchronization"],
            site["verdict"]["aggregation"]) == ("switch", "ON_READ", "SUM")
    judged = {f["code"]: f["verdict"] for f in site["recommendation"]["static_findings"]}
    assert judged == {"TFS301": "agrees"}
    assert _site(programs["acc"], "micro_steps")["verdict"]["action"] == "keep"


def test_tf_keras_fit_metric_keeps_on_read(programs):
    data = programs["fit"]
    assert data["program"] == {"module": "examples.train_fit", "args": []}
    sites = {s["name"]: s for s in data["sites"]}
    assert set(sites) == {"self.total", "self.count", "BatchNormalization"}
    assert {s["path"] for s in data["sites"]} == {FIT}
    for name in ("self.total", "self.count"):
        site = sites[name]
        assert site["verdict"]["action"] == "keep", site["verdict"]
        assert site["measurements"][0]["as_written"]
        # Keras 3's assign_add is assign(v + x): with SUM each step adds R copies of v.
        assert _choice(site, "ON_WRITE", "SUM")["values_agree"] is False
    # The layer's statistics (TFS202): per replica as written, in step with synchronized=True,
    # which is what the user changes on that line; the metric's total is then judged with it.
    norm = sites["BatchNormalization"]
    assert [m["choice"] for m in norm["measurements"]] == ["synchronized=False",
                                                           "synchronized=True"]
    assert norm["measurements"][0]["copies_agree"] is False
    assert norm["measurements"][1]["values_agree"] is True
    assert (norm["verdict"]["action"], norm["verdict"]["setting"]) == ("fix", "synchronized=True")
    assert {f["code"]: f["verdict"] for f in norm["recommendation"]["static_findings"]} == \
        {"TFS202": "agrees"}


def test_tf_text_report_leads_with_verdicts(programs):
    text = report.render_text(programs["acc"])
    lines = text.splitlines()
    assert lines[0].startswith(f"syncadvisor profile: {ACCUMULATE} under MirroredStrategy, "
                               "2 replicas")
    assert lines[3].startswith("values: judged against the program on one replica (the CPU as "
                               "one device), same seed and global batch, within 0.0001")
    assert lines[4].startswith("step-time noise: two runs of the program as written differ")
    blank = lines.index("")
    verdicts = lines[blank + 1:blank + 4]
    assert verdicts[0].startswith(f"{ACCUMULATE}:28: grad_accum: AUTO + NONE diverges")
    assert verdicts[1].startswith(f"{ACCUMULATE}:30: loss_total: switch to ON_READ + SUM")
    assert verdicts[2].startswith(f"{ACCUMULATE}:33: micro_steps: keep AUTO + "
                                  "ONLY_FIRST_REPLICA")
    assert lines[blank + 5] == "3 sites measured: 1 to fix, 1 to switch, 1 to keep"
    assert "DIFFER" in text


def test_tf_check_profile_changes_a_message(programs):
    result = _check("--profile", str(programs["saved"]), ACCUMULATE)
    messages = {f["code"]: f["message"] for f in json.loads(result.stdout)}
    assert "[measured: AUTO + NONE diverges across replicas" in messages["TFS201"]
    assert "[measured: switch to ON_READ + SUM" in messages["TFS301"]
    # per finding, on standard error: what the measurement judged of it
    assert "TFS201: the measurement agrees: AUTO + NONE reads different values from the " \
           "one-replica run" in result.stderr
    assert "TFS301: the measurement agrees: the measurement recommends ON_READ + SUM" in \
        result.stderr


def test_tf_plot_is_a_png(programs):
    width, height = _png_size(programs["png"])
    assert width >= 800 and height >= 300


def test_tf_fewer_than_two_replicas_is_refused(tensorflow_required, tmp_path):  # noqa: F811
    result = _profile("--run", ACCUMULATE, "--devices", "1")
    assert result.returncode == 2 and "--devices 1" in result.stderr
    # replaying patterns: MultiWorkerMirroredStrategy with no TF_CONFIG is one replica
    result = _profile("--strategy", "multiworker", *FEW)
    assert result.returncode == 2 and "has 1 replica" in result.stderr, result.stderr
    one = tmp_path / "one.py"
    one.write_text(textwrap.dedent("""\
        import tensorflow as tf

        strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
        with strategy.scope():
            total = tf.Variable(0.0, aggregation=tf.VariableAggregation.SUM)

        @tf.function
        def step():
            strategy.run(lambda: total.assign_add(1.0))

        for _ in range(10):
            step()
        """))
    result = _profile("--run", str(one), *FEW)
    assert result.returncode == 2, result.stderr
    assert "has 1 replica" in result.stderr and "Traceback" not in result.stderr


def test_run_usage_errors(tensorflow_required):  # noqa: F811
    assert _profile("--run", "no/such/train.py").returncode == 2
    result = _profile("--run", "-m", "no_such_module_here")
    assert result.returncode == 2 and "no module named" in result.stderr
    result = _profile("--run", ACCUMULATE, "--site", "nonsense")
    assert result.returncode == 2 and "PATH:LINE" in result.stderr


def test_tf_multiworker_copies_are_compared_across_workers(tensorflow_required):  # noqa: F811
    # Two workers on 127.0.0.1, one CPU device each: every worker holds one copy, so a
    # variable whose copies differ differs across workers, and only there.
    from tests.profile.test_profile import two_local_workers

    reports = two_local_workers("--run", "tests/fixtures/profile/multiworker_program.py",
                                "--steps", "3", "--warmup", "1", timeout=400)
    seen = []
    for data in reports:
        assert data["strategy"] == "MultiWorkerMirroredStrategy"
        assert data["replicas"] == 2 and data["workers"] == 2 and len(data["devices"]) == 1
        assert data["reference"]["problem"] is None
        sites = {s["name"]: s for s in data["sites"]}
        last = _choice(sites["last_batch"], "ON_WRITE", "NONE")
        assert last["as_written"] and last["copies_agree"] is False
        assert sites["last_batch"]["verdict"]["action"] == "fix"
        assert sites["last_batch"]["verdict"]["text"].startswith(
            "AUTO + NONE diverges across replicas: use AUTO + SUM")
        total = sites["loss_total"]
        written, on_read = _choice(total, "ON_WRITE", "SUM"), _choice(total, "ON_READ", "SUM")
        assert written["copies_agree"] is True and written["values_agree"] is True
        assert written["reductions_per_step"] == 1 and on_read["reductions_per_step"] == 0
        assert on_read["values_agree"] is True
        assert _choice(total, "ON_WRITE", "NONE")["copies_agree"] is False
        assert total["verdict"]["action"] == "switch"
        seen.append(data["task"]["index"])
    assert sorted(seen) == [0, 1]
    text = report.render_text(reports[0])
    assert "last_batch: AUTO + NONE diverges across replicas" in text


def _program(tmp_path, text: str) -> Path:
    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent(text))
    return path


def test_tf_eager_run_of_a_function_is_charged_every_step(tensorflow_required,  # noqa: F811
                                                           tmp_path):
    # strategy.run(fn) outside any tf.function, with fn a tf.function: TensorFlow runs a
    # clone of fn, traced once; its all-reduce recurs on every step all the same.
    program = _program(tmp_path, """\
        import tensorflow as tf

        strategy = tf.distribute.MirroredStrategy()
        with strategy.scope():
            acc = tf.Variable(tf.zeros([256]), trainable=False,
                              aggregation=tf.VariableAggregation.SUM)


        @tf.function
        def replica_step():
            acc.assign_add(tf.ones([256]))


        for _ in range(10):
            strategy.run(replica_step)
        """)
    result = _profile("--run", str(program), "--format", "json", "--steps", "3", "--warmup", "1")
    assert result.returncode == 0, result.stderr[-4000:]
    (site,) = json.loads(result.stdout)["sites"]
    written = _choice(site, "ON_WRITE", "SUM")
    assert (written["reductions_per_step"], written["bytes_per_step"]) == (1, 1024)
    assert _choice(site, "ON_READ", "SUM")["reductions_per_step"] == 0


def test_tf_program_exiting_before_a_step_shows_what_it_said(tensorflow_required,  # noqa: F811
                                                             tmp_path):
    program = _program(tmp_path, """\
        import argparse

        import tensorflow as tf

        parser = argparse.ArgumentParser()
        parser.add_argument("--lr", type=float, required=True)
        parser.parse_args()
        strategy = tf.distribute.MirroredStrategy()
        with strategy.scope():
            total = tf.Variable(0.0, aggregation=tf.VariableAggregation.SUM)
        """)
    result = _profile("--run", str(program))
    assert result.returncode == 2
    assert "the program exited with 2" in result.stderr
    assert "the following arguments are required: --lr" in result.stderr, result.stderr
    assert "absl" not in result.stderr and "Traceback" not in result.stderr


def test_tf_choice_that_changes_other_variables_is_not_recommended(
        tensorflow_required, tmp_path):  # noqa: F811
    # `count` read inside the step: as ON_READ + SUM each replica reads its local half, so
    # `w` grows half as fast, though `count`'s own value (the sum) agrees.
    program = tmp_path / "train.py"
    program.write_text(COUNT_READ_IN_STEP + textwrap.dedent("""\


        data = tf.data.Dataset.from_tensors(tf.ones([4])).repeat().batch(4)
        batches = iter(strategy.experimental_distribute_dataset(data))
        for _ in range(10):
            step(next(batches))
        """))
    result = _profile("--run", str(program), "--format", "json", "--site", f"{program}:6",
                      "--steps", "3", "--warmup", "1")
    assert result.returncode == 0, result.stderr[-4000:]
    (site,) = json.loads(result.stdout)["sites"]
    on_read = _choice(site, "ON_READ", "SUM")
    assert on_read["values_agree"] is False and on_read["differ"] == ["w"]
    assert (site["verdict"]["action"], site["verdict"]["synchronization"]) == \
        ("keep", "ON_WRITE"), site["verdict"]


def test_verdict_keep_says_why_a_cheaper_choice_is_not_the_advice():
    spec = _spec([ADD], current=("AUTO", "SUM"))
    on_read = dict(_m("ON_READ", "SUM", 0, 0, copies=None, values=False), differ=["w"])
    kept = verdict.decide(spec, [_m("ON_WRITE", "SUM", 8, written=True, reference=True),
                                 on_read])
    assert kept["verdict"]["action"] == verdict.KEEP
    assert kept["verdict"]["text"].startswith(
        "keep AUTO + SUM: ON_READ + SUM moves less but reads values that differ from the "
        "one-replica run's (w) (as written: 1 all-reduce")


def test_error_text_keeps_the_message_not_the_trace():
    from syncadvisor.profile.program import error_text

    graph = ValueError("Graph execution error:\n\nDetected at node cond/P defined at (most recent "
                       "call last):\n  File \"x.py\", line 3, in <module>\n\n  File \"y.py\", "
                       "line 9, in go\n\nYou must feed a value for placeholder tensor 'cond/P'")
    assert error_text(graph) == ("ValueError: Graph execution error: You must feed a value for "
                                 "placeholder tensor 'cond/P'")
    user = ValueError("in user code:\n\n    File \"t.py\", line 5, in step  *\n        "
                      "v.assign_add(x)\n\n    ValueError: no aggregation\n")
    assert error_text(user) == "ValueError: no aggregation"


def test_sigterm_raises_system_exit_so_the_work_folder_goes():
    import signal

    previous = runs._on_sigterm()
    try:
        with pytest.raises(SystemExit) as raised:
            os.kill(os.getpid(), signal.SIGTERM)
            signal.sigtimedwait([], 0)  # let the handler run here
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert raised.value.code == 128 + signal.SIGTERM


def test_step_time_within_noise_of_two_runs_of_the_same_choice():
    fast, slow = _m("ON_READ", "SUM", 0), _m("ON_WRITE", "SUM", 8)
    fast["step_time_ms"] = {"median": 1.0, "p10": 0.95, "p90": 1.05, "n": 6}
    slow["step_time_ms"] = {"median": 1.5, "p10": 1.45, "p90": 1.55, "n": 6}
    assert verdict._time_note(fast, slow) == "median step 1.00 ms against 1.50 ms"
    assert verdict._time_note(fast, slow, noise_ms=0.3) == "step time within noise"
    assert verdict._time_note(fast, slow, noise_ms=0.2) == "median step 1.00 ms against 1.50 ms"


SHORT = SNIPPET + textwrap.dedent("""\


    for i in range(3):
        step(tf.fill([4], float(i)))
    print(total.numpy())  # a read after the last step: not charged to any step
    """)


def test_tf_short_and_strategyless_programs(tensorflow_required, tmp_path):  # noqa: F811
    short = tmp_path / "short.py"
    short.write_text(SHORT)
    result = _profile("--run", str(short), "--steps", "4", "--warmup", "3")
    assert result.returncode == 2, result.stderr
    assert "ran 3 steps, all of them warm-up (--warmup 3)" in result.stderr
    result = _profile("--run", str(short), "--steps", "4", "--warmup", "1", "--format", "json")
    assert result.returncode == 0, result.stderr[-3000:]
    data = json.loads(result.stdout)
    assert (data["measured_steps"], data["program_steps"]) == (2, 3)
    (site,) = data["sites"]
    written = _choice(site, "ON_WRITE", "SUM")
    assert written["reductions_per_step"] == 1 and written["bytes_per_step"] == 4
    assert _choice(site, "ON_READ", "SUM")["bytes_per_step"] == 0  # the final read is not a step
    assert "2 measured (asked for 4: the program ended after 3 steps" in report.render_text(data)
    result = _profile("--run", "tests/fixtures/profile/programs/no_strategy.py", *FEW)
    assert result.returncode == 2
    assert "never called strategy.run" in result.stderr and "Traceback" not in result.stderr


def test_tf_variable_made_in_a_tf_function_body_is_its_site(tensorflow_required,  # noqa: F811
                                                            tmp_path):
    # The variable is created on the first call, in AutoGraph's generated code, and that
    # call traces twice (once more after the variable is lifted): one all-reduce per step.
    program = _program(tmp_path, """\
        import tensorflow as tf

        strategy = tf.distribute.MirroredStrategy()


        class Tracker(tf.Module):
            def __init__(self):
                self.total = None

            @tf.function
            def update(self, x):
                if self.total is None:
                    self.total = tf.Variable(0.0, trainable=False,
                                             aggregation=tf.VariableAggregation.SUM)
                strategy.run(lambda v: self.total.assign_add(tf.reduce_sum(v)), args=(x,))


        with strategy.scope():
            tracker = Tracker()
            for i in range(10):
                tracker.update(tf.fill([4], float(i)))
        """)
    result = _profile("--run", str(program), "--format", "json", "--steps", "3", "--warmup", "1")
    assert result.returncode == 0, result.stderr[-4000:]
    (site,) = json.loads(result.stdout)["sites"]
    assert (site["line"], site["name"]) == (13, "self.total")
    written = _choice(site, "ON_WRITE", "SUM")
    assert (written["reductions_per_step"], written["bytes_per_step"]) == (1, 4)
    assert _choice(site, "ON_READ", "SUM")["reductions_per_step"] == 0


def test_tf_keras_validation_is_not_a_step_and_a_left_thread_does_not_hang(
        tensorflow_required):  # noqa: F811
    # fit's validation runs Keras' test function, which runs strategy.run too: 6 training
    # steps (3 epochs of 2), not 18 with the 12 validation steps.
    programs2 = "tests/fixtures/profile/programs2"
    result = _profile("--run", f"{programs2}/fit_validation.py", "--format", "json",
                      "--steps", "20", "--warmup", "1")
    assert result.returncode == 0, result.stderr[-4000:]
    data = json.loads(result.stdout)
    assert (data["program_steps"], data["ended"]) == (6, "finished"), data
    # Stopped before it joins its logger thread, the program leaves a non-daemon thread:
    # the child must not wait for it at exit (it did, until killed 60 s later).
    result = _profile("--run", f"{programs2}/logger_thread.py", "--steps", "2",
                      "--warmup", "1", timeout=45)
    assert result.returncode == 0, result.stderr[-4000:]


def test_tf_sites_that_matter_but_were_not_made_in_a_scope_are_listed(
        tensorflow_required, tmp_path):  # noqa: F811
    # `outside` matters (SUM written) but is made outside every scope: listed as not created;
    # `plain` is made in the scope but nothing about it matters: neither measured nor listed.
    program = _program(tmp_path, """\
        import tensorflow as tf

        strategy = tf.distribute.MirroredStrategy()
        outside = tf.Variable(0.0, aggregation=tf.VariableAggregation.SUM)
        with strategy.scope():
            total = tf.Variable(0.0, trainable=False, aggregation=tf.VariableAggregation.SUM)
            plain = tf.Variable(1.0)


        @tf.function
        def step(x):
            strategy.run(lambda v: total.assign_add(tf.reduce_sum(v)), args=(x,))


        for i in range(6):
            step(tf.fill([4], float(i)))
        """)
    result = _profile("--run", str(program), "--format", "json", "--steps", "2", "--warmup", "1")
    assert result.returncode == 0, result.stderr[-4000:]
    data = json.loads(result.stdout)
    assert [s["name"] for s in data["sites"]] == ["total"]
    assert [(s["name"], s["line"]) for s in data["not_reached"]] == [("outside", 4)]
    assert data["summary"]["not_reached"] == 1
