"""Alternating timed runs, their summary, and the issue-6 targets."""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

from benchmarks.corpus import Corpus
from benchmarks.measure import MEMORY_METHOD, RunResult, run_measured
from benchmarks.tools import PLUGIN_SHARE, Tool, source_fingerprint, tool_info

# The targets.
COLD_MAX_X_RUFF = 3.5
WARM_MAX_X_RUFF = 1.0
PLUGIN_MAX_OVERHEAD = 0.10
TORCHFIX_MIN_SPEEDUP = 50.0
MEMORY_MAX_MB = 300.0
LINEARITY_TOLERANCE = 1.25  # s per 1,000 lines at 2x and 4x at most 25% above 1x


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _loadavg() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (OSError, AttributeError):
        return None


def path_args(corpus: Corpus) -> tuple[list[str], str]:
    """The explicit file list when it fits comfortably on a command line, else the top folders."""
    try:
        arg_max = os.sysconf("SC_ARG_MAX")
    except (ValueError, OSError, AttributeError):
        arg_max = 128 * 1024
    size = sum(len(f) + 1 for f in corpus.files)
    if size < arg_max // 4 and all(len(f) < 4000 for f in corpus.files):
        return list(corpus.files), "files"
    return list(corpus.top_dirs), "directories"


def preread(corpus: Corpus) -> None:
    """Read every file once so that the first timed tool does not pay for a cold page cache."""
    for rel in corpus.files:
        (corpus.root / rel).read_bytes()


def _env(tool: Tool) -> dict | None:
    return {**os.environ, **tool.env} if tool.env else None


def _bad_stderr(tool: Tool, r: RunResult) -> str | None:
    return next((b for b in tool.bad_stderr if b in r.stderr_tail), None)


def _error_reason(tool: Tool, r: RunResult) -> str:
    tail = r.stderr_tail.strip().splitlines()
    bad = _bad_stderr(tool, r)
    why = f"stderr says {bad!r}" if bad else f"rc={r.returncode}"
    return f"{why}: " + (tail[-1][:200] if tail else "")


def _summarize(tool: Tool, runs: list[RunResult], status: str, reason: str, timeout: float | None) -> dict:
    secs = [r.seconds for r in runs if not r.timed_out]
    d = {
        "label": tool.label,
        "status": status,            # ok | n/a | error | timeout
        "reason": reason,
        "runs": [r.to_dict() for r in runs],
        "n": len(secs),
        "median_s": statistics.median(secs) if secs and status == "ok" else None,
        "min_s": min(secs) if secs else None,
        "max_s": max(secs) if secs else None,
        "lower_bound_s": timeout if status == "timeout" else None,
        "maxrss_mb": max((r.maxrss_mb for r in runs if r.maxrss_mb is not None), default=None),
        "tree_rss_mb": max((r.tree_rss_mb for r in runs if r.tree_rss_mb is not None), default=None),
    }
    return d


