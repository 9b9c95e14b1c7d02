"""What the static findings on a measured site say, read against its measurements (no
TensorFlow): "agrees", "disagrees" or "not measured", and why.

`_PREFERENCE` is the order `verdict.py` breaks the last ties in: the simplest spelling
first (the default AUTO + NONE, then ON_READ, which keeps writes local, then AUTO with an
aggregation, and ON_WRITE, which AUTO already means under the mirrored strategies, last).
"""
from __future__ import annotations

import textwrap
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..model.tfapi import (AGG_MEAN, AGG_NONE, AGG_ONLY_FIRST_REPLICA, AGG_SUM, SYNC_AUTO,
                           SYNC_NONE, SYNC_ON_READ, SYNC_ON_WRITE)
from .plan import SETTING, SYNCHRONIZED, SiteSpec, normalized

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
    "TFS109": "when a Keras 3 optimizer makes its slot variables",
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


def _short_error(m: Dict[str, Any]) -> str:
    text = (m.get("error") or "").splitlines()[0] if m.get("error") else ""
    return text if len(text) <= 160 else textwrap.shorten(text, 160, placeholder=" ...")


def judge_findings(spec: SiteSpec, by: Dict[Choice, Dict[str, Any]],
                   best: Optional[Choice], against: Optional[str] = None) -> List[Dict[str, Any]]:
    """Each static finding on the site read against its measurements: "agrees",
    "disagrees" or "not measured", and why. `against` names what values were judged
    against (default: the pattern's implied choice)."""
    against = against or f"the reference {fmt(spec.pattern.reference)}"
    out = []
    for f in spec.findings:
        verdict, why = _judge(f.code, spec, by, best, against)
        out.append({"code": f.code, "line": f.line, "severity": f.severity,
                    "message": f.message, "verdict": verdict, "why": why})
    return out


def _judge_synchronized(spec: SiteSpec, by: Dict[Choice, Dict[str, Any]],
                        against: str) -> Tuple[str, str]:
    """TFS202 (BatchNormalization without `synchronized=True`) read against the run with it."""
    written = by.get(normalized(spec.current))
    synced = by[(SETTING, SYNCHRONIZED)]
    if written is None or written.get("error") or synced.get("error"):
        return "not measured", "the layer's runs did not both finish"
    wrong = written.get("copies_agree") is False or written.get("values_agree") is False
    if wrong:
        return "agrees", (f"without {SYNCHRONIZED} the statistics' copies diverge or differ "
                          f"from {against}")
    return "disagrees", f"without {SYNCHRONIZED} the values agree with {against}"


def _errored(m: Optional[Dict[str, Any]]) -> bool:
    return m is not None and bool(m.get("error"))


def _judge(code: str, spec: SiteSpec, by: Dict[Choice, Dict[str, Any]],
           best: Optional[Choice], against: str) -> Tuple[str, str]:
    if code == "TFS202" and (SETTING, SYNCHRONIZED) in by:
        return _judge_synchronized(spec, by, against)
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
    if code in ("TFS106", "TFS110"):  # the code's own choice raises
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
        if cur is None or cur.get("values_agree") is None and cur.get("copies_agree") is None:
            return "not measured", "the code's choice was not measured to the end"
        wrong = cur.get("values_agree") is False or cur.get("copies_agree") is False
        return verdict(wrong, f"{fmt(current)} reads different values from {against}",
                       f"{fmt(current)} read the values of {against}")
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
