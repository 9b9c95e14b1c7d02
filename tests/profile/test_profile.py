"""`syncadvisor profile`: the runtime profiler (issue 7).

Two halves:

- without TensorFlow (always run): `syncadvisor --help` and the profiler's static modules import
  neither TensorFlow, Keras nor numpy; a missing TensorFlow gives the one-line install hint and
  exit 2; the planning, recommendation and text rendering work on plain data.
- with TensorFlow (`test_tf_*`): the real CLI in subprocesses -- one process for everything on
  MirroredStrategy over 2 logical CPU devices (TensorFlow fixes its devices per process), and two
  local workers on loopback ports for MultiWorkerMirroredStrategy. Skipped when TensorFlow is not
  installed, unless SYNCADVISOR_REQUIRE_TF=1 (then they fail).

Only counts, errors and agreement are asserted: the step times are reported, never compared.
"""
from __future__ import annotations

import importlib.util
import json
import os
import socket
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from syncadvisor.profile import plan, replay, report, verdict
from tests import paths

ROOT = paths.REPO
FIXTURES = Path("tests") / "fixtures" / "profile"  # relative to ROOT: reported paths stay short
TRAIN_LOOP = str(FIXTURES / "train_loop.py")
ACCUMULATOR = str(FIXTURES / "accumulator.py")
REQUIRE_TF = os.environ.get("SYNCADVISOR_REQUIRE_TF") == "1"
HAVE_TF = importlib.util.find_spec("tensorflow") is not None
FAST = ["--steps", "3", "--warmup", "1"]
CANONICAL_KINDS = {"trainable-weight", "metric-accumulator", "step-counter", "moving-statistic",
                   "gradient-accumulator"}
NONE_SYNC_ERROR = "`NONE` variable synchronization mode is not supported"


def _env():
    env = dict(os.environ)
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("TF_CONFIG", None)
    return env