def run_tools(corpus: Corpus, tools: list[Tool], repeats: int = 3, warmup: int = 1,
              timeout: float | None = None, log=_log) -> dict:
    """Time every available tool ``repeats`` times on the corpus, round-robin, rotating the order."""
    args, mode = path_args(corpus)
    if mode == "directories":
        log("[bench] warning: the file list is too long for one command line; passing folders, "
            "so each tool's own exclusion rules decide what is checked")
    preread(corpus)
    load_before = _loadavg()
    runs: dict[str, list[RunResult]] = {t.key: [] for t in tools}
    status: dict[str, str] = {t.key: ("ok" if t.available else "n/a") for t in tools}
    reason: dict[str, str] = {t.key: t.na_reason for t in tools}

    fingerprints: list[str | None] = [source_fingerprint()]
    primed_with: dict[str, str | None] = {}
    reprimes: dict[str, int] = {t.key: 0 for t in tools}

    def one(tool: Tool, timed: bool) -> RunResult | None:
        if tool.prime and timed and primed_with.get(tool.key) != source_fingerprint():
            # "Warm" means nothing changed since the last run; syncadvisor's cache key covers its own
            # sources, so after an edit the cache is (rightly) cold.  Refill it, untimed, and count it.
            log(f"  {tool.key:18s} re-priming: syncadvisor's source changed since the cache was filled")
            reprimes[tool.key] += 1
            one(tool, timed=False)
            if status[tool.key] != "ok":
                return None
        r = run_measured(tool.argv + args, cwd=corpus.root, timeout=timeout, env=_env(tool))
        if tool.key.startswith("syncadvisor") or tool.key.startswith("flake8-tfs"):
            r.source = source_fingerprint()
            if r.source != fingerprints[-1]:
                fingerprints.append(r.source)
                log(f"[bench] warning: syncadvisor's source changed during the benchmark (now {r.source})")
            if tool.prime and not timed:
                primed_with[tool.key] = r.source
        what = "run" if timed else "warm-up"
        if r.timed_out:
            log(f"  {tool.key:18s} {what}: > {timeout:g} s (timed out)")
            status[tool.key], reason[tool.key] = "timeout", f"> {timeout:g} s"
        elif r.returncode not in tool.ok_returncodes or _bad_stderr(tool, r):
            status[tool.key] = "error"
            reason[tool.key] = _error_reason(tool, r)
            log(f"  {tool.key:18s} {what}: error {reason[tool.key]}")
        else:
            log(f"  {tool.key:18s} {what}: {r.seconds:8.2f} s  {r.maxrss_mb or 0:7.0f} MB"
                + (f" (tree {r.tree_rss_mb:.0f} MB)" if r.tree_rss_mb is not None else ""))
        if timed or r.timed_out:
            runs[tool.key].append(r)
        return r

    active = [t for t in tools if t.available]
    log(f"[bench] {corpus.label}: {len(corpus.files):,} files, {corpus.lines:,} lines; "
        f"tools: {', '.join(t.key for t in active) or '(none)'}; repeats {repeats}, warm-up {warmup}")
    for t in active:
        n = 1 if t.prime else 0
        if not t.expensive:
            n = max(n, warmup)
        for _ in range(n):
            if status[t.key] == "ok":
                one(t, timed=False)
    for rnd in range(repeats):
        live = [t for t in active if status[t.key] == "ok"]
        if not live:
            break
        k = rnd % len(live)
        order = live[k:] + live[:k]
        log(f"[bench] round {rnd + 1}/{repeats}: {' -> '.join(t.key for t in order)}")
        for t in order:
            if status[t.key] == "ok":
                one(t, timed=True)

    # Memory as the tree really holds it (PSS: a forked worker's pages shared with its
    # parent count once), sampled in one more run each, untimed: sampling it is costly.
    pss: dict[str, float | None] = {}
    for t in active:
        if t.key.startswith("syncadvisor") and status[t.key] == "ok":
            r = run_measured(t.argv + args, cwd=corpus.root, timeout=timeout, env=_env(t),
                             track_pss=True)
            pss[t.key] = r.tree_pss_mb
            log(f"  {t.key:18s} memory run (PSS): {r.seconds:8.2f} s  tree PSS "
                f"{r.tree_pss_mb or 0:.0f} MB, largest process {r.maxrss_mb or 0:.0f} MB")
    share = None
    cold_plugin = next((t for t in active if t.key == "flake8-tfs-cold"), None)
    if cold_plugin is not None and status[cold_plugin.key] == "ok":
        share = run_plugin_share(corpus, cold_plugin, args, timeout, log)
    summary = {t.key: _summarize(t, runs[t.key], status[t.key], reason[t.key], timeout) for t in tools}
    for key, value in pss.items():
        summary[key]["tree_pss_mb"] = value
    for key, n in reprimes.items():
        summary[key]["reprimed"] = n
    ruff = summary.get("ruff")
    ruff_s = ruff["median_s"] if ruff else None
    for d in summary.values():
        d["ratio_to_ruff"] = (d["median_s"] / ruff_s) if (ruff_s and d["median_s"] is not None) else None
        if ruff_s and d["lower_bound_s"] is not None:
            d["ratio_to_ruff_lower_bound"] = d["lower_bound_s"] / ruff_s
    return {
        "corpus": corpus.describe(),
        "syncadvisor_sources": fingerprints,
        "loadavg_before": load_before,
        "loadavg_after": _loadavg(),
        "paths_mode": mode,
        "repeats": repeats,
        "warmup": warmup,
        "timeout_s": timeout,
        "memory_method": MEMORY_METHOD,
        "tool_info": tool_info(tools),
        "tools": summary,
        "plugin_share": share,
        "targets": evaluate_targets(summary, share),
    }


