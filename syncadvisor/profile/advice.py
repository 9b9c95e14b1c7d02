"""From measurements to a recommendation, and what the static findings said (no TensorFlow).

The recommendation is chosen from the measured counts only, never from the step times
(which are reported, but too noisy on shared CPUs to decide on): among the choices that
ran without an exception and whose values read agree with the reference choice, the one
with the fewest cross-device reductions per step, then the fewest cross-device transfers
per step; ties go to the code's own choice, then to the simplest spelling (the default
AUTO + NONE first, then ON_READ, which keeps writes local, then AUTO with an aggregation,
and ON_WRITE, which AUTO already means under the mirrored strategies, last). For a
trainable variable ON_READ ranks after every other choice: tf_keras refuses it and its
gradients are per replica.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..model import tfapi
from ..model.tfapi import (AGG_MEAN, AGG_NONE, AGG_ONLY_FIRST_REPLICA, AGG_SUM, SYNC_AUTO,
                           SYNC_NONE, SYNC_ON_READ, SYNC_ON_WRITE)
from .plan import SiteSpec

Choice = Tuple[str, str]

_PREFERENCE: Tuple[Choice, ...] = (
    (SYNC_AUTO, AGG_NONE),
    (SYNC_ON_READ, AGG_SUM), (SYNC_ON_READ, AGG_MEAN), (SYNC_ON_READ, AGG_ONLY_FIRST_REPLICA),
    (SYNC_AUTO, AGG_ONLY_FIRST_REPLICA), (SYNC_AUTO, AGG_SUM), (SYNC_AUTO, AGG_MEAN),
    (SYNC_ON_WRITE, AGG_NONE), (SYNC_ON_WRITE, AGG_ONLY_FIRST_REPLICA), (SYNC_ON_WRITE, AGG_SUM),
    (SYNC_ON_WRITE, AGG_MEAN), (SYNC_ON_READ, AGG_NONE),
)

# Findings about spelling or structure: nothing the profiler measures speaks to them.
NOT_MEASURED = {
    "TFS001": "an enum member that does not exist",
    "TFS002": "how the value is spelled",
    "TFS003": "how the value is spelled for Keras 3",
    "TFS004": "a parameter Keras 3 does not have",
    # Its fix sets `trainable`, which no synchronization/aggregation choice changes.
    "TFS102": "the trainable flag of an ON_READ variable",
    "TFS108": "where the variable is created",
    "TFS202": "Keras BatchNormalization's own variables",
    "TFS203": "CentralStorage/ParameterServer strategies",
    "TFS204": "how a statistic is combined across replicas (no aggregation computes a maximum)",
    # Its claim is about the strategies where NONE raises; under Mirrored, which the profiler
    # measures, a constant step keeps NONE in sync and the rule says nothing.
    "TFS302": "CentralStorage/ParameterServer strategies",
    "TFS304": "positional arguments",
    "TFS900": "a file that could not be parsed",
    "TFS901": "a `# noqa` comment that suppresses nothing",
}


def fmt(choice: Optional[Sequence[Optional[str]]]) -> str:
    if not choice or choice[0] is None or choice[1] is None:
        return "unknown"
    return f"{choice[0]} + {choice[1]}"


def _key(m: Dict[str, Any]) -> Choice:
    return (m["synchronization"], m["aggregation"])


def _usable(m: Optional[Dict[str, Any]]) -> bool:
    return m is not None and m.get("error") is None and m.get("values_agree") is True


def _rank(choice: Choice, current: Choice, trainable: bool) -> int:
    on_read_penalty = 100 if trainable and choice[0] == SYNC_ON_READ else 0
    if choice == current:
        return on_read_penalty
    base = _PREFERENCE.index(choice) + 1 if choice in _PREFERENCE else len(_PREFERENCE) + 1
    return base + on_read_penalty


def _time(m: Optional[Dict[str, Any]]) -> Optional[float]:
    if m is None or not m.get("step_time_ms"):
        return None
    return m["step_time_ms"].get("median")


def _n(count: Optional[int], word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def _counts(m: Dict[str, Any]) -> str:
    return (f"{_n(m['reductions_per_step'], 'cross-device reduction')} and "
            f"{_n(m['transfers_per_step'], 'transfer')} per step")


def _short_error(m: Dict[str, Any]) -> str:
    text = (m.get("error") or "").splitlines()[0] if m.get("error") else ""
    return text if len(text) <= 160 else text[:157] + "..."


def recommend(spec: SiteSpec, measurements: List[Dict[str, Any]]) -> Dict[str, Any]:
    by = {_key(m): m for m in measurements}
    pattern = spec.pattern
    current: Choice = (spec.current[0] or "", spec.current[1] or "")
    reference = pattern.reference
    ref = by.get(reference)
    usable = [m for m in measurements if _usable(m)]
    if not usable:
        reason = "no choice ran without an exception and read the same values as the reference"
        if ref is not None and ref.get("error"):
            reason += f" (the reference {fmt(reference)} raised: {_short_error(ref)})"
        result: Dict[str, Any] = {"synchronization": None, "aggregation": None,
                                  "reason": reason}
        result["static_findings"] = judge_findings(spec, by, None)
        return result
    best = min(usable, key=lambda m: (m["reductions_per_step"], m["transfers_per_step"],
                                      _rank(_key(m), current, pattern.trainable)))
    best_key = _key(best)
    cur = by.get(current)
    first = f"{'keep ' if best_key == current else ''}{fmt(best_key)}: {_counts(best)}"
    if best_key != reference and ref is not None:
        first += (f", and the values read agree with the reference {fmt(reference)} "
                  f"({_counts(ref)})")
    parts: List[str] = [first]
    if cur is not None and best_key != current and cur is not ref:
        if cur.get("error"):
            parts.append(f"the code's {fmt(current)} raised {_short_error(cur)}")
        elif cur.get("values_agree") is False:
            parts.append(f"the code's {fmt(current)} ({_counts(cur)}) reads different values "
                         f"from the reference")
        else:
            parts.append(f"the code's {fmt(current)}: {_counts(cur)}")
    other_key = current if cur is not None and best_key != current else reference
    other = by.get(other_key)
    t_best, t_other = _time(best), _time(other)
    if t_best is not None and t_other is not None and other_key != best_key:
        parts.append(f"median step {t_best:.3f} ms against {t_other:.3f} ms for {fmt(other_key)}")
    if best_key[0] == SYNC_ON_READ and best.get("reductions_per_read") is not None:
        parts.append(f"its aggregation happens when it is read in cross-replica context instead: "
                     f"{_n(best['reductions_per_read'], 'reduction')} per read")
    if spec.family == tfapi.KERAS3 and best_key[0] not in (SYNC_AUTO, current[0]) and \
            (spec.api or "").startswith("Layer.add_weight"):
        parts.append("Keras 3 `add_weight` has no synchronization parameter: create a "
                     "`keras.Variable(..., synchronization=\"on_read\")` instead")
    result = {"synchronization": best_key[0], "aggregation": best_key[1],
              "reason": "; ".join(parts)}
    result["static_findings"] = judge_findings(spec, by, best_key)
    return result


def judge_findings(spec: SiteSpec, by: Dict[Choice, Dict[str, Any]],
                   best: Optional[Choice]) -> List[Dict[str, Any]]:
    out = []
    for f in spec.findings:
        verdict, why = _judge(f.code, spec, by, best)
        out.append({"code": f.code, "line": f.line, "severity": f.severity,
                    "message": f.message, "verdict": verdict, "why": why})
    return out


def _errored(m: Optional[Dict[str, Any]]) -> bool:
    return m is not None and bool(m.get("error"))


def _judge(code: str, spec: SiteSpec, by: Dict[Choice, Dict[str, Any]],
           best: Optional[Choice]) -> Tuple[str, str]:
    if code in NOT_MEASURED:
        return "not measured", f"about {NOT_MEASURED[code]}, which the profiler does not measure"
    current: Choice = (spec.current[0] or "", spec.current[1] or "")
    cur = by.get(current)

    def verdict(ok: bool, yes: str, no: str) -> Tuple[str, str]:
        return ("agrees", yes) if ok else ("disagrees", no)

    if code == "TFS101":
        m = by.get((SYNC_NONE, current[1] or AGG_NONE)) or by.get((SYNC_NONE, AGG_NONE))
        if m is None:
            return "not measured", "synchronization NONE was not measured"
        return verdict(_errored(m), f"NONE raised: {_short_error(m)}", "NONE ran without an error")
    if code == "TFS103":
        m = by.get((SYNC_ON_READ, AGG_NONE))
        if m is None:
            return "not measured", "ON_READ + NONE was not measured"
        ok = _errored(m) or m.get("values_agree") is False
        return verdict(ok, f"ON_READ + NONE: {_short_error(m) or 'values differ'}",
                       "ON_READ + NONE ran and read the reference's values")
    if code == "TFS104":
        means = [m for (s, a), m in by.items() if a == AGG_MEAN and s != SYNC_NONE]
        if not means:
            return "not measured", "MEAN was not measured"
        ok = all(_errored(m) for m in means)
        return verdict(ok, f"MEAN raised: {_short_error(means[0])}", "MEAN ran without an error")
    if code == "TFS105":
        m = by.get((SYNC_ON_READ, AGG_SUM))
        if m is None:
            return "not measured", "ON_READ + SUM was not measured"
        return verdict(_errored(m), f"ON_READ + SUM raised: {_short_error(m)}",
                       "ON_READ + SUM ran without an error")
    if code == "TFS106":
        if cur is None:
            return "not measured", "the code's choice is not known"
        return verdict(_errored(cur), f"{fmt(current)} raised: {_short_error(cur)}",
                       f"{fmt(current)} ran without an error")
    if code == "TFS107":
        m = by.get((SYNC_ON_WRITE, AGG_SUM))
        if m is None:
            return "not measured", "ON_WRITE + SUM was not measured"
        return verdict(_errored(m), f"ON_WRITE + SUM raised: {_short_error(m)}",
                       "ON_WRITE + SUM ran without an error")
    if code == "TFS201":
        if cur is None or cur.get("values_agree") is None:
            return "not measured", "the code's choice was not measured to the end"
        return verdict(cur.get("values_agree") is False,
                       f"{fmt(current)} reads different values from the reference "
                       f"{fmt(spec.pattern.reference)}",
                       f"{fmt(current)} read the reference's values")
    if code == "TFS301":
        if best is None:
            return "not measured", "no choice was usable"
        return verdict(best[0] == SYNC_ON_READ, f"the measurement recommends {fmt(best)}",
                       f"the measurement recommends {fmt(best)}, not ON_READ")
    if code == "TFS303":
        agg = current[1] or AGG_NONE
        a, w = by.get((SYNC_AUTO, agg)), by.get((SYNC_ON_WRITE, agg))
        if a is None or w is None:
            return "not measured", "AUTO and ON_WRITE were not both measured"
        fields = ("error", "reductions_per_step", "transfers_per_step", "values_agree")
        same = all((a.get(k) is None) == (w.get(k) is None) if k == "error"
                   else a.get(k) == w.get(k) for k in fields)
        return verdict(same, f"AUTO + {agg} and ON_WRITE + {agg} measured the same",
                       f"AUTO + {agg} and ON_WRITE + {agg} measured differently")
    # A rule the profiler has no specific reading for: it asks for a change.
    if best is None or cur is None:
        return "not measured", "no comparison with the code's choice was possible"
    return verdict(best != current, f"the measurement recommends {fmt(best)} over {fmt(current)}",
                   f"the measurement recommends keeping {fmt(current)}")
