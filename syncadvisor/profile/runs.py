"""`profile --run`: run the user's program once per candidate choice per site, and compare.

No TensorFlow here: the program runs in a child process (`program.py`), which takes runs
one at a time on a pipe and answers each with a JSON line on another, so TensorFlow is
imported once for all runs. The first run is the program as written; it says which sites
the program creates, on how many replicas, and is the baseline every other run differs
from in exactly one site's choice. A run that kills the child (a crash, `os._exit`) or
outlives `--timeout` is reported as that run's error and a new child takes the rest.

A site is profiled when it matters: the linter has a finding about its choice (TFS1xx,
TFS2xx, TFS3xx), or the code spells a synchronization or aggregation, or `--site` names
it; and the program, as written, creates it. Its candidates are the code's choice, the
reference choice (the one that keeps every copy equal with the aggregation its updates
imply, as `plan.reference_choice` says), the default AUTO + NONE, and, for a variable that
is not trainable and written in replica context, ON_READ with the reference's aggregation.
AUTO and ON_WRITE are one choice under the mirrored strategies (TFS303) and run once.
"""
from __future__ import annotations

import json
import os
import re
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..model.tfapi import (AGG_NONE, AGG_SUM, SYNC_AUTO,
                           SYNC_ON_READ, SYNC_ON_WRITE)
from .plan import CHOICES, SiteSpec

Choice = Tuple[str, str]

# Findings about a site's choice: the ones that make a site worth measuring.
MATTERS = ("TFS1", "TFS2", "TFS3")
DEFAULT_TIMEOUT_S = 300.0
_RTOL = 1e-4


class RunFailed(Exception):
    """The program could not be profiled at all (exit 2, with this message)."""


def normalized(choice: Sequence[Optional[str]]) -> Choice:
    """The code's spelling -> the choice that runs: unset is AUTO + NONE, and AUTO is
    ON_WRITE under the mirrored strategies (which is all `--run` measures)."""
    sync = choice[0] or SYNC_AUTO
    agg = choice[1] or AGG_NONE
    return (SYNC_ON_WRITE if sync == SYNC_AUTO else sync, agg)


def matters(spec: SiteSpec) -> bool:
    if spec.explicit:
        return True
    return any(f.code.startswith(MATTERS) for f in spec.findings)


def candidates(spec: SiteSpec, everything: bool = False) -> List[Choice]:
    """The choices to run for a site, the code's first."""
    if everything:
        return list(dict.fromkeys([normalized(spec.current)] + [normalized(c) for c in CHOICES]))
    pattern = spec.pattern
    reference = normalized(pattern.reference)
    wanted = [normalized(spec.current), reference, normalized((SYNC_AUTO, AGG_NONE))]
    replica_writes = any(u.replica_context and u.method != "gradient" for u in pattern.updates)
    if not pattern.trainable and replica_writes:
        agg = reference[1] if reference[1] != AGG_NONE else AGG_SUM
        wanted.append((SYNC_ON_READ, agg))
        wanted.append((SYNC_ON_WRITE, agg))
    return list(dict.fromkeys(wanted))


# --- the child process ------------------------------------------------------------------------

class _Child:
    def __init__(self, spec: Dict[str, Any], log_path: str, verbose: bool):
        cmd_r, self._cmd_w = os.pipe()
        self._res_r, res_w = os.pipe()
        spec = dict(spec, commands_fd=cmd_r, results_fd=res_w)
        spec_path = os.path.join(os.path.dirname(log_path), f"spec-{os.getpid()}-{id(self)}.json")
        with open(spec_path, "w", encoding="utf-8") as handle:
            json.dump(spec, handle)
        env = dict(os.environ)
        if not verbose:
            env["TF_CPP_MIN_LOG_LEVEL"] = "3"
        env["PYTHONUNBUFFERED"] = "1"
        self._log = open(log_path, "ab")
        out = None if verbose else self._log
        self.process = subprocess.Popen(
            [sys.executable, "-m", "syncadvisor.profile.program", spec_path],
            stdin=subprocess.DEVNULL, stdout=sys.stderr if verbose else out,
            stderr=None if verbose else out, pass_fds=(cmd_r, res_w), env=env)
        os.close(cmd_r)
        os.close(res_w)
        self._buffer = b""

    def ask(self, run: Dict[str, Any], timeout: float) -> Optional[Dict[str, Any]]:
        """The run's result; None when the child ended or timed out (then it is killed)."""
        try:
            os.write(self._cmd_w, (json.dumps(run) + "\n").encode())
        except OSError:
            return None
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                self.close(kill=True)
                return {"timed_out": True}
            ready, _, _ = select.select([self._res_r], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._res_r, 1 << 16)
            if not chunk:
                return None
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)

    def close(self, kill: bool = False) -> Optional[int]:
        try:
            os.close(self._cmd_w)
        except OSError:
            pass
        if kill:
            self.process.kill()
        try:
            code = self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        try:
            os.close(self._res_r)
        except OSError:
            pass
        self._log.close()
        return code


