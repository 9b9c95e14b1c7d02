"""One verdict per site from its measured runs, and the summary (no TensorFlow); both
modes of `syncadvisor profile` decide here, in the same words.

A choice is usable when its run raised nothing, its copies agree (ON_READ's are local by
design, so not compared), and the values it leaves agree with the reference: the program
run on one replica (`--run`), or the choice the pattern's updates imply (a replayed
pattern). A choice whose values differ is never recommended, whatever it saves. The
recommended choice is the usable one that moves the fewest bytes per step, then makes
the fewest cross-device calls per step; ties go to the code's own choice, then to one
that keeps the code's synchronization, then to the implied choice, then to `advice`'s
order of preference. Step time is reported beside it and never decides: on shared CPUs
it is mostly noise, and the verdict says so when the spreads overlap.

Where the reference cannot judge a site's values (`cannot_judge`), the verdict says so
and why, and recommends nothing.
"""
from __future__ import annotations

import textwrap
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..model.tfapi import (AGG_MEAN, AGG_NONE, AGG_ONLY_FIRST_REPLICA, AGG_SUM, SYNC_AUTO,
                           SYNC_ON_WRITE)
from ..records import replace
from .advice import _PREFERENCE, judge_findings
from .plan import SETTING, SiteSpec, choice_name, normalized

Choice = Tuple[str, str]
AGGREGATIONS = (AGG_NONE, AGG_SUM, AGG_MEAN, AGG_ONLY_FIRST_REPLICA)
KEEP, SWITCH, FIX, NONE, CANNOT = "keep", "switch", "fix", "none", "cannot judge"
ACTIONS = (FIX, SWITCH, KEEP, NONE, CANNOT)
# Where a run's error came from (`error_stage`), as the verdicts, tables and plot say it.
STAGES = {"create": "at creation", "step": "in a step", "read": "when read",
          "after": "after the steps"}
ONE_REPLICA = "the one-replica run"


def clip(text: str, width: int) -> str:
    """`text` in at most `width` characters, cut between words, never inside one."""
    text = " ".join(text.split())
    if len(text) <= width:
        return text
    return textwrap.shorten(text, width=width, placeholder=" ...")


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


def key_of(m: Dict[str, Any]) -> Choice:
    if m.get("setting"):
        return (SETTING, m["setting"])
    return (m["synchronization"], m["aggregation"])


def name_of(m: Dict[str, Any], spec: SiteSpec) -> str:
    """A measurement's choice as every part of the report names it."""
    return m.get("choice") or choice_name(key_of(m), spec.current)


def _usable(m: Dict[str, Any], compare_values: bool) -> bool:
    if m.get("error") or m.get("copies_agree") is False:
        return False
    return m.get("values_agree") is True if compare_values else True


def _rank(m: Dict[str, Any], sync: Optional[str] = None) -> int:
    """Ties: the code's choice, then one that keeps the code's synchronization (the smaller
    edit: a tf_keras metric's ON_READ count needs its aggregation changed, not both), the
    implied choice first among those, then the implied choice, then `advice`'s order."""
    if m.get("as_written"):
        return 0
    same = sync is not None and m.get("synchronization") == sync
    if same:
        return 1 if m.get("reference") else 2
    if m.get("reference"):
        return 3
    key = key_of(m)
    auto = (SYNC_AUTO, key[1]) if key[0] == SYNC_ON_WRITE else key
    return 4 + (_PREFERENCE.index(auto) if auto in _PREFERENCE else len(_PREFERENCE))


def _cost_key(m: Dict[str, Any], sync: Optional[str] = None):
    nbytes = m.get("bytes_per_step")
    return (float("inf") if nbytes is None else nbytes, calls_per_step(m), _rank(m, sync))


def short_error(error: Optional[str], width: int = 120) -> str:
    return clip((error or "").strip().splitlines()[0], width) if error else ""


def _differ_words(m: Dict[str, Any], against: str) -> str:
    names = m.get("differ") or []
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return f"reads values that differ from {against}'s" + (f" ({shown})" if shown else "")


def _fault(m: Dict[str, Any], against: str) -> str:
    if m.get("error"):
        return f"raises {short_error(m['error'])}"
    if m.get("copies_agree") is False:
        return "diverges across replicas"
    if m.get("values_agree") is None:
        return f"leaves no value to compare with {against}'s"
    return _differ_words(m, against)


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
           noise_ms: Optional[float] = None, cannot_judge: Optional[str] = None,
           against: str = ONE_REPLICA, fixes: Sequence[Dict[str, Any]] = ()) -> Dict[str, Any]:
    """The site's verdict and the static findings judged by the runs.

    `measurements[0]` is the code's choice; `against` names the reference in the words
    ("the one-replica run", or a replayed pattern's implied choice); `fixes`, the other
    sites' fixes the runs were made with, which the verdict then names."""
    decided = _decide(spec, measurements, noise_ms, cannot_judge, against)
    if fixes:
        named = ", ".join(f"{f['name']} as {f['choice']}" for f in fixes)
        text = decided["verdict"]["text"] + f" (measured with the fixes above: {named})"
        decided["verdict"]["text"] = decided["recommendation"]["reason"] = text
    return decided


