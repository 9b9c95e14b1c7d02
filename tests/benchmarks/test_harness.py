"""The benchmark harness (benchmarks/) on a tiny generated corpus.

Only cheap tools (syncadvisor and ruff), no downloads, no TorchFix, no flake8.
These tests check the structure of the report, never the timings.
"""

from __future__ import annotations

import importlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests import paths

# benchmarks/ is not an installed package: it is imported from the repository root.
_REPO = paths.REPO
cli = importlib.import_module("benchmarks.cli")
harness = importlib.import_module("benchmarks.harness")
report = importlib.import_module("benchmarks.report")
corpus_mod = importlib.import_module("benchmarks.corpus")
tools_mod = importlib.import_module("benchmarks.tools")

_BIN = str(Path(sys.executable).parent)
pytestmark = pytest.mark.skipif(
    not (shutil.which("ruff", path=_BIN) or shutil.which("ruff"))
    or not (shutil.which("syncadvisor", path=_BIN) or shutil.which("syncadvisor")),
    reason="needs the ruff and syncadvisor executables",
)

MODEL = """\
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy()
with strategy.scope():
    v = tf.Variable(0.0, synchronization=tf.VariableSynchronization.ON_READ)
"""
UTIL = "import os\n\n\ndef here():\n    return os.getcwd()\n"


def _tiny(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "model.py").write_text(MODEL)
    (root / "util.py").write_text(UTIL)
    return root


def _quiet(_msg: str) -> None:
    pass


def test_corpus_from_path_lists_the_same_files_every_tool_gets(tmp_path):
    c = corpus_mod.corpus_from_path(_tiny(tmp_path))
    assert sorted(c.files) == sorted(["util.py", str(Path("pkg") / "model.py")])
    assert c.lines == MODEL.count("\n") + UTIL.count("\n")
    args, mode = harness.path_args(c)
    assert mode == "files" and args == c.files


def test_run_tools_report_structure(tmp_path, monkeypatch):
    monkeypatch.setitem(tools_mod.CACHE_ENV, "SYNCADVISOR_CACHE_DIR", str(tmp_path / "cache"))
    c = corpus_mod.corpus_from_path(_tiny(tmp_path))
    tl = tools_mod.build_tools(["syncadvisor-cold", "syncadvisor-warm", "ruff"], log=_quiet)
    res = harness.run_tools(c, tl, repeats=2, warmup=0, timeout=120, log=_quiet)

    assert res["paths_mode"] == "files"
    assert res["corpus"]["files"] == 2
    assert set(res["tools"]) == {"syncadvisor-cold", "syncadvisor-warm", "ruff"}
    for key in ("syncadvisor-cold", "ruff"):
        d = res["tools"][key]
        assert d["status"] == "ok", d["reason"]
        assert d["n"] == 2 and len(d["runs"]) == 2
        assert d["min_s"] <= d["median_s"] <= d["max_s"]
        assert d["maxrss_mb"] > 0
        if d["tree_rss_mb"] is not None:
            assert d["tree_rss_mb"] >= d["maxrss_mb"]
        for r in d["runs"]:
            assert set(r) >= {"seconds", "returncode", "timed_out", "maxrss_mb", "tree_rss_mb"}
    assert res["tools"]["ruff"]["ratio_to_ruff"] == pytest.approx(1.0)
    assert res["tools"]["syncadvisor-cold"]["ratio_to_ruff"] > 0

    warm = res["tools"]["syncadvisor-warm"]
    if warm["status"] == "n/a":
        assert "no cache" in warm["reason"] and warm["median_s"] is None
    else:
        assert warm["status"] == "ok" and warm["n"] == 2

    targets = {t["id"]: t for t in res["targets"]}
    assert set(targets) == {"cold_vs_ruff", "warm_vs_ruff", "plugin_overhead", "plugin_overhead_cold",
                            "vs_torchfix", "memory_cold", "memory_warm"}
    assert targets["cold_vs_ruff"]["verdict"] in {"PASS", "FAIL"}
    assert targets["memory_cold"]["verdict"] in {"PASS", "FAIL", "UNSURE"}
    assert targets["plugin_overhead"]["verdict"] == "n/a"
    assert targets["vs_torchfix"]["verdict"] == "n/a"

    text = report.format_result(res, report.machine_info())
    for needle in ("syncadvisor cold", "ruff --no-cache", "median s", "x ruff", "peak MB", "Targets:"):
        assert needle in text


