"""Machine description and the printed report."""

from __future__ import annotations

import datetime as _dt
import os
import platform
import subprocess
import sys

from benchmarks import REPO_ROOT
from benchmarks.harness import (
    COLD_MAX_X_RUFF,
    MEMORY_MAX_MB,
    PLUGIN_MAX_OVERHEAD,
    TORCHFIX_MIN_SPEEDUP,
    WARM_MAX_X_RUFF,
)


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith(("model name", "hardware", "cpu model")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _mem_total_gb() -> float | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024 / 1e9
    except OSError:
        pass
    return None


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], check=False, cwd=REPO_ROOT, capture_output=True, text=True,
                              timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def machine_info() -> dict:
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    commit = _git("rev-parse", "--short", "HEAD")
    dirty = bool(_git("status", "--porcelain", "--untracked-files=no", "--", "syncadvisor"))
    return {
        "cpu_count": os.cpu_count(),
        "cpus_usable": usable,
        "cpu_model": _cpu_model(),
        "memory_gb": _mem_total_gb(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "python_executable": sys.executable,
        "date_utc": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "git_commit": commit + (" (syncadvisor/ has uncommitted changes)" if dirty else ""),
    }


def _s(v: float | None, digits: int = 2) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def _mb(v: float | None) -> str:
    return "-" if v is None else f"{v:.0f}"


ROW_TARGETS = {
    "syncadvisor-cold": ["cold_vs_ruff", "memory_cold"],
    "syncadvisor-warm": ["warm_vs_ruff", "memory_warm"],
    "flake8-tfs": ["plugin_overhead"],
    "flake8-tfs-cold": ["plugin_overhead_cold"],
    "torchfix": ["vs_torchfix"],
}
ROW_TARGET_TEXT = {
    "syncadvisor-cold": f"<={COLD_MAX_X_RUFF:g}x ruff; <={MEMORY_MAX_MB:g} MB",
    "syncadvisor-warm": f"<={WARM_MAX_X_RUFF:g}x ruff; <={MEMORY_MAX_MB:g} MB",
    "ruff": "(reference)",
    "flake8": "(reference for TFS)",
    "flake8-tfs": f"<=flake8 +{PLUGIN_MAX_OVERHEAD:.0%}",
    "flake8-tfs-cold": f"<=flake8 +{PLUGIN_MAX_OVERHEAD:.0%}",
    "torchfix": f">={TORCHFIX_MIN_SPEEDUP:g}x sa cold",
}


_TARGET_SHORT = {"cold_vs_ruff": "time", "warm_vs_ruff": "time", "memory_cold": "mem",
                 "memory_warm": "mem", "plugin_overhead": "time", "plugin_overhead_cold": "time",
                 "vs_torchfix": "time"}


def _row_verdict(key: str, targets: dict) -> str:
    ids = [i for i in ROW_TARGETS.get(key, []) if i in targets]
    if not ids:
        return ""
    parts = [(_TARGET_SHORT[i], targets[i]["verdict"]) for i in ids]
    verdicts = {v for _, v in parts}
    if len(verdicts) == 1:
        return verdicts.pop()
    return ", ".join(f"{name} {v}" for name, v in parts)


def _fmt_target_value(t: dict) -> str:
    v = t.get("value")
    if v is None:
        return "n/a" + (f" ({t['why_na']})" if t.get("why_na") else "")
    if t["unit"] == "overhead":
        return f"{v:+.1%}"
    if t["unit"] == "MB":
        proc, tree, pss = t.get("largest_process_mb"), t.get("tree_rss_mb"), t.get("tree_pss_mb")
        text = f"largest process {_mb(proc)} MB, tree sum {_mb(tree)} MB (RSS)"
        return text + (f", {_mb(pss)} MB (PSS)" if pss is not None else "")
    prefix = "> " if t.get("lower_bound") else ""
    return f"{prefix}{v:.2f} {t['unit']}"


def _share_detail(share: dict) -> str:
    full_with = share["gc_full_cpu_s"] - share["gc_full_in_plugin_cpu_s"]
    return (f"(the plugin {share['plugin_cpu_s']:.2f} of {share['process_cpu_s']:.2f} CPU-s in "
            f"{share['plugin_calls']:,} calls, plus {share['gc_full_gained_s']:.2f} s more in flake8's "
            f"full collections: {share['without']['gc_full_cpu_s']:.2f} s in a run without it, "
            f"{full_with:.2f} s with it)")


def format_result(res: dict, machine: dict | None = None) -> str:
    c = res["corpus"]
    lines = []
    srcs = ", ".join(f"{s.get('dist', s.get('name'))}=={s['version']}" if "version" in s else s.get("name", "?")
                     for s in c.get("sources", []))
    lines.append(f"== corpus {c['label']}: {c['files']:,} files, {c['lines']:,} lines, "
                 f"{c['bytes'] / 1e6:.1f} MB ({srcs}); paths passed as {res['paths_mode']}")
    if machine:
        lines.append(_machine_line(machine))
    fps = res.get("syncadvisor_sources") or []
    if len(fps) > 1:
        lines.append(f"   WARNING: syncadvisor's source changed during the benchmark ({' -> '.join(map(str, fps))}): "
                     "its runs measured different code")
    la = res.get("loadavg_before"), res.get("loadavg_after")
    if la[0] and la[1]:
        lines.append(f"   load average (1/5/15 min) before {'/'.join(map(str, la[0]))}, "
                     f"after {'/'.join(map(str, la[1]))}: other work on the machine skews timings")
    lines.append(f"   {res['repeats']} timed runs per tool, alternating (round-robin, order rotated each round), "
                 f"{res['warmup']} warm-up run(s) before; timeout {res['timeout_s'] or 'none'}")
    header = (f"{'tool':<20} {'median s':>9} {'min-max s':>15} {'x ruff':>8} {'peak MB':>8} {'tree MB':>8}  "
              f"{'target':<22} result")
    lines.append(header)
    lines.append("-" * len(header))
    targets = {t["id"]: t for t in res["targets"]}
    for key, d in res["tools"].items():
        if d["status"] == "n/a":
            med, rng, ratio = "n/a", "", ""
        elif d["status"] == "timeout":
            med, rng, ratio = f"> {d['lower_bound_s']:g}", "", (
                f"> {d['ratio_to_ruff_lower_bound']:.0f}" if d.get("ratio_to_ruff_lower_bound") else "")
        elif d["status"] == "error":
            med, rng, ratio = "error", "", ""
        else:
            med = _s(d["median_s"])
            rng = f"{_s(d['min_s'])}-{_s(d['max_s'])}"
            ratio = f"{d['ratio_to_ruff']:.2f}" if d.get("ratio_to_ruff") is not None else "-"
        lines.append(f"{d['label']:<20} {med:>9} {rng:>15} {ratio:>8} {_mb(d['maxrss_mb']):>8} "
                     f"{_mb(d['tree_rss_mb']):>8}  {ROW_TARGET_TEXT.get(key, ''):<22} {_row_verdict(key, targets)}")
    for key, d in res["tools"].items():
        if d.get("reprimed"):
            lines.append(f"  {d['label']}: cache refilled (untimed) {d['reprimed']} time(s) because "
                         "syncadvisor's source changed between runs")
        if d["status"] in ("n/a", "error") and d.get("reason"):
            lines.append(f"  {d['label']}: {d['status']}: {d['reason']}")
    info = res.get("tool_info", {})
    for key, i in info.items():
        if i.get("note") and res["tools"].get(key, {}).get("status") != "n/a":
            lines.append(f"  {res['tools'][key]['label']}: {i['note']}")
    lines.append("Targets:")
    for t in res["targets"]:
        lines.append(f"  [{t['verdict']:<6}] {t['description']}: {_fmt_target_value(t)}")
        if t["id"] == "plugin_share" and t.get("value") is not None:
            lines.append("           " + _share_detail(res["plugin_share"]))
    return "\n".join(lines)


def _machine_line(m: dict) -> str:
    mem = f", {m['memory_gb']:.1f} GB RAM" if m.get("memory_gb") else ""
    return (f"   machine: {m['cpus_usable']} usable CPUs of {m['cpu_count']} ({m['cpu_model']}){mem}, "
            f"{m['platform']}, Python {m['python']}, {m['date_utc']}, syncadvisor at {m['git_commit'] or '?'}")


def format_scaling(sc: dict) -> str:
    if sc.get("status") != "ok":
        return f"== scaling: n/a ({sc.get('reason', '')})"
    lines = [f"== scaling: {sc['tool']} ({sc['command']}), copies of the corpus side by side"]
    fps = sc.get("syncadvisor_sources") or []
    if len(fps) > 1:
        lines.append(f"   WARNING: syncadvisor's source changed during the scaling runs ({' -> '.join(map(str, fps))})")
    if sc.get("loadavg_after"):
        lines.append(f"   load average after: {'/'.join(map(str, sc['loadavg_after']))}")
    header = (f"{'size':<5} {'files':>7} {'lines':>10} {'median s':>9} {'min-max s':>15} {'s/1k lines':>11} "
              f"{'x 1x':>6} {'peak MB':>8} {'tree MB':>8}")
    lines.append(header)
    lines.append("-" * len(header))
    for s in sc["sizes"]:
        med = _s(s["median_s"]) if s["status"] == "ok" else s["status"]
        rng = f"{_s(s['min_s'])}-{_s(s['max_s'])}" if s["min_s"] is not None else ""
        lines.append(f"{str(s['factor']) + 'x':<5} {s['files']:>7,} {s['lines']:>10,} {med:>9} {rng:>15} "
                     f"{_s(s['s_per_kloc'], 4):>11} {_s(s['time_vs_1x']):>6} {_mb(s['maxrss_mb']):>8} "
                     f"{_mb(s['tree_rss_mb']):>8}")
    t = sc["target"]
    val = "n/a" if t["value"] is None else f"worst {t['value']:.2f}x the 1x rate"
    lines.append(f"  [{t['verdict']:<6}] {t['description']}: {val}")
    return "\n".join(lines)