def run_plugin_share(corpus: Corpus, tool: Tool, args: list[str], timeout: float | None,
                     log=_log) -> dict:
    """The plugin's share of one flake8 -j1 process's CPU time, its cache off, measured in
    that process (benchmarks/plugin_share.py): a ratio of times taken together, which this machine's noise, 10-20% between two flake8 runs, cannot
    tilt. Added to it: what flake8's full collections gained, against a run without the
    plugin (the modules it imports stay, and each full pass looks at them again). Two
    untimed runs."""
    runs = {}
    for name, extra in (("without", ["--without", "syncadvisor"]), ("with", [])):
        with tempfile.TemporaryDirectory() as scratch:
            out = Path(scratch) / "share.json"
            argv = [sys.executable, str(PLUGIN_SHARE), str(out), *extra, "--", "--isolated",
                    "-j", "1", "--exit-zero"]
            r = run_measured(argv + args, cwd=corpus.root, timeout=timeout, env=_env(tool),
                             track_tree=False)
            if r.timed_out or r.returncode != 0 or not out.exists():
                why = f"> {timeout:g} s" if r.timed_out else _error_reason(tool, r)
                log(f"  plugin share (flake8 -j1, {name} the plugin): error {why}")
                return {"status": "error", "reason": why}
            runs[name] = json.loads(out.read_text())
    share = dict(runs["with"])
    plain = runs["without"]
    full_with = share["gc_full_cpu_s"] - share["gc_full_in_plugin_cpu_s"]
    gained = max(0.0, full_with - plain["gc_full_cpu_s"])
    own = share["plugin_cpu_s"] + gained
    rest = share["process_cpu_s"] - share["plugin_cpu_s"] - gained
    share.update(status="ok", without=plain, gc_full_gained_s=gained,
                 overhead=own / rest if rest > 0 else None)
    log(f"  plugin share (flake8 -j1): the plugin {share['plugin_cpu_s']:.2f} of "
        f"{share['process_cpu_s']:.2f} CPU-s, flake8's full collections {full_with:.2f} s "
        f"(without it {plain['gc_full_cpu_s']:.2f} s)")
    return share


def _verdict_max(value: float | None, limit: float) -> str:
    if value is None:
        return "n/a"
    return "PASS" if value <= limit else "FAIL"