def test_cli_json_and_table(tmp_path, capsys):
    root = _tiny(tmp_path)
    out = tmp_path / "out.json"
    results = tmp_path / "RESULTS.md"
    rc = cli.main(["--corpus-path", str(root), "--tools", "syncadvisor-cold,ruff", "--repeats", "1",
                   "--warmup", "0", "--json", str(out), "--results", str(results)])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "syncadvisor cold" in printed and "Targets:" in printed
    recorded = results.read_text()
    assert recorded.startswith("# Benchmark results") and recorded.count("\n## ") == 1
    assert "syncadvisor cold" in recorded and "--corpus-path" in recorded
    data = json.loads(out.read_text())
    assert set(data["machine"]) >= {"cpu_count", "cpu_model", "python", "date_utc"}
    assert len(data["results"]) == 1 and data["scaling"] is None
    res = data["results"][0]
    assert set(res["tools"]) == {"syncadvisor-cold", "ruff"}
    assert res["tool_info"]["ruff"]["argv"][-1] == "--exit-zero"  # the files follow, same for every tool


def test_scaling_copies_and_rates(tmp_path):
    base = corpus_mod.corpus_from_path(_tiny(tmp_path))
    copies = corpus_mod.scaled_copies(base, (1, 2), scale_dir=tmp_path / "scale")
    assert [len(c.files) for _, c in copies] == [2 + 1, 4 + 2]  # + an empty copy<i>/__init__.py each
    assert copies[1][1].lines == 2 * base.lines
    cold = tools_mod.build_tools(["syncadvisor-cold"], log=_quiet)[0]
    sc = harness.run_scaling(base, copies, cold, repeats=1, warmup=0, timeout=120, log=_quiet)
    assert [s["factor"] for s in sc["sizes"]] == [1, 2]
    assert all(s["status"] == "ok" and s["s_per_kloc"] > 0 for s in sc["sizes"])
    assert sc["target"]["verdict"] in {"PASS", "FAIL"}
    assert "s/1k lines" in report.format_scaling(sc)


def test_target_verdicts_from_numbers():
    def row(median=None, status="ok", lower=None, proc=None, tree=None):
        return {"median_s": median, "status": status, "lower_bound_s": lower, "reason": "",
                "maxrss_mb": proc, "tree_rss_mb": tree}

    summary = {
        "ruff": row(1.0),
        "syncadvisor-cold": row(3.0, proc=100, tree=350),
        "syncadvisor-warm": row(1.5, proc=400, tree=400),
        "flake8": row(10.0),
        "flake8-tfs": row(10.5),
        "flake8-tfs-cold": row(12.0),
        "torchfix": row(status="timeout", lower=100.0),
    }
    t = {x["id"]: x for x in harness.evaluate_targets(summary)}
    assert t["cold_vs_ruff"]["verdict"] == "PASS" and t["cold_vs_ruff"]["value"] == pytest.approx(3.0)
    assert t["warm_vs_ruff"]["verdict"] == "FAIL"
    assert t["plugin_overhead"]["verdict"] == "PASS" and t["plugin_overhead"]["value"] == pytest.approx(0.05)
    assert t["plugin_overhead_cold"]["verdict"] == "FAIL" and t["plugin_overhead_cold"]["value"] == pytest.approx(0.2)
    assert t["vs_torchfix"]["verdict"] == "UNSURE" and t["vs_torchfix"]["lower_bound"] is True
    assert t["memory_cold"]["verdict"] == "UNSURE"
    assert t["memory_warm"]["verdict"] == "FAIL"