def _python(code: str, *args: str, timeout: float = 120, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, env=env or _env(),
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def tensorflow_required():
    if not HAVE_TF:
        if REQUIRE_TF:
            pytest.fail("SYNCADVISOR_REQUIRE_TF=1 but TensorFlow is not installed")
        pytest.skip("TensorFlow is not installed (pip install 'syncadvisor[profile]')")


# --------------------------------------------------------------------------------------------
# Without TensorFlow
# --------------------------------------------------------------------------------------------

def test_help_and_static_modules_do_not_import_tensorflow():
    code = (
        "import sys\n"
        "from syncadvisor.cli import build_parser\n"
        "parser = build_parser()\n"
        "parser.parse_args(['profile', '--steps', '2'])\n"
        "import syncadvisor.profile.cli, syncadvisor.profile.plan, syncadvisor.profile.advice\n"
        "import syncadvisor.profile.report, syncadvisor.profile.plot, syncadvisor.profile.runs\n"
        "import syncadvisor.profile.compare, syncadvisor.profile.verdict\n"
        "import syncadvisor.profile.replay, syncadvisor.profile.program_cli\n"
        "loaded = [m for m in ('tensorflow', 'keras', 'numpy', 'matplotlib') if m in sys.modules]\n"
        "assert not loaded, loaded\n"
        "print('clean')\n"
    )
    result = _python(code)
    assert result.returncode == 0, result.stderr
    assert "clean" in result.stdout


def test_without_tensorflow_one_line_install_hint():
    code = (
        "import sys\n"
        "sys.modules['tensorflow'] = None  # as if it were not installed\n"
        "from syncadvisor.cli import main\n"
        "sys.exit(main(['profile']))\n"
    )
    result = _python(code)
    assert result.returncode == 2
    lines = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert "pip install 'syncadvisor[profile]'" in lines[0]


def test_bad_arguments_are_usage_errors():
    result = _python("import sys; from syncadvisor.cli import main; "
                     "sys.exit(main(['profile', '--steps', '0']))")
    assert result.returncode == 2
    assert "--steps" in result.stderr


def test_canonical_patterns_and_their_references():
    sites = plan.canonical_sites()
    by_kind = {s.pattern.kind: s for s in sites}
    assert set(by_kind) == CANONICAL_KINDS
    refs = {kind: s.pattern.reference for kind, s in by_kind.items()}
    assert refs == {
        "trainable-weight": ("AUTO", "NONE"),
        "metric-accumulator": ("ON_WRITE", "SUM"),
        "step-counter": ("ON_WRITE", "ONLY_FIRST_REPLICA"),
        "moving-statistic": ("ON_WRITE", "MEAN"),
        "gradient-accumulator": ("ON_WRITE", "SUM"),
    }
    assert by_kind["trainable-weight"].pattern.trainable
    assert by_kind["step-counter"].pattern.dtype == "int64"
    assert len(plan.CHOICES) == 16


def test_reference_choice_by_update_kind():
    U = plan.Update
    assert plan.reference_choice([U("assign_add", "per-replica", True)], "float32") == \
        ("ON_WRITE", "SUM")
    assert plan.reference_choice([U("assign", "per-replica", True)], "float32") == \
        ("ON_WRITE", "MEAN")
    assert plan.reference_choice([U("assign", "per-replica", True)], "int32") == \
        ("ON_WRITE", "ONLY_FIRST_REPLICA")
    assert plan.reference_choice([U("scatter_add", "per-replica", True)], "float32") == \
        ("ON_WRITE", "ONLY_FIRST_REPLICA")
    assert plan.reference_choice([U("assign_add", "python-number", True)], "int64") == \
        ("ON_WRITE", "ONLY_FIRST_REPLICA")
    assert plan.reference_choice([U("assign_add", "per-replica", False)], "float32") == \
        ("AUTO", "NONE")
    assert plan.reference_choice([U(plan.GRADIENT, "per-replica", True)], "float32") == \
        ("AUTO", "NONE")


def test_fixture_sites_are_planned_from_the_static_model():
    from syncadvisor.api import linked_files

    specs = {}
    has_usage_model = False
    for lf in linked_files([str(ROOT / TRAIN_LOOP)]):
        for site in lf.sites:
            spec = plan.site_spec(site)
            specs[spec.name] = spec
            has_usage_model = has_usage_model or bool(getattr(site, "updates", None))
    assert set(specs) == {"kernel", "loss_total", "step", "scratch"}
    assert specs["kernel"].pattern.shape == (8, 4)
    assert specs["kernel"].pattern.trainable
    assert specs["loss_total"].pattern.shape == ()
    assert specs["loss_total"].current == ("ON_WRITE", "SUM")
    assert specs["step"].pattern.dtype == "int64"
    assert specs["scratch"].current[0] == "NONE"
    assert specs["scratch"].pattern.shape == (4,)
    if has_usage_model:  # the updates come from the code
        assert specs["loss_total"].pattern.updates == \
            (plan.Update("assign_add", "per-replica", True),)
        assert specs["loss_total"].pattern.reference == ("ON_WRITE", "SUM")
        assert specs["step"].pattern.updates[0].value == "python-number"
    # no update for the kernel: the documented default for a trainable variable
    assert specs["kernel"].pattern.updates[0].method == plan.GRADIENT
    assert specs["kernel"].pattern.source == "default"


def _m(spec, choice, reductions=0, transfers=0, agree=True, error=None):
    """A replayed measurement, as `replay._measure` makes it."""
    implied = plan.normalized(spec.pattern.reference)
    return {"synchronization": choice[0], "aggregation": choice[1],
            "choice": plan.choice_name(choice, spec.current),
            "as_written": choice == plan.normalized(spec.current), "reference": choice == implied,
            "step_time_ms": None if error else {"median": 1.0, "p10": 0.9, "p90": 1.2},
            "reductions_per_step": None if error else reductions,
            "transfers_per_step": None if error else transfers,
            "bytes_per_step": None if error else 4 * (reductions + transfers),
            "copies_agree": None if error or choice[0] == "ON_READ" else agree,
            "values_agree": None if error else agree, "error": error,
            "error_stage": "create" if error else None}


def test_replayed_verdict_uses_counts_and_names_findings():
    spec = plan.canonical_sites()[1]  # metric accumulator, written AUTO + SUM
    spec.findings = [plan.FindingRef("TFS301", 5, "info", "prefer ON_READ"),
                     plan.FindingRef("TFS304", 5, "info", "positional")]
    measurements = [
        _m(spec, ("ON_WRITE", "SUM"), 1, 2), _m(spec, ("ON_READ", "SUM"), 0, 0),
        _m(spec, ("ON_WRITE", "NONE"), 0, 0, agree=False),
        _m(spec, ("NONE", "NONE"), error="ValueError: no"),
    ]
    decided = verdict.decide(spec, measurements, against="the reference AUTO + SUM")
    assert decided["verdict"]["action"] == verdict.SWITCH
    assert decided["verdict"]["text"].startswith("switch to ON_READ + SUM: 3 all-reduces")
    verdicts = {f["code"]: f["verdict"] for f in decided["static_findings"]}
    assert verdicts == {"TFS301": "agrees", "TFS304": "not measured"}
    # nothing usable: no recommendation, and the verdict says why
    decided = verdict.decide(spec, [_m(spec, ("ON_WRITE", "SUM"), error="ValueError: no")])
    assert decided["verdict"]["action"] == verdict.NONE
    assert decided["recommendation"]["synchronization"] is None


def test_replayed_text_report_is_the_run_reports_format():
    spec = plan.canonical_sites()[1]
    measurements = [_m(spec, c, error="ValueError: NONE is refused" if c[0] == "NONE" else None)
                    for c in replay.choices_of(spec)]
    decided = verdict.decide(spec, measurements)
    site = report.site_json(spec, measurements, decided["recommendation"])
    site["verdict"] = decided["verdict"]
    text = report.render_text({
        "mode": "replay", "canonical": True, "tensorflow": "2.21.0",
        "strategy": "MirroredStrategy", "replicas": 2, "devices": ["/cpu:0", "/cpu:1"],
        "device_note": "the CPU split into 2 logical devices", "workers": 1, "steps": 3,
        "warmup": 1, "sites": [site], "summary": verdict.summary([site], 0)})
    lines = text.splitlines()
    assert lines[0] == ("syncadvisor profile: the canonical patterns replayed under "
                        "MirroredStrategy, 2 replicas, TensorFlow 2.21.0")
    assert lines[5].startswith("canonical metric accumulator: ")  # the verdict, first
    assert "1 site measured: " in text
    # the table is the --run table: the same columns, each run named as the verdicts name it
    assert "  choice  " in text and "all-reduces  bytes  step ms" in text
    assert "copies  values  error" in text
    assert text.count("ValueError at creation") == 4
    assert [line.split()[-1] for line in lines if line.startswith("  AUTO + SUM ")] == \
        ["agree"] and " code,ref " in text and "ON_WRITE" not in text


def test_progress_bar_on_a_terminal_and_lines_otherwise():
    import io

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    tty = Terminal()
    bar = report.Progress(4, stream=tty)
    bar.start_site(1, 1, "canonical: metric accumulator")
    for sync, agg in plan.CHOICES[:4]:
        bar.choice(f"{sync} + {agg}")
    bar.finish()
    assert "\r[" in tty.getvalue() and "3/4" in tty.getvalue()
    plain = io.StringIO()
    lines = report.Progress(4, stream=plain)
    lines.start_site(1, 2, "x.py:3 total")
    lines.choice("AUTO + NONE")
    assert plain.getvalue() == "profiling 1/2: x.py:3 total\n"


# --------------------------------------------------------------------------------------------
# With TensorFlow: MirroredStrategy over 2 logical CPU devices, one process
# --------------------------------------------------------------------------------------------

_DRIVER = r"""
import contextlib, io, json, sys
from syncadvisor.cli import main

out = sys.argv[1]
runs = {
    "canonical": ["profile", "--format", "json", "--plot", out + "/canonical.png"],
    "fixture": ["profile", sys.argv[2], "--format", "json"],
    "text": ["profile", sys.argv[3], "--format", "text"],
}
codes = {}
for name, args in runs.items():
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        codes[name] = main(args + sys.argv[4:])
    with open(out + "/" + name + ".out", "w") as handle:
        handle.write(buffer.getvalue())
with open(out + "/codes.json", "w") as handle:
    json.dump(codes, handle)
"""


@pytest.fixture(scope="module")
def mirrored(tensorflow_required, tmp_path_factory):
    out = tmp_path_factory.mktemp("profile")
    result = _python(_DRIVER, str(out), TRAIN_LOOP, ACCUMULATOR, *FAST, timeout=300)
    assert result.returncode == 0, result.stderr[-4000:]
    codes = json.loads((out / "codes.json").read_text())
    assert codes == {"canonical": 0, "fixture": 0, "text": 0}, result.stderr[-4000:]
    return {
        "canonical": json.loads((out / "canonical.out").read_text()),
        "fixture": json.loads((out / "fixture.out").read_text()),
        "text": (out / "text.out").read_text(),
        "png": out / "canonical.png",
        "stderr": result.stderr,
    }


def _by_choice(site):
    return {(m["synchronization"], m["aggregation"]): m for m in site["measurements"]}


DISTINCT = {plan.normalized(c) for c in plan.CHOICES}  # AUTO is ON_WRITE: 12 runs


def _check_measurements(site):
    assert {(m["synchronization"], m["aggregation"]) for m in site["measurements"]} == DISTINCT
    assert len(site["measurements"]) == 12 and site["measurements"][0]["as_written"]
    for m in site["measurements"]:
        assert set(m) >= {"choice", "synchronization", "aggregation", "step_time_ms",
                          "reductions_per_step", "bytes_per_step", "copies_agree",
                          "values_agree", "error"}
        if m["error"] is None:
            t = m["step_time_ms"]
            assert 0 <= t["p10"] <= t["median"] <= t["p90"]
            assert isinstance(m["reductions_per_step"], int) and m["reductions_per_step"] >= 0
            # the replay reads copies where they live: ON_READ + NONE has no value to
            # compare, and never an error a read of its own would make
            if (m["synchronization"], m["aggregation"]) == ("ON_READ", "NONE"):
                assert m["values_agree"] is None
            else:
                assert isinstance(m["values_agree"], bool)
        elif m["error_stage"] == "create":
            assert m["step_time_ms"] is None and m["reductions_per_step"] is None


def test_tf_report_header(mirrored):
    data = mirrored["canonical"]
    assert data["strategy"] == "MirroredStrategy"
    assert data["replicas"] == 2 and len(data["devices"]) == 2
    assert all("CPU" in d for d in data["devices"])
    assert "logical device" in data["device_note"]
    assert data["steps"] == 3
    assert data["tensorflow"].split(".")[0].isdigit()


def test_tf_canonical_patterns_all_measured(mirrored):
    sites = mirrored["canonical"]["sites"]
    assert {s["pattern"]["kind"] for s in sites} == CANONICAL_KINDS
    for site in sites:
        assert site["path"] is None
        _check_measurements(site)
        ref = _by_choice(site)[plan.normalized(
            (site["pattern"]["reference"]["synchronization"],
             site["pattern"]["reference"]["aggregation"]))]
        assert ref["error"] is None and ref["values_agree"] is True and ref["reference"], ref
        rec = site["recommendation"]
        assert rec["synchronization"] and rec["aggregation"] and rec["reason"]
        # the recommendation is a choice that ran and read the reference's values
        chosen = _by_choice(site)[(rec["synchronization"], rec["aggregation"])]
        assert chosen["error"] is None and chosen["values_agree"] is True
        assert site["verdict"]["action"] in ("keep", "switch", "fix") and site["verdict"]["text"]
        for m in site["measurements"]:
            assert m["error"] is not None or m["bytes_per_step"] >= 0


def test_tf_canonical_patterns_linter_and_measurement_agree(mirrored):
    # One truth: every finding the linter reports on a canonical pattern, as commonly
    # written, is one the measurement agrees with or does not speak to.
    judged = [(site["pattern"]["kind"], f["code"], f["verdict"])
              for site in mirrored["canonical"]["sites"]
              for f in site["recommendation"]["static_findings"]]
    assert judged, "the canonical examples carry findings"
    assert [j for j in judged if j[2] == "disagrees"] == []
    assert ("gradient-accumulator", "TFS201", "agrees") in judged


def test_tf_metric_accumulator_on_read_has_fewer_reductions(mirrored):
    site = next(s for s in mirrored["canonical"]["sites"]
                if s["pattern"]["kind"] == "metric-accumulator")
    by = _by_choice(site)
    on_write, on_read = by[("ON_WRITE", "SUM")], by[("ON_READ", "SUM")]
    assert on_write["reductions_per_step"] >= 1
    assert on_read["reductions_per_step"] < on_write["reductions_per_step"]
    assert on_read["values_agree"] is True
    assert on_read["reductions_per_read"] >= 1  # the reduction moves to the read
    assert by[("ON_WRITE", "NONE")]["copies_agree"] is False  # diverge without aggregation
    assert (site["recommendation"]["synchronization"], site["recommendation"]["aggregation"]) == \
        ("ON_READ", "SUM")


def test_tf_illegal_choice_reported_with_its_error(mirrored):
    for site in mirrored["canonical"]["sites"]:
        for agg in plan.AGG_CHOICES:
            m = _by_choice(site)[("NONE", agg)]
            assert m["error"] and NONE_SYNC_ERROR in m["error"], m
            assert m["error"].startswith("ValueError")
            assert m["error_stage"] == "create"
    counter = next(s for s in mirrored["canonical"]["sites"]
                   if s["pattern"]["kind"] == "step-counter")
    mean_int = _by_choice(counter)[("ON_WRITE", "MEAN")]
    assert "non-floating dtype" in mean_int["error"]


def test_tf_user_file_profiled_site_by_site(mirrored):
    data = mirrored["fixture"]
    sites = {s["name"]: s for s in data["sites"]}
    assert list(sites) == ["kernel", "loss_total", "step", "scratch"]
    assert [s["line"] for s in data["sites"]] == [7, 8, 14, 15]
    for site in data["sites"]:
        assert site["path"].endswith("train_loop.py")
        _check_measurements(site)
    assert sites["kernel"]["shape"] == [8, 4] and sites["kernel"]["pattern"]["trainable"]
    assert sites["step"]["dtype"] == "int64"
    loss = sites["loss_total"]
    assert loss["current"] == {"synchronization": "ON_WRITE", "aggregation": "SUM"}
    by = _by_choice(loss)
    assert by[("ON_READ", "SUM")]["reductions_per_step"] < \
        by[("ON_WRITE", "SUM")]["reductions_per_step"]
    # the code's NONE synchronization: the measurement shows the error, and TFS101 agrees
    scratch = sites["scratch"]
    assert NONE_SYNC_ERROR in _by_choice(scratch)[("NONE", "NONE")]["error"]
    verdicts = {f["code"]: f["verdict"] for f in scratch["recommendation"]["static_findings"]}
    assert verdicts.get("TFS101") == "agrees"
    for site in data["sites"]:
        for finding in site["recommendation"]["static_findings"]:
            assert finding["verdict"] in ("agrees", "disagrees", "not measured")
    loss_verdicts = {f["code"]: f["verdict"] for f in loss["recommendation"]["static_findings"]}
    if "TFS301" in loss_verdicts:
        assert loss_verdicts["TFS301"] == "agrees"


def test_tf_text_output(mirrored):
    text = mirrored["text"]
    assert text.startswith("syncadvisor profile: the sites of the files replayed under "
                           "MirroredStrategy, 2 replicas, TensorFlow ")
    assert "the CPU split into 2 logical devices" in text
    lines = text.splitlines()
    assert lines[lines.index("") + 1].startswith(
        "tests/fixtures/profile/accumulator.py:7: total: switch to ON_READ + SUM: ")
    assert "1 site measured: 0 to fix, 1 to switch, 0 to keep" in text
    assert "all-reduces  bytes  step ms" in text
    assert text.count("ValueError at creation") == 4
    assert "profiling 1/1" in mirrored["stderr"]  # progress, on standard error


def test_tf_replayed_step_counter_agrees_with_tfs302s_page(mirrored):
    # TFS302's page: under MirroredStrategy "every replica adds the same constant to its own
    # copy, so NONE keeps the copies equal with no communication ..., while an
    # ONLY_FIRST_REPLICA write is a broadcast". The replay says the same: keep AUTO + NONE.
    page = " ".join((paths.REPO / "docs" / "rules" / "TFS302.md").read_text().split())
    assert "NONE keeps the copies equal with no communication" in page
    assert "ONLY_FIRST_REPLICA write is a broadcast" in page
    (counter,) = [s for s in mirrored["canonical"]["sites"]
                  if s["pattern"]["kind"] == "step-counter"]
    by = _by_choice(counter)
    none, first = by[("ON_WRITE", "NONE")], by[("ON_WRITE", "ONLY_FIRST_REPLICA")]
    assert none["copies_agree"] is True and none["values_agree"] is True
    assert (none["reductions_per_step"], none["transfers_per_step"]) == (0, 0)
    assert first["values_agree"] is True
    assert counter["verdict"]["action"] == "keep"
    assert counter["verdict"]["text"].startswith(
        "keep AUTO + NONE: no measured choice moves less (as written: 0 all-reduces (0 B)")
    assert not [f for f in counter["recommendation"]["static_findings"]
                if f["verdict"] == "disagrees"]


def _png_size(path: Path):
    """Width and height of a PNG, after checking every chunk's CRC and the pixel data size."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG signature"
    pos, chunks, idat = 8, [], b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert zlib.crc32(kind + body) & 0xFFFFFFFF == crc, f"bad CRC in {kind!r}"
        chunks.append(kind)
        if kind == b"IDAT":
            idat += body
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
        pos += 12 + length
    assert chunks[0] == b"IHDR" and chunks[-1] == b"IEND"
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[color]
    raw = zlib.decompress(idat)
    assert len(raw) == height * (1 + width * channels * depth // 8)
    return width, height


def test_tf_plot_is_a_real_png(mirrored):
    if importlib.util.find_spec("matplotlib") is None and not REQUIRE_TF:
        pytest.skip("matplotlib is not installed")
    width, height = _png_size(mirrored["png"])
    assert width >= 400 and height >= 400


# --------------------------------------------------------------------------------------------
# With TensorFlow: MultiWorkerMirroredStrategy, two local workers on loopback ports
# --------------------------------------------------------------------------------------------

def _free_ports(n):
    sockets = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("localhost", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def two_local_workers(*profile_args, timeout=240):
    """`syncadvisor profile ARGS` as two MultiWorkerMirroredStrategy workers on loopback
    ports: each one's parsed JSON report, after both exited 0."""
    ports = _free_ports(2)
    cluster = {"worker": [f"localhost:{p}" for p in ports]}
    workers = []
    for index in range(2):
        env = _env()
        env["TF_CONFIG"] = json.dumps({"cluster": cluster,
                                       "task": {"type": "worker", "index": index}})
        workers.append(subprocess.Popen(
            [sys.executable, "-m", "syncadvisor", "profile", *profile_args, "--format", "json"],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outputs = []
    try:
        for worker in workers:
            outputs.append(worker.communicate(timeout=timeout))
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
                worker.wait()
    for worker, (_, err) in zip(workers, outputs):
        assert worker.returncode == 0, err[-4000:]
    return [json.loads(out) for out, _ in outputs]


@pytest.fixture(scope="module")
def multiworker(tensorflow_required):
    return two_local_workers(ACCUMULATOR, "--strategy", "multiworker", *FAST)


def test_tf_multiworker_two_local_workers(multiworker):
    counts = []
    for data in multiworker:
        assert data["strategy"] == "MultiWorkerMirroredStrategy"
        assert data["replicas"] == 2 and data["workers"] == 2
        (site,) = data["sites"]
        _check_measurements(site)
        by = _by_choice(site)
        assert by[("ON_WRITE", "SUM")]["reductions_per_step"] >= 1
        assert by[("ON_READ", "SUM")]["reductions_per_step"] == 0
        assert by[("ON_READ", "SUM")]["values_agree"] is True
        # one copy per worker: the copies of AUTO + NONE differ across the workers
        assert by[("ON_WRITE", "NONE")]["copies_agree"] is False
        assert NONE_SYNC_ERROR in by[("NONE", "SUM")]["error"]
        counts.append({k: (m["reductions_per_step"], m["values_agree"], bool(m["error"]))
                       for k, m in by.items()})
    assert counts[0] == counts[1], "both workers must measure the same counts"
    assert {d["task"]["index"] for d in multiworker} == {0, 1}