def evaluate_targets(summary: dict, share: dict | None = None) -> list[dict]:
    """Each target, with the measured value and PASS / FAIL / UNSURE / n/a;
    `share` (run_plugin_share) adds the plugin's share of one flake8 process."""
    def med(k):
        return summary.get(k, {}).get("median_s")

    def status(k):
        return summary.get(k, {}).get("status", "not run")

    targets = []
    ruff, cold = med("ruff"), med("syncadvisor-cold")

    def ratio_target(tid, desc, num_key, limit, unit="x ruff"):
        num = med(num_key)
        value = num / ruff if (num is not None and ruff) else None
        why = "" if value is not None else (
            f"{num_key}: {status(num_key)} {summary.get(num_key, {}).get('reason', '')}".strip()
            if num is None else f"ruff: {status('ruff')}")
        targets.append({"id": tid, "description": desc, "row": num_key, "value": value,
                        "limit": limit, "unit": unit, "verdict": _verdict_max(value, limit), "why_na": why})

    ratio_target("cold_vs_ruff", f"syncadvisor cold <= {COLD_MAX_X_RUFF:g}x ruff --no-cache",
                 "syncadvisor-cold", COLD_MAX_X_RUFF)
    ratio_target("warm_vs_ruff", f"syncadvisor warm <= {WARM_MAX_X_RUFF:g}x ruff --no-cache",
                 "syncadvisor-warm", WARM_MAX_X_RUFF)

    plain = med("flake8")
    for tid, key, what in (("plugin_overhead", "flake8-tfs", "cache on, as shipped"),
                           ("plugin_overhead_cold", "flake8-tfs-cold", "SYNCADVISOR_NO_CACHE=1")):
        plug = med(key)
        value = (plug / plain - 1.0) if (plain and plug is not None) else None
        targets.append({
            "id": tid, "description": f"flake8 + TFS plugin ({what}) <= flake8 + {PLUGIN_MAX_OVERHEAD:.0%}",
            "row": key, "value": value, "limit": PLUGIN_MAX_OVERHEAD, "unit": "overhead",
            "verdict": _verdict_max(value, PLUGIN_MAX_OVERHEAD),
            "why_na": "" if value is not None else
            f"flake8: {status('flake8')}; {key}: {status(key)} {summary.get(key, {}).get('reason', '')}".strip(),
        })

    if share is not None:
        value = share.get("overhead")
        targets.append({
            "id": "plugin_share",
            "description": "flake8 + TFS plugin (SYNCADVISOR_NO_CACHE=1), its share of one flake8 -j1 "
                           f"process's CPU <= {PLUGIN_MAX_OVERHEAD:.0%} of the rest (measured in it)",
            "row": None, "value": value, "limit": PLUGIN_MAX_OVERHEAD, "unit": "overhead",
            "verdict": _verdict_max(value, PLUGIN_MAX_OVERHEAD),
            "why_na": "" if value is not None else share.get("reason", ""),
        })

    tf = summary.get("torchfix", {})
    speedup, verdict, bound = None, "n/a", False
    if cold:
        if tf.get("median_s") is not None:
            speedup = tf["median_s"] / cold
            verdict = "PASS" if speedup >= TORCHFIX_MIN_SPEEDUP else "FAIL"
        elif tf.get("lower_bound_s") is not None:
            speedup, bound = tf["lower_bound_s"] / cold, True
            verdict = "PASS" if speedup >= TORCHFIX_MIN_SPEEDUP else "UNSURE"
    targets.append({
        "id": "vs_torchfix", "description": f"syncadvisor cold >= {TORCHFIX_MIN_SPEEDUP:g}x faster than TorchFix",
        "row": "torchfix", "value": speedup, "lower_bound": bound, "limit": TORCHFIX_MIN_SPEEDUP,
        "unit": "x faster", "verdict": verdict,
        "why_na": "" if speedup is not None else f"torchfix: {status('torchfix')} {tf.get('reason', '')}".strip(),
    })

    for key in ("syncadvisor-cold", "syncadvisor-warm"):
        d = summary.get(key, {})
        proc, tree, pss = d.get("maxrss_mb"), d.get("tree_rss_mb"), d.get("tree_pss_mb")
        if proc is None:
            verdict = "n/a"
        elif proc > MEMORY_MAX_MB or (pss is not None and pss > MEMORY_MAX_MB):
            verdict = "FAIL"
        elif pss is not None or tree is None or tree <= MEMORY_MAX_MB:
            verdict = "PASS"  # the largest process and the whole tree (PSS, or even RSS) fit
        else:
            verdict = "UNSURE"  # largest process fits, the sampled tree sum (shared pages counted per process) does not
        targets.append({
            "id": f"memory_{key.split('-')[1]}", "description": f"{key} peak memory <= {MEMORY_MAX_MB:g} MB",
            "row": key, "value": pss if pss is not None else tree if tree is not None else proc,
            "largest_process_mb": proc,
            "tree_rss_mb": tree, "tree_pss_mb": pss, "limit": MEMORY_MAX_MB, "unit": "MB", "verdict": verdict,
            "why_na": "" if proc is not None else f"{key}: {status(key)} {d.get('reason', '')}".strip(),
        })
    return targets