# TensorFlow's C++ side (glog lines, absl's preamble), which writes before any log level applies.
_TF_LOG = re.compile(r"^([IWEF]\d{4} \d\d:\d\d:\d\d|WARNING: All log messages before absl)")


def _log_tail(path: str, lines: int = 8, skip_tensorflow: bool = False) -> str:
    try:
        with open(path, "rb") as handle:
            text = handle.read()[-8000:].decode("utf-8", "replace")
    except OSError:
        return ""
    kept = [line for line in text.splitlines()
            if line.strip() and not (skip_tensorflow and _TF_LOG.match(line))]
    return "\n".join(kept[-lines:])


class Runner:
    """Runs, one child at a time; a fresh child after one dies (or for every run)."""

    def __init__(self, spec: Dict[str, Any], work: str, verbose: bool, timeout: float,
                 fresh_each_run: bool):
        self.spec = spec
        self.work = work
        self.verbose = verbose
        self.timeout = timeout
        self.fresh = fresh_each_run
        self.child: Optional[_Child] = None
        self.log = os.path.join(work, "program.log")

    def run(self, run: Dict[str, Any]) -> Dict[str, Any]:
        if self.child is None:
            self.child = _Child(self.spec, self.log, self.verbose)
        result = self.child.ask(run, self.timeout)
        if result is not None and not result.get("timed_out") and not self.fresh:
            return result
        timed_out = bool(result and result.get("timed_out"))
        code = self.child.close(kill=timed_out)
        self.child = None
        if result is not None and not timed_out:
            return result
        if timed_out:
            error = f"the program did not finish its steps within {self.timeout:g} s"
        else:
            error = f"the program's process ended with exit code {code} during this run"
            tail = "" if self.verbose else _log_tail(self.log)
            if tail:
                error += ": " + tail.splitlines()[-1]
        return {"id": run["id"], "error": error, "error_stage": "program", "steps": 0,
                "step_times_ms": [], "created": {}}

    def close(self) -> None:
        if self.child is not None:
            self.child.close()
            self.child = None


# --- comparing the runs -----------------------------------------------------------------------

def _load(result: Dict[str, Any]):
    path = result.get("values_file")
    if not path:
        return {}
    import numpy as np

    with np.load(path) as data:
        return {name: data[name] for name in data.files}


def _close(a, b) -> bool:
    import numpy as np

    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.dtype.kind in "biu" and b.dtype.kind in "biu":
        return bool(np.array_equal(a, b))
    scale = float(np.max(np.abs(b))) if b.size else 0.0
    return bool(np.allclose(a, b, rtol=_RTOL, atol=1e-6 + _RTOL * scale))


def _instances(result: Dict[str, Any], site: str) -> int:
    return len(result.get("created", {}).get(site, []))


def copies_agree(result: Dict[str, Any], values, site: str) -> Optional[bool]:
    count = _instances(result, site)
    if not count:
        return None
    for index in range(count):
        copies = sorted(k for k in values if k.startswith(f"{site}|{index}|copy"))
        if len(copies) < 2:
            continue
        first = values[copies[0]]
        if not all(_close(values[k], first) for k in copies[1:]):
            return False
    return True


def values_agree(result: Dict[str, Any], values, reference: Dict[str, Any], ref_values,
                 site: str) -> Optional[bool]:
    count = _instances(result, site)
    if not count or reference.get("error") or _instances(reference, site) != count:
        return None
    for index in range(count):
        key = f"{site}|{index}|value"
        if key not in ref_values:
            return None
        if key not in values or not _close(values[key], ref_values[key]):
            return False
    return True


def others_differ(result: Dict[str, Any], reference: Dict[str, Any],
                  site: str) -> Optional[List[str]]:
    """The names of the variables, other than `site`'s, whose values in `result` differ
    from the reference run's: a choice of one site that changes the rest of the program
    (an ON_READ counter read inside the step gives each replica its local count) is not
    the same program. None when the runs made different variables (nothing to pair)."""
    mine, theirs = result.get("fingerprints"), reference.get("fingerprints")
    if mine is None or theirs is None or len(mine) != len(theirs):
        return None
    differ = []
    for a, b in zip(mine, theirs):
        if (a["name"], a["shape"]) != (b["name"], b["shape"]):
            return None
        if site in (a["site"], b["site"]) or a["stats"] is None or b["stats"] is None:
            continue
        (sa, wa, la, qa), (sb, wb, lb, qb) = a["stats"], b["stats"]
        linear = 1e-6 + _RTOL * max(la, lb)
        if (abs(sa - sb) > linear or abs(wa - wb) > linear or abs(la - lb) > linear
                or abs(qa - qb) > 1e-6 + _RTOL * max(qa, qb)):
            differ.append(a["name"])
    return differ


