"""`profile --run`: run the user's program once per candidate choice per site, and judge
each run against the program's own run on one replica (no TensorFlow here: the program
runs in child processes, `child.py`).

The first run is the program as written. It says on how many replicas it runs, which
variables it makes and on which lines: a static site's, or, for variables library code
made on the program's behalf (a Keras metric, an optimizer's slots, a layer's weights),
the program's line (`library_sites`). Then the program runs once on one replica (the CPU
as one device, or one GPU), as written: the reference every run's values are judged
against (`compare.py`). Then one run per candidate choice of each site, each differing
from the program as written in that one site, and the program as written once more, last:
how far two runs of the same choice drift (in values and in step time) is the noise the
others are judged against.

A site is profiled when it matters: the linter has a finding about its choice (TFS1xx,
TFS2xx, TFS3xx), or the code spells a synchronization or aggregation, or `--site` names
it; and the program, as written, creates it. Its candidates are the code's choice, the
choice its updates imply (`plan.reference_choice`), the default AUTO + NONE, and, for a
variable that is not trainable and written in replica context, ON_READ and ON_WRITE with
that aggregation. AUTO and ON_WRITE are one choice under the mirrored strategies (TFS303)
and run once. A line where library code made the variables has what the user can change
there as its candidates: `synchronized=True` for a BatchNormalization layer, else only
the program as written.
"""
from __future__ import annotations

import os
import shutil
import signal
import statistics
import tempfile
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..model.tfapi import (AGG_MEAN, AGG_NONE, AGG_SUM, SYNC_AUTO, SYNC_ON_READ,
                           SYNC_ON_WRITE)
from . import compare
from .child import Runner, log_tail
from .plan import (AS_WRITTEN, CHOICES, NOT_SYNCHRONIZED, SETTING, SYNCHRONIZED, FindingRef,
                   Pattern, SiteSpec, choice_name, normalized)
from .program_variables import LAYER, METRIC, OPTIMIZER
from .report import shown_path

Choice = Tuple[str, str]

# Findings about a site's choice: the ones that make a site worth measuring.
MATTERS = ("TFS1", "TFS2", "TFS3")
DEFAULT_TIMEOUT_S = 300.0


class RunFailed(Exception):
    """The program could not be profiled at all (exit 2, with this message)."""


def matters(spec: SiteSpec) -> bool:
    if spec.library is not None:  # only where the user can change something there
        return bool(spec.settings) and any(f.code.startswith(MATTERS) for f in spec.findings)
    if spec.explicit:
        return True
    return any(f.code.startswith(MATTERS) for f in spec.findings)


def candidates(spec: SiteSpec, everything: bool = False) -> List[Choice]:
    """The choices to run for a site, the code's first."""
    if spec.library is not None:
        return list(dict.fromkeys([normalized(spec.current)]
                                  + [(SETTING, s) for s in spec.settings]))
    if everything:
        return list(dict.fromkeys([normalized(spec.current)] + [normalized(c) for c in CHOICES]))
    pattern = spec.pattern
    implied = normalized(pattern.reference)
    wanted = [normalized(spec.current), implied, normalized((SYNC_AUTO, AGG_NONE))]
    replica_writes = any(u.replica_context and u.method != "gradient" for u in pattern.updates)
    if not pattern.trainable and replica_writes:
        agg = implied[1] if implied[1] != AGG_NONE else AGG_SUM
        wanted.append((SYNC_ON_READ, agg))
        wanted.append((SYNC_ON_WRITE, agg))
        if agg == AGG_MEAN:  # each replica's statistic, or its share of a total: the
            wanted.append((SYNC_ON_WRITE, AGG_SUM))  # one-replica run tells which
    return list(dict.fromkeys(wanted))


# --- variables library code made on the program's lines ---------------------------------------

def _line_of(key: str) -> Tuple[str, int]:
    path, _, line = key[1:].rpartition(":")
    return path, int(line)


def _owner_words(owners: List[Dict[str, Any]]) -> str:
    classes = list(dict.fromkeys(o["class"] for o in owners))
    kinds = {o.get("kind") for o in owners}
    what = {METRIC: "the Keras metric", OPTIMIZER: "the optimizer",
            LAYER: "the layer" if len(classes) == 1 else "the layers"}
    kind = next(iter(kinds)) if len(kinds) == 1 else None
    return f"{what.get(kind or '', 'Keras')} {', '.join(classes)}"


