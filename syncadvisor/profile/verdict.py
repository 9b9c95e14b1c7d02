"""One verdict per site from its measured runs, and the summary (no TensorFlow).

A choice is usable when its run raised nothing, its replicas' copies agree (ON_READ's are
local by design, so not compared), and the values read agree with the reference choice's
run from the same seed. The recommended choice is the usable one that moves the fewest
bytes per step, then makes the fewest cross-device calls per step; ties go to the code's
own choice, then to the reference, then to `advice`'s order of preference. Step time is
reported beside it and never decides: on shared CPUs it is mostly noise, and the verdict
says so when the spreads overlap.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..model.tfapi import (AGG_MEAN, AGG_NONE, AGG_ONLY_FIRST_REPLICA, AGG_SUM, SYNC_AUTO,
                           SYNC_ON_WRITE)
from ..records import replace
from .advice import _PREFERENCE, judge_findings
from .plan import SiteSpec

Choice = Tuple[str, str]
AGGREGATIONS = (AGG_NONE, AGG_SUM, AGG_MEAN, AGG_ONLY_FIRST_REPLICA)
KEEP, SWITCH, FIX, NONE = "keep", "switch", "fix", "none"
# Where a run's error came from (`error_stage`), as the verdicts, tables and plot say it.
STAGES = {"create": "at creation", "step": "in a step", "read": "when read",
          "after": "after the steps"}


def human_bytes(count: Optional[float]) -> str:
    if count is None:
        return "unknown bytes"
    if count < 1024:
        return f"{count:g} B"
    for unit in ("KiB", "MiB", "GiB"):
        count /= 1024.0
        if count < 1024 or unit == "GiB":
            return f"{count:.1f} {unit}"
    return f"{count:.1f} GiB"  # pragma: no cover - the loop returns


def _n(count: Optional[float], word: str) -> str:
    if count is None:
        return f"? {word}s"
    text = f"{count:g}"
    return f"{text} {word}" + ("" if count == 1 else "s")


def calls_per_step(m: Dict[str, Any]) -> float:
    """Cross-device calls per step: reductions and broadcasts together."""
    return (m.get("reductions_per_step") or 0) + (m.get("transfers_per_step") or 0)


def costs(m: Dict[str, Any]) -> str:
    nbytes = human_bytes(m.get("bytes_per_step"))
    return f"{_n(calls_per_step(m), 'all-reduce')} ({nbytes}) per step"


def spelled(choice: Sequence[str], written: Sequence[Optional[str]]) -> str:
    """A run's choice in the code's terms: ON_WRITE is AUTO where the code leaves it AUTO."""
    sync, agg = choice
    if sync == SYNC_ON_WRITE and (written[0] or SYNC_AUTO) == SYNC_AUTO:
        sync = SYNC_AUTO
    return f"{sync} + {agg}"


def written(spec: SiteSpec) -> str:
    return f"{spec.current[0] or SYNC_AUTO} + {spec.current[1] or AGG_NONE}"


def _key(m: Dict[str, Any]) -> Choice:
    return (m["synchronization"], m["aggregation"])


def _usable(m: Dict[str, Any], compare_values: bool) -> bool:
    if m.get("error") or m.get("copies_agree") is False:
        return False
    return m.get("values_agree") is True if compare_values else True


def _rank(m: Dict[str, Any], sync: Optional[str] = None) -> int:
    """Ties: the code's choice, then one that keeps the code's synchronization (the smaller
    edit: a tf_keras metric's ON_READ count needs its aggregation changed, not both), the
    reference first among those, then the reference, then `advice`'s order."""
    if m.get("as_written"):
        return 0
    same = sync is not None and m["synchronization"] == sync
    if same:
        return 1 if m.get("reference") else 2
    if m.get("reference"):
        return 3
    key = _key(m)
    auto = (SYNC_AUTO, key[1]) if key[0] == SYNC_ON_WRITE else key
    return 4 + (_PREFERENCE.index(auto) if auto in _PREFERENCE else len(_PREFERENCE))


def _cost_key(m: Dict[str, Any], sync: Optional[str] = None):
    nbytes = m.get("bytes_per_step")
    return (float("inf") if nbytes is None else nbytes, calls_per_step(m), _rank(m, sync))


def _short(error: Optional[str]) -> str:
    text = (error or "").strip().splitlines()[0] if error else ""
    return text if len(text) <= 120 else text[:117] + "..."


def _fault(m: Dict[str, Any], reference: str) -> str:
    if m.get("error"):
        return f"raises {_short(m['error'])}"
    if m.get("copies_agree") is False:
        return "diverges across replicas"
    if m.get("others_differ"):
        return f"changes {', '.join(m['others_differ'][:3])}"
    return f"reads values that differ from {reference}'s" if reference else "is not usable"


def _time_note(best: Dict[str, Any], other: Dict[str, Any],
               noise_ms: Optional[float] = None) -> Optional[str]:
    """Within noise where the spreads overlap or the medians differ by no more than twice
    what two runs of the same choice differed by (`noise_ms`)."""
    a, b = best.get("step_time_ms"), other.get("step_time_ms")
    if not a or not b or best is other:
        return None
    if a["p10"] <= b["p90"] and b["p10"] <= a["p90"]:
        return "step time within noise"
    if noise_ms is not None and abs(a["median"] - b["median"]) <= 2 * noise_ms:
        return "step time within noise"
    return f"median step {a['median']:.2f} ms against {b['median']:.2f} ms"


def _difference(best: Dict[str, Any], other: Dict[str, Any]) -> str:
    d_calls = calls_per_step(other) - calls_per_step(best)
    b1, b2 = best.get("bytes_per_step"), other.get("bytes_per_step")
    if b1 is None or b2 is None:
        nbytes = "unknown bytes"
    else:
        nbytes = human_bytes(abs(b2 - b1))
    if d_calls == 0 and (b1 == b2):
        return "the same traffic per step"
    word = "fewer" if (d_calls > 0 or (d_calls == 0 and (b2 or 0) > (b1 or 0))) else "more"
    return f"{_n(abs(d_calls), 'all-reduce')} ({nbytes}) {word} per step"


def decide(spec: SiteSpec, measurements: List[Dict[str, Any]],
           noise_ms: Optional[float] = None) -> Dict[str, Any]:
    """The site's recommendation, verdict and the static findings judged by the runs."""
    current = measurements[0]
    reference = next((m for m in measurements if m.get("reference")), None)
    compare = reference is not None and not reference.get("error")
    usable = [m for m in measurements if _usable(m, compare)]
    sync = current["synchronization"]
    best = min(usable, key=lambda m: _cost_key(m, sync)) if usable else None
    mine = written(spec)
    spell = lambda m: spelled(_key(m), spec.current)  # noqa: E731
    problem = None
    if current.get("error"):
        stage = STAGES.get(current.get("error_stage") or "", "")
        problem = f"{mine} raises {_short(current['error'])}" + (f" {stage}" if stage else "")
    elif current.get("copies_agree") is False:
        problem = f"{mine} diverges across replicas"
    elif compare and current.get("values_agree") is False:
        problem = f"{mine} reads values that differ from {spell(reference)}'s"
    parts: List[str] = []
    if best is None:
        action = NONE
        text = (f"{problem}; " if problem else "") + \
            "no measured choice ran clean with equal copies and the reference's values"
    elif problem:
        action = FIX
        text = f"{problem}: use {spell(best)}"
        if best.get("values_agree") is True and best is not reference:
            text += ", whose values agree with the reference"
        if not current.get("error"):
            diff = _difference(best, current)
            text += f" ({diff}{'' if diff.startswith('the same') else ' than as written'})"
    elif best is current:
        action = KEEP
        cheaper = sorted((m for m in measurements if m not in usable
                          and _cost_key(m)[:2] < _cost_key(current)[:2]), key=_cost_key)
        if cheaper:  # say why the choice that moves less is not the advice
            text = (f"keep {mine}: {spell(cheaper[0])} moves less but "
                    f"{_fault(cheaper[0], spell(reference) if reference else '')} "
                    f"(the program: {costs(current)})")
        else:
            text = f"keep {mine}: no measured choice moves less (the program: {costs(current)})"
    else:
        action = SWITCH
        text = f"switch to {spell(best)}: {_difference(best, current)}, values agree"
    if best is not None and action != FIX:
        note = _time_note(best, current if best is not current else
                          next((m for m in usable if m is not best), best), noise_ms)
        if note:
            parts.append(note)
    if not compare and reference is not None:
        parts.append(f"the reference {spell(reference)} raised, so values were not compared")
    if parts:
        text += "; " + "; ".join(parts)
    run_spec = _normalized_spec(spec)
    by = {_key(m): m for m in measurements}
    recommendation = {"synchronization": best["synchronization"] if best else None,
                      "aggregation": best["aggregation"] if best else None,
                      "reason": text}
    return {
        "verdict": {"action": action, "text": text,
                    "synchronization": best["synchronization"] if best else None,
                    "aggregation": best["aggregation"] if best else None},
        "recommendation": recommendation,
        "static_findings": _in_code_terms(
            judge_findings(run_spec, by, _key(best) if best else None), spec),
    }


def from_recommendation(spec: SiteSpec, measurements: List[Dict[str, Any]],
                        recommendation: Dict[str, Any]) -> Dict[str, Any]:
    """The verdict of a replayed pattern (`profile FILES` / canonical), from `advice`'s
    recommendation, so that the two modes say one thing per site in the same words."""
    by = {_key(m): m for m in measurements}
    current = (spec.current[0] or SYNC_AUTO, spec.current[1] or AGG_NONE)
    best = (recommendation.get("synchronization"), recommendation.get("aggregation"))
    reason = recommendation.get("reason", "")
    cur = by.get(current)
    mine = f"{current[0]} + {current[1]}"
    if best[0] is None:
        action, text = NONE, reason
    elif best == current:
        action, text = KEEP, reason if reason.startswith("keep ") else f"keep {reason}"
    elif cur is not None and (cur.get("error") or cur.get("values_agree") is False):
        what = (f"raises {_short(cur['error'])}" if cur.get("error")
                else "reads values that differ from the reference")
        action, text = FIX, f"{mine} {what}: use {reason}"
    else:
        action, text = SWITCH, f"switch to {reason}"
    return {"action": action, "text": text, "synchronization": best[0],
            "aggregation": best[1]}


def _in_code_terms(judged: List[Dict[str, Any]], spec: SiteSpec) -> List[Dict[str, Any]]:
    """The judgements name the choices as they ran (ON_WRITE); where the code leaves the
    synchronization AUTO, the tables and verdicts say AUTO, and so do these."""
    if (spec.current[0] or SYNC_AUTO) != SYNC_AUTO:
        return judged
    for entry in judged:
        why = entry.get("why") or ""
        for agg in AGGREGATIONS:
            why = why.replace(f"{SYNC_ON_WRITE} + {agg}", f"{SYNC_AUTO} + {agg}")
        entry["why"] = why
    return judged


def _normalized_spec(spec: SiteSpec) -> SiteSpec:
    from .runs import normalized

    return replace(spec, current=normalized(spec.current))


def summary(sites: List[Dict[str, Any]], not_reached: int) -> Dict[str, Any]:
    counts = {KEEP: 0, SWITCH: 0, FIX: 0, NONE: 0}
    for site in sites:
        counts[(site.get("verdict") or {}).get("action", NONE)] += 1
    words = [f"{counts[FIX]} to fix", f"{counts[SWITCH]} to switch", f"{counts[KEEP]} to keep"]
    if counts[NONE]:
        words.append(f"{counts[NONE]} with no usable choice")
    text = f"{len(sites)} site{'s' if len(sites) != 1 else ''} measured: " + ", ".join(words)
    if not_reached:
        text += (f"; {not_reached} site{'s' if not_reached != 1 else ''} the program as "
                 f"written did not create")
    return {"sites": len(sites), "fix": counts[FIX], "switch": counts[SWITCH],
            "keep": counts[KEEP], "none": counts[NONE], "not_reached": not_reached,
            "text": text}