def read_error(result: Dict[str, Any], site: str) -> Optional[str]:
    for entry in result.get("created", {}).get(site, []):
        if entry.get("error"):
            return entry["error"]
    return None


def _per_step(total: float, steps: int) -> Optional[float]:
    if not steps:
        return None
    value = total / steps
    return int(value) if value == int(value) else round(value, 2)


def measurement(choice: Choice, result: Dict[str, Any], values, site: str,
                reference: Optional[Dict[str, Any]], ref_values) -> Dict[str, Any]:
    steps = int(result.get("steps") or 0)
    costs = result.get("costs") or {}
    times = result.get("step_times_ms") or []
    m: Dict[str, Any] = {
        "synchronization": choice[0], "aggregation": choice[1], "run": result["id"],
        "steps": steps,
        "reductions_per_step": _per_step(costs.get("reductions", 0), steps),
        "transfers_per_step": _per_step(costs.get("broadcasts", 0), steps),
        "bytes_per_step": (None if costs.get("unknown_bytes") else
                           _per_step(costs.get("bytes", 0), steps)),
        "step_time_ms": None, "copies_agree": None, "values_agree": None,
        "error": result.get("error"), "error_stage": result.get("error_stage"),
    }
    if times:
        ordered = sorted(times)
        m["step_time_ms"] = {"median": statistics.median(ordered),
                             "p10": ordered[int(0.1 * (len(ordered) - 1))],
                             "p90": ordered[int(round(0.9 * (len(ordered) - 1)))],
                             "n": len(ordered)}
    if m["error"] is None:
        failed = read_error(result, site)
        if failed:
            m["error"], m["error_stage"] = failed, "read"
    if m["error"] is None and steps == 0:
        m["error"] = "the program ran no step"
        m["error_stage"] = "program"
    if m["error"] is None:
        m["copies_agree"] = None if choice[0] == SYNC_ON_READ else copies_agree(result, values,
                                                                                 site)
        if reference is not None:
            m["values_agree"] = (True if reference is result
                                 else values_agree(result, values, reference, ref_values, site))
        if reference is not None and reference is not result and not reference.get("error"):
            differ = others_differ(result, reference, site)
            if differ:
                m["values_agree"] = False
                m["others_differ"] = differ
    return m


# --- the whole profile ------------------------------------------------------------------------

def _terminated(signum, frame):
    raise SystemExit(128 + signum)


def _on_sigterm():
    """SIGTERM (a CI timeout, `kill`) raises SystemExit, so that the `finally` that stops the
    child and removes the work folder runs; the previous handler, or None off the main
    thread (where Python cannot set one)."""
    try:
        return signal.signal(signal.SIGTERM, _terminated)
    except ValueError:
        return None


def plan_sites(specs: List[SiteSpec], lines: Dict[int, Tuple[int, int]],
               chosen: Sequence[Tuple[str, int]]) -> List[SiteSpec]:
    """The sites that matter, or those `--site` names (`lines[id(spec)]`: first, last)."""
    if chosen:
        picked = []
        for spec in specs:
            real = os.path.realpath(spec.path or "")
            first, last = lines[id(spec)]
            if any(os.path.realpath(p) == real and first <= line <= last for p, line in chosen):
                picked.append(spec)
        return picked
    return [spec for spec in specs if matters(spec)]


def profile(target: Dict[str, str], program_args: List[str], project: str,
            specs: List[SiteSpec], lines: Dict[int, Tuple[int, int]], options: Dict[str, Any],
            progress=None) -> Dict[str, Any]:
    """Measure every candidate of every site in `specs`; the report's fields for `--run`.

    `lines[id(spec)]` is the site's (first, last) line; `options`: steps, warmup, seed,
    devices, timeout, verbose, everything (every distinct choice, not the candidates)."""
    work = tempfile.mkdtemp(prefix="syncadvisor-profile-")
    ids = {id(spec): f"s{i}" for i, spec in enumerate(specs)}
    spec_json = {
        "target": target, "args": program_args, "project": project,
        "seed": options["seed"], "warmup": options["warmup"], "steps": options["steps"],
        "devices": options.get("devices"),
        "sites": [{"id": ids[id(s)], "path": s.path, "first": lines[id(s)][0],
                   "last": lines[id(s)][1]} for s in specs],
    }
    fresh = bool(os.environ.get("TF_CONFIG"))
    runner = Runner(spec_json, work, options.get("verbose", False),
                    options.get("timeout", DEFAULT_TIMEOUT_S), fresh)
    previous = _on_sigterm()
    try:
        return _profile(runner, specs, ids, options, progress)
    finally:
        runner.close()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        if not options.get("keep"):
            shutil.rmtree(work, ignore_errors=True)