def _decide(spec: SiteSpec, measurements: List[Dict[str, Any]], noise_ms: Optional[float],
            cannot_judge: Optional[str], against: str) -> Dict[str, Any]:
    current = measurements[0]
    mine = name_of(current, spec)
    if cannot_judge:
        text = f"cannot judge {mine}: {cannot_judge}"
        if current.get("error"):
            text = f"{mine} raises {short_error(current['error'])}; {text}"
        return _decided(spec, measurements, CANNOT, text, None, cannot_judge)
    usable = [m for m in measurements if _usable(m, True)]
    sync = current.get("synchronization")
    best = min(usable, key=lambda m: _cost_key(m, sync)) if usable else None
    problem = None
    if current.get("error"):
        stage = STAGES.get(current.get("error_stage") or "", "")
        problem = f"{mine} raises {short_error(current['error'])}" + (f" {stage}" if stage
                                                                      else "")
    elif current.get("copies_agree") is False:
        problem = f"{mine} diverges across replicas"
    elif current.get("values_agree") is False:
        problem = f"{mine} {_differ_words(current, against)}"
    parts: List[str] = []
    if best is None:
        action = NONE
        if spec.library is not None and len(measurements) == 1:
            text = (f"{problem or mine}; nothing on this line changes it ({spec.api} makes "
                    f"them so)")
        else:
            text = (f"{problem}; " if problem else "") + \
                f"no measured choice ran clean with equal copies and {against}'s values"
    elif problem:
        action = FIX
        text = f"{problem}: use {name_of(best, spec)}"
        if best.get("values_agree") is True:
            text += f", whose values agree with {against}'s"
        if not current.get("error"):
            diff = _difference(best, current)
            text += f" ({diff}{'' if diff.startswith('the same') else ' than as written'})"
    elif best is current:
        action = KEEP
        cheaper = sorted((m for m in measurements if m not in usable
                          and _cost_key(m)[:2] < _cost_key(current)[:2]), key=_cost_key)
        if cheaper:  # say why the choice that moves less is not the advice
            text = (f"keep {mine}: {name_of(cheaper[0], spec)} moves less but "
                    f"{_fault(cheaper[0], against)} (as written: {costs(current)})")
        elif len(measurements) == 1:
            text = f"keep {mine}: its values agree with {against}'s"
            if spec.library is not None:
                text += f" ({spec.api} makes them so; nothing on this line changes it)"
        else:
            text = f"keep {mine}: no measured choice moves less (as written: {costs(current)})"
    else:
        action = SWITCH
        text = f"switch to {name_of(best, spec)}: {_difference(best, current)}, values agree"
    if best is not None and action != FIX and len(measurements) > 1:
        note = _time_note(best, current if best is not current else
                          next((m for m in usable if m is not best), best), noise_ms)
        if note:
            parts.append(note)
    if parts:
        text += "; " + "; ".join(parts)
    return _decided(spec, measurements, action, text, best, None, against)


def _decided(spec: SiteSpec, measurements: List[Dict[str, Any]], action: str, text: str,
             best: Optional[Dict[str, Any]], cannot_judge: Optional[str],
             against: str = ONE_REPLICA) -> Dict[str, Any]:
    chosen = {"synchronization": best.get("synchronization") if best else None,
              "aggregation": best.get("aggregation") if best else None}
    if best is not None and best.get("setting"):
        chosen["setting"] = best["setting"]
    if best is not None:
        chosen["choice"] = name_of(best, spec)
    by = {key_of(m): m for m in measurements}
    if cannot_judge:
        judged = [{"code": f.code, "line": f.line, "severity": f.severity,
                   "message": f.message, "verdict": "not measured",
                   "why": f"the measurement cannot judge this site: {cannot_judge}"}
                  for f in spec.findings]
    else:
        judged = _in_code_terms(judge_findings(replace(spec, current=normalized(spec.current)),
                                               by, key_of(best) if best else None, against),
                                spec)
    return {"verdict": dict(chosen, action=action, text=text),
            "recommendation": dict(chosen, reason=text),
            "static_findings": judged}


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


def summary(sites: Sequence[Dict[str, Any]], not_reached: int) -> Dict[str, Any]:
    counts = {action: 0 for action in ACTIONS}
    for site in sites:
        counts[(site.get("verdict") or {}).get("action", NONE)] += 1
    words = [f"{counts[FIX]} to fix", f"{counts[SWITCH]} to switch", f"{counts[KEEP]} to keep"]
    if counts[NONE]:
        words.append(f"{counts[NONE]} with no usable choice")
    if counts[CANNOT]:
        words.append(f"{counts[CANNOT]} that cannot be judged")
    text = f"{len(sites)} site{'s' if len(sites) != 1 else ''} measured: " + ", ".join(words)
    if not_reached:
        text += (f"; {not_reached} site{'s' if not_reached != 1 else ''} the program as "
                 f"written did not create")
    return {"sites": len(sites), "fix": counts[FIX], "switch": counts[SWITCH],
            "keep": counts[KEEP], "none": counts[NONE], "cannot_judge": counts[CANNOT],
            "not_reached": not_reached, "text": text}