def library_sites(base: Dict[str, Any],
                  findings_at: Dict[Tuple[str, int], List[FindingRef]]) -> List[SiteSpec]:
    """A site per line of the program on which library code made variables, in the order
    they were made: who made them, as what, and what the user can change there."""
    grouped: Dict[str, List[Dict[str, Any]]] = {}
    for record in base.get("variables") or []:
        site = record.get("site") or ""
        if site.startswith("@"):
            grouped.setdefault(site, []).append(record)
    found = []
    for key, records in grouped.items():
        path, line = _line_of(key)
        owners = [r["owner"] for r in records if r.get("owner")]
        pairs = list(dict.fromkeys((r.get("synchronization"), r.get("aggregation"))
                                   for r in records))
        spelled = ", ".join(f"{s} + {a}" for s, a in pairs)
        norms = [o for o in owners if "synchronized" in o]
        settings: Tuple[str, ...] = ()
        current: Tuple[Optional[str], Optional[str]] = pairs[0] if len(pairs) == 1 \
            else (SETTING, AS_WRITTEN)
        maker = _owner_words(owners) if owners else "library code"
        # The last part of a name: the owner's class says the rest.
        names = [compare.short_name(r.get("name", "")).rsplit("/", 1)[-1] for r in records]
        shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
        made = f"{shown}, made by {maker} as {spelled}"
        if norms and not any(o["synchronized"] for o in norms):
            settings, current = (SYNCHRONIZED,), (SETTING, NOT_SYNCHRONIZED)
            why = (f"{made}: their copies stay in step only with {SYNCHRONIZED}, which is "
                   f"measured")
        else:
            why = f"{made}: nothing on this line chooses their synchronization or aggregation"
        classes = list(dict.fromkeys(o["class"] for o in owners)) or ["library code"]
        first = records[0]
        pattern = Pattern(kind="library", title=why, shape=tuple(max(d, 0) for d in
                                                                 first.get("shape") or ()),
                          dtype=first.get("dtype") or "", trainable=any(
                              r.get("trainable") for r in records),
                          updates=(), reference=normalized(current), source="runtime")
        found.append(SiteSpec(
            path=shown_path(path), line=line, name=", ".join(classes),
            pattern=pattern, current=current, api=", ".join(classes),
            findings=list(findings_at.get((path, line), [])), key=key, library=why,
            settings=settings))
    return found


def pick(static: List[SiteSpec], library: List[SiteSpec], lines: Dict[int, Tuple[int, int]],
         chosen: Sequence[Tuple[str, int]]) -> Tuple[List[SiteSpec], List[Tuple[str, int]]]:
    """(the sites to measure, the `--site` lines that name none): the sites that matter,
    or those `--site` names (a static site by any line of its call, a library line by its
    line)."""
    if not chosen:
        return [s for s in static + library if matters(s)], []
    picked: List[SiteSpec] = []
    unmatched: List[Tuple[str, int]] = []
    for path, line in chosen:
        real = os.path.realpath(path)
        hits = [s for s in static if os.path.realpath(s.path or "") == real
                and lines[id(s)][0] <= line <= lines[id(s)][1]]
        hits += [s for s in library if os.path.realpath(s.path or "") == real and s.line == line]
        if not hits:
            unmatched.append((path, line))
        picked.extend(h for h in hits if h not in picked)
    return picked, unmatched


# --- measurements -----------------------------------------------------------------------------

def _per_step(total: float, steps: int) -> Optional[float]:
    if not steps:
        return None
    value = total / steps
    return int(value) if value == int(value) else round(value, 2)