def run_scaling(base: Corpus, copies: list[tuple[int, Corpus]], tool: Tool, repeats: int = 3,
                warmup: int = 1, timeout: float | None = None, log=_log) -> dict:
    """``tool`` (syncadvisor cold) on 1x, 2x, 4x copies of ``base``, sizes alternating per round."""
    results: dict[int, list[RunResult]] = {k: [] for k, _ in copies}
    failed: dict[int, str] = {}
    if not tool.available:
        return {"tool": tool.key, "status": "n/a", "reason": tool.na_reason, "sizes": []}
    argsets = {k: path_args(c)[0] for k, c in copies}
    for _, c in copies:
        preread(c)
    src_before = source_fingerprint()
    log(f"[scaling] {tool.key} on {', '.join(f'{k}x' for k, _ in copies)} copies of {base.label}")
    for rnd in range(warmup + repeats):
        timed = rnd >= warmup
        order = copies[rnd % len(copies):] + copies[:rnd % len(copies)]
        for k, c in order:
            if k in failed:
                continue
            r = run_measured(tool.argv + argsets[k], cwd=c.root, timeout=timeout, env=_env(tool))
            if r.timed_out:
                failed[k] = f"> {timeout:g} s"
            elif r.returncode not in tool.ok_returncodes or _bad_stderr(tool, r):
                failed[k] = "error: " + _error_reason(tool, r)
            log(f"  {k}x {'run' if timed else 'warm-up'}: {r.seconds:8.2f} s  {r.maxrss_mb or 0:7.0f} MB"
                + (f"  {failed[k]}" if k in failed else ""))
            if timed:
                results[k].append(r)
    sizes = []
    for k, c in copies:
        secs = [r.seconds for r in results[k] if not r.timed_out]
        med = statistics.median(secs) if secs and k not in failed else None
        sizes.append({
            "factor": k, "files": len(c.files), "lines": c.lines, "status": failed.get(k, "ok"),
            "runs": [r.to_dict() for r in results[k]],
            "median_s": med, "min_s": min(secs) if secs else None, "max_s": max(secs) if secs else None,
            "s_per_kloc": (med / (c.lines / 1000)) if med is not None and c.lines else None,
            "maxrss_mb": max((r.maxrss_mb for r in results[k] if r.maxrss_mb is not None), default=None),
            "tree_rss_mb": max((r.tree_rss_mb for r in results[k] if r.tree_rss_mb is not None), default=None),
        })
    base_rate = sizes[0]["s_per_kloc"] if sizes else None
    base_med = sizes[0]["median_s"] if sizes else None
    for s in sizes:
        s["time_vs_1x"] = (s["median_s"] / base_med) if (base_med and s["median_s"] is not None) else None
    rates = [s["s_per_kloc"] for s in sizes[1:]]
    if base_rate and rates and all(r is not None for r in rates):
        worst = max(rates) / base_rate
        verdict = "PASS" if worst <= LINEARITY_TOLERANCE else "FAIL"
    else:
        worst, verdict = None, "n/a"
    src_after = source_fingerprint()
    return {
        "tool": tool.key, "command": tool.display(), "status": "ok", "sizes": sizes,
        "syncadvisor_sources": [src_before] + ([src_after] if src_after != src_before else []),
        "loadavg_after": _loadavg(),
        "target": {"id": "linearity",
                   "description": "time linear in size: s per 1,000 lines at 2x/4x "
                                  f"<= {LINEARITY_TOLERANCE:g}x that at 1x",
                   "value": worst, "limit": LINEARITY_TOLERANCE, "unit": "x rate at 1x", "verdict": verdict},
    }


def relpath_or_abs(p: Path) -> str:
    try:
        return str(p.relative_to(Path.cwd()))
    except ValueError:
        return str(p)