def test_plugin_share_is_measured_inside_one_flake8_process(tmp_path):
    """The plugin's own CPU time, timed around each of its calls in a flake8 -j1 process."""
    c = corpus_mod.corpus_from_path(_tiny(tmp_path))
    plugged = next(t for t in tools_mod.build_tools(["flake8-tfs-cold"], log=_quiet)
                   if t.key == "flake8-tfs-cold")
    if not plugged.available:
        pytest.skip(plugged.na_reason)
    args, _ = harness.path_args(c)
    share = harness.run_plugin_share(c, plugged, args, timeout=120, log=_quiet)
    assert share["status"] == "ok", share
    assert share["plugin_calls"] == 2  # flake8 ran the plugin once per file
    assert share["without"]["plugin_calls"] == 0  # and not at all in the run without it
    assert 0 < share["plugin_cpu_s"] < share["process_cpu_s"]
    gained = share["gc_full_gained_s"]
    assert gained == max(0.0, share["gc_full_cpu_s"] - share["gc_full_in_plugin_cpu_s"]
                         - share["without"]["gc_full_cpu_s"])
    own = share["plugin_cpu_s"] + gained
    assert share["overhead"] == pytest.approx(
        own / (share["process_cpu_s"] - share["plugin_cpu_s"] - gained))
    assert 0 <= share["gc_in_plugin_cpu_s"] <= share["gc_cpu_s"]
    assert 0 <= share["gc_full_cpu_s"] <= share["gc_cpu_s"]
    t = {x["id"]: x for x in harness.evaluate_targets({}, share)}
    assert t["plugin_share"]["value"] == share["overhead"]
    assert t["plugin_share"]["verdict"] in {"PASS", "FAIL"}
    assert f"the plugin {share['plugin_cpu_s']:.2f} of {share['process_cpu_s']:.2f} CPU-s in 2 calls" \
        in report._share_detail(share)


def test_plugin_share_needs_flake8_in_one_process(tmp_path):
    result = subprocess.run(
        [sys.executable, str(tools_mod.PLUGIN_SHARE), str(tmp_path / "out.json"), "--", "-j", "2"],
        capture_output=True, text=True)
    assert result.returncode == 1 and "pass -j 1" in result.stderr
    assert not (tmp_path / "out.json").exists()


def test_memory_verdict_uses_the_tree_pss_when_measured():
    """RSS summed over a forked tree counts the parent's pages once per child; PSS does not."""
    def row(proc, tree, pss):
        return {"median_s": 1.0, "status": "ok", "lower_bound_s": None, "reason": "",
                "maxrss_mb": proc, "tree_rss_mb": tree, "tree_pss_mb": pss}

    summary = {"ruff": row(10, 10, None), "syncadvisor-cold": row(200, 550, 280),
               "syncadvisor-warm": row(200, 550, 320)}
    t = {x["id"]: x for x in harness.evaluate_targets(summary)}
    assert t["memory_cold"]["verdict"] == "PASS" and t["memory_cold"]["value"] == 280
    assert t["memory_warm"]["verdict"] == "FAIL"
    assert "280 MB (PSS)" in report._fmt_target_value(t["memory_cold"])


@pytest.mark.skipif(not Path("/proc/self/smaps_rollup").exists(), reason="needs Linux's /proc")
def test_tree_pss_counts_a_forked_childs_shared_pages_once(tmp_path):
    measure = importlib.import_module("benchmarks.measure")
    script = ("import os, time\n"
              "block = bytearray(os.urandom(1 << 20)) * 80  # 80 MB, touched\n"
              "if os.fork() == 0:\n    time.sleep(1.0)\n    os._exit(0)\n"
              "time.sleep(1.0)\nos.wait()\n")
    r = measure.run_measured([sys.executable, "-c", script], cwd=tmp_path, track_pss=True)
    assert r.returncode == 0 and r.tree_pss_mb is not None
    assert r.tree_rss_mb > 160  # the child's inherited copy counted again
    assert 80 < r.tree_pss_mb < r.tree_rss_mb - 50


def test_editor_buffer_and_report(tmp_path):
    """The editor's case on a short run: a 300-line buffer whose edited line changes each
    call, both flake8 rows timed, and a verdict against the 1.25x target."""
    editor = importlib.import_module("benchmarks.editor")
    first, second = editor.buffer(1), editor.buffer(2)
    assert first.count("\n") == editor.LINES and first != second
    flake8 = {t.key: t for t in tools_mod.build_tools(["flake8", "flake8-tfs"], log=_quiet)}
    if not all(t.available for t in flake8.values()):
        pytest.skip("flake8 with the TFS plugin is not available")
    res = editor.run_editor(flake8["flake8"], flake8["flake8-tfs"], calls=2, warmup=0,
                            log=_quiet)
    assert res["status"] == "ok" and res["calls"] == 2
    assert res["plain_median_s"] > 0 and res["plugin_median_s"] > 0
    assert res["verdict"] in {"PASS", "FAIL"}
    assert "flake8 with TFS" in editor.format_editor(res)