def _profile(runner: Runner, specs: List[SiteSpec], ids: Dict[int, str],
             options: Dict[str, Any], progress) -> Dict[str, Any]:
    if progress:
        progress("the program as written")
    base = runner.run({"id": "written"})
    if base.get("replicas") is not None and base["replicas"] < 2:
        raise RunFailed(
            f"the program's {base.get('strategy', 'strategy')} has {base['replicas']} replica: "
            "with fewer than 2 nothing can diverge or be reduced, so there is nothing to measure "
            "(without GPUs the profiler splits the CPU into --devices N logical devices, which "
            "a MirroredStrategy() with no devices given spans)")
    if base.get("steps_total") and not base.get("steps") and not base.get("error"):
        raise RunFailed(
            f"the program as written ran {base['steps_total']} step"
            f"{'s' if base['steps_total'] != 1 else ''}, all of them warm-up "
            f"(--warmup {options['warmup']}): give it more steps, or lower --warmup")
    if not base.get("steps") and not base.get("steps_total"):
        why = base.get("error") or (
            "it ended before its first step" if base.get("strategy") else
            "it never called strategy.run (or a tf.function that calls it) under a strategy")
        detail = base.get("traceback", "").rstrip().splitlines()[-1:] if base.get("error") else []
        if not detail and not runner.verbose:
            # No traceback (a sys.exit, argparse's usage error): what the program said last.
            said = _log_tail(runner.log, 4, skip_tensorflow=True)
            detail = [said] if said else []
        first = ("the program as written failed before its first step ended, so there is "
                 "nothing to measure" if base.get("error") else
                 "the program as written ran no step under a tf.distribute strategy (a step is "
                 "one strategy.run, or one call of a tf.function that calls it)")
        raise RunFailed(f"{first}: {why}"
                        + (f"\n{detail[0]}" if detail and detail[0] not in why else ""))
    reached = [s for s in specs if base.get("created", {}).get(ids[id(s)])]
    ran = set(base.get("project_files", []))
    not_reached = [s for s in specs
                   if s not in reached and os.path.realpath(s.path or "") in ran]
    plans: List[Tuple[SiteSpec, List[Choice]]] = [
        (s, candidates(s, options.get("everything", False))) for s in reached]
    results: Dict[Tuple[str, Choice], Dict[str, Any]] = {}
    total = sum(len(c) - 1 for _, c in plans)
    done = 0
    for spec, choices in plans:
        site = ids[id(spec)]
        results[(site, choices[0])] = base
        for choice in choices[1:]:
            done += 1
            if progress:
                progress(f"{done}/{total}: {spec.path}:{spec.line} {spec.name} as "
                         f"{choice[0]} + {choice[1]}")
            run_id = f"{site}-{choice[0]}-{choice[1]}"
            results[(site, choice)] = runner.run({
                "id": run_id,
                "override": {"site": site, "synchronization": choice[0], "aggregation": choice[1]}})
    again = None
    if total:
        # The program as written once more, last: how far its median step moves between two
        # runs of the same choice is the noise a step-time difference is judged against
        # (runs follow one another on a shared machine, and drift more than one run spreads).
        if progress:
            progress("the program as written, again (for the step-time noise)")
        again = runner.run({"id": "written-again"})
    cache: Dict[str, Any] = {}

    def values_of(result):
        if result["id"] not in cache:
            cache[result["id"]] = _load(result)
        return cache[result["id"]]

    sites = []
    for spec, choices in plans:
        site = ids[id(spec)]
        reference_choice = normalized(spec.pattern.reference)
        reference = results.get((site, reference_choice))
        ref_values = values_of(reference) if reference is not None else {}
        measurements = []
        for choice in choices:
            result = results[(site, choice)]
            m = measurement(choice, result, values_of(result), site, reference, ref_values)
            m["as_written"] = choice == choices[0]
            m["reference"] = choice == reference_choice
            measurements.append(m)
        sites.append((spec, measurements))
    return {"base": base, "sites": sites, "not_reached": not_reached,
            "noise_ms": _drift(base, again)}


def _drift(first: Dict[str, Any], second: Optional[Dict[str, Any]]) -> Optional[float]:
    """|median step of run 1 - median step of run 2| for the same choice, in ms."""
    if second is None or second.get("error"):
        return None
    a, b = first.get("step_times_ms") or [], second.get("step_times_ms") or []
    if not a or not b:
        return None
    return abs(statistics.median(a) - statistics.median(b))