def measurement(choice: Choice, result: Dict[str, Any], spec: SiteSpec,
                judged: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    steps = int(result.get("steps") or 0)
    costs = result.get("costs") or {}
    times = result.get("step_times_ms") or []
    setting = choice[1] if choice[0] == SETTING else None
    m: Dict[str, Any] = {
        "choice": choice_name(choice, spec.current),
        "synchronization": None if setting else choice[0],
        "aggregation": None if setting else choice[1],
        "run": result["id"], "steps": steps,
        "reductions_per_step": _per_step(costs.get("reductions", 0), steps),
        "transfers_per_step": _per_step(costs.get("broadcasts", 0), steps),
        "bytes_per_step": (None if costs.get("unknown_bytes") else
                           _per_step(costs.get("bytes", 0), steps)),
        "step_time_ms": None, "copies_agree": None, "values_agree": None, "differ": [],
        "error": result.get("error"), "error_stage": result.get("error_stage"),
    }
    if setting:
        m["setting"] = setting
    if times:
        ordered = sorted(times)
        m["step_time_ms"] = {"median": statistics.median(ordered),
                             "p10": ordered[int(0.1 * (len(ordered) - 1))],
                             "p90": ordered[int(round(0.9 * (len(ordered) - 1)))],
                             "n": len(ordered)}
    if m["error"] is None and steps == 0:
        m["error"] = "the program ran no step"
        m["error_stage"] = "program"
    if m["error"] is None and judged is not None:
        m["copies_agree"] = judged.get("copies_agree")
        m["values_agree"] = judged.get("values_agree")
        m["differ"] = list(judged.get("differ", []))
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


def profile(target: Dict[str, str], program_args: List[str], project: str,
            static: List[SiteSpec], lines: Dict[int, Tuple[int, int]],
            findings_at: Dict[Tuple[str, int], List[FindingRef]],
            chosen: Sequence[Tuple[str, int]], options: Dict[str, Any],
            progress=None) -> Dict[str, Any]:
    """Measure every candidate of every site that matters (or `chosen`); the report's
    fields for `--run`.

    `lines[id(spec)]` is a static site's (first, last) line; `findings_at[(realpath,
    line)]` the findings on a line; `options`: steps, warmup, seed, devices, timeout,
    verbose, everything (every distinct choice, not the candidates)."""
    work = tempfile.mkdtemp(prefix="syncadvisor-profile-")
    for i, spec in enumerate(static):
        spec.key = f"s{i}"
    spec_json = {
        "target": target, "args": program_args, "project": project,
        "seed": options["seed"], "warmup": options["warmup"], "steps": options["steps"],
        "devices": options.get("devices"),
        "sites": [{"id": s.key, "path": s.path, "first": lines[id(s)][0],
                   "last": lines[id(s)][1]} for s in static],
    }
    fresh = bool(os.environ.get("TF_CONFIG"))
    verbose, timeout = options.get("verbose", False), options.get("timeout", DEFAULT_TIMEOUT_S)
    runner = Runner(spec_json, work, verbose, timeout, fresh)
    # One replica: the CPU as one device (or one GPU), and no cluster: one worker alone.
    alone = Runner(dict(spec_json, devices=1), work, verbose, timeout, True,
                   name="one-replica", environment={"TF_CONFIG": None})
    previous = _on_sigterm()
    try:
        return _profile(runner, alone, static, findings_at, chosen, lines, options, progress)
    finally:
        runner.close()
        alone.close()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        if not options.get("keep"):
            shutil.rmtree(work, ignore_errors=True)


def _check_base(base: Dict[str, Any], runner: Runner, options: Dict[str, Any]) -> None:
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
            said = log_tail(runner.log, 4, skip_tensorflow=True)
            detail = [said] if said else []
        first = ("the program as written failed before its first step ended, so there is "
                 "nothing to measure" if base.get("error") else
                 "the program as written ran no step under a tf.distribute strategy (a step is "
                 "one strategy.run, or one call of a tf.function that calls it)")
        raise RunFailed(f"{first}: {why}"
                        + (f"\n{detail[0]}" if detail and detail[0] not in why else ""))


def _profile(runner: Runner, alone: Runner, static: List[SiteSpec], findings_at, chosen, lines,
             options: Dict[str, Any], progress) -> Dict[str, Any]:
    say = progress or (lambda text: None)
    say("the program as written")
    base = runner.run({"id": "written"})
    _check_base(base, runner, options)
    made = {r.get("site") for r in base.get("variables") or []}
    library = library_sites(base, findings_at)
    picked, unmatched = pick(static, library, lines, chosen)
    reached = [s for s in picked if s.key in made]
    ran = set(base.get("project_files", []))
    not_reached = [s for s in picked if s.library is None and s.key not in made
                   and os.path.realpath(s.path or "") in ran]
    result: Dict[str, Any] = {"base": base, "sites": [], "not_reached": not_reached,
                              "static": static, "library": library, "unmatched": unmatched,
                              "picked": picked, "noise_ms": None, "reference": None}
    if not reached:
        return result
    plans = [(s, candidates(s, options.get("everything", False))) for s in reached]
    say("the program on one replica, as written (the reference)")
    reference = alone.run({"id": "one-replica"})
    counter = _Counter(sum(len(c) - 1 for _, c in plans), say)
    results = {(s.key, choices[0]): base for s, choices in plans}
    for spec, choices in plans:
        for choice in choices[1:]:
            results[(spec.key, choice)] = counter.run(runner, spec, choice, [])
    # The program as written once more, last: how far its values and its median step move
    # between two runs of the same choice is the noise the others are judged against (runs
    # follow one another on a shared machine, and drift more than one run spreads).
    say("the program as written, again (for the noise between two runs)")
    again = runner.run({"id": "written-again"})
    cache: Dict[str, compare.Values] = {}

    def values_of(run: Dict[str, Any]) -> compare.Values:
        if run["id"] not in cache:
            cache[run["id"]] = compare.Values(run)
        return cache[run["id"]]

    judging = _reference(base, again, reference, values_of)
    result["reference"] = judging
    result["noise_ms"] = _drift(base, again)
    ref_values = values_of(reference) if judging["problem"] is None else None

    names = {s.key: s.name for s in static}

    def label(record: Dict[str, Any]) -> str:
        """A variable as the report names it: TensorFlow's default name says nothing, the
        site's does."""
        name = compare.short_name(record.get("name", ""))
        if name.split("_")[0] == "Variable" and record.get("site") in names:
            return names[record["site"]]
        return name

    def judge(spec: SiteSpec, choices: List[Choice], written: Dict[str, Any],
              ran: Dict[Choice, Dict[str, Any]]):
        runs = [(choice, ran[choice]) for choice in choices]
        judged = compare.judge_site(spec.key or "", runs, written, ref_values,
                                    judging["tolerance"], values_of, label)
        measurements = []
        for choice, run in runs:
            m = measurement(choice, run, spec, judged["runs"].get(id(run)))
            m["as_written"] = choice == choices[0]
            measurements.append(m)
        return measurements, {
            "unaffected": judged["unaffected"],
            "cannot_judge": _cannot_judge(judging, judged, written, measurements)}

    for spec, choices in plans:
        measurements, judgement = judge(spec, choices, base,
                                        {c: results[(spec.key, c)] for c in choices})
        result["sites"].append((spec, measurements, judgement))
    _with_fixes(result, plans, runner, counter, judge)
    return result


class _Counter:
    """Numbers the runs after the program as written, and says each as it starts."""

    def __init__(self, total: int, say):
        self.total, self.done, self.say = total, 0, say

    def run(self, runner: Runner, spec: SiteSpec, choice: Optional[Choice],
            fixes: List[Tuple[SiteSpec, Choice]]) -> Dict[str, Any]:
        self.done += 1
        what = "as written" if choice is None else f"as {choice_name(choice, spec.current)}"
        tail = ", with the other sites' fixes" if fixes else ""
        self.say(f"{self.done}/{self.total}: {spec.path}:{spec.line} {spec.name} {what}{tail}")
        overrides = [_override(other.key or "", c) for other, c in fixes]
        if choice is not None:
            overrides.append(_override(spec.key or "", choice))
        return runner.run({"id": f"run-{self.done}", "overrides": overrides})


def _override(site: str, choice: Choice) -> Dict[str, Any]:
    if choice[0] == SETTING:
        return {"site": site, "setting": choice[1]}
    return {"site": site, "synchronization": choice[0], "aggregation": choice[1]}


def _with_fixes(result: Dict[str, Any], plans, runner: Runner, counter: _Counter,
                judge) -> None:
    """A site whose choices all differ from the one-replica run while another site's
    verdict is a fix (the program's other variables then differ in every run of it) is
    measured once more with the other sites' fixes applied, its own choice as written
    and as each candidate: the values it leaves then say what it should be."""
    from .verdict import FIX, decide

    fixes: List[Tuple[SiteSpec, Choice]] = []
    for spec, measurements, judgement in result["sites"]:
        decided = decide(spec, measurements, result["noise_ms"], judgement["cannot_judge"])
        verdict = decided["verdict"]
        if verdict["action"] == FIX:
            chosen = (SETTING, verdict["setting"]) if verdict.get("setting") else \
                (verdict["synchronization"], verdict["aggregation"])
            fixes.append((spec, chosen))
    if not fixes or result["reference"]["problem"] is not None:
        return
    again = [(i, spec, choices) for i, ((spec, choices), (_, _, judgement))
             in enumerate(zip(plans, result["sites"])) if judgement["cannot_judge"]]
    counter.total += sum(len(choices) for _, _, choices in again)
    for index, spec, choices in again:
        others = [(other, c) for other, c in fixes if other is not spec]
        if not others:
            continue
        written = counter.run(runner, spec, None, others)
        ran = {choices[0]: written}
        for choice in choices[1:]:
            ran[choice] = counter.run(runner, spec, choice, others)
        measurements, judgement = judge(spec, choices, written, ran)
        judgement["with_fixes"] = [{"path": o.path, "line": o.line, "name": o.name,
                                    "choice": choice_name(c, o.current)} for o, c in others]
        result["sites"][index] = (spec, measurements, judgement)


def _reference(base: Dict[str, Any], again: Dict[str, Any], reference: Dict[str, Any],
               values_of) -> Dict[str, Any]:
    """How values are judged: the one-replica run, the tolerance and what it was calibrated
    on, and why the reference cannot be used, if it cannot."""
    judging: Dict[str, Any] = {"run": "the program on one replica, as written, same seed and "
                                      "global batch",
                               "device_note": reference.get("device_note"),
                               "replicas": reference.get("replicas"),
                               "drift": None, "tolerance": compare.TOLERANCE_FLOOR,
                               "problem": None}
    if not again.get("error") and again.get("variables") is not None:
        drift, unsteady = compare.calibrate(values_of(base), values_of(again))
        judging["drift"] = drift
        judging["tolerance"] = compare.tolerance_from(drift)
        if unsteady or drift > compare.UNSTEADY:
            named = ", ".join(compare.short_name(n) for n in unsteady[:3])
            judging["problem"] = ("two runs of the program as written leave different values "
                                  + (f"({named})" if named else f"(by {drift:.2g} of a "
                                     f"variable's largest value)"))
            return judging
    if reference.get("error"):
        judging["problem"] = f"the program on one replica raised {reference['error']}"
    elif not reference.get("steps_total"):
        judging["problem"] = "the program on one replica ran no step"
    elif reference.get("replicas") not in (None, 1):
        judging["problem"] = (f"the program's strategy had {reference['replicas']} replicas "
                              f"with one device")
    elif reference.get("steps_total") != base.get("steps_total"):
        judging["problem"] = (f"the program ran {reference['steps_total']} steps on one "
                              f"replica, {base.get('steps_total')} on {base.get('replicas')}")
    return judging


def _cannot_judge(judging: Dict[str, Any], judged: Dict[str, Any], base: Dict[str, Any],
                  measurements: List[Dict[str, Any]]) -> Optional[str]:
    """Why the site's values cannot be judged against one replica, or None."""
    if judging["problem"] is not None:
        return judging["problem"]
    if judged["judged"] or not any(not m.get("error") for m in measurements):
        return None
    others = judged["unaffected"]
    shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
    why = ["no measured choice of this site leaves the values of the program on one replica, "
           "nor does the rest of the program" + (
               f" ({shown} {'differs' if len(others) == 1 else 'differ'} under every choice "
               f"here)" if others else "")]
    reads = base.get("replica_count_read_at") or []
    if reads:
        where = ", ".join(_shown_line(r) for r in reads[:3])
        why.append(f"the program reads num_replicas_in_sync ({where}): what it computes "
                   f"from it differs on one replica")
    if base.get("random_ops"):
        why.append(f"its steps draw random numbers ({', '.join(base['random_ops'][:3])}), "
                   f"which one replica draws differently")
    return "; ".join(why)


def _shown_line(text: str) -> str:
    path, _, line = text.rpartition(":")
    return f"{shown_path(path)}:{line}"


def _drift(first: Dict[str, Any], second: Optional[Dict[str, Any]]) -> Optional[float]:
    """|median step of run 1 - median step of run 2| for the same choice, in ms."""
    if second is None or second.get("error"):
        return None
    a, b = first.get("step_times_ms") or [], second.get("step_times_ms") or []
    if not a or not b:
        return None
    return abs(statistics.median(a) - statistics.median(b))
