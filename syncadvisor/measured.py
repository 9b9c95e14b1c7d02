"""`check --profile PROFILE.json`: static findings read beside what the profiler measured.

A profile (`syncadvisor profile --run ... --save PROFILE.json`) judges each finding it saw
on a measured site: "agrees", "disagrees" or "not measured". Here a finding of this run
that the profile saw (same file, code and line) is kept with the site's measured verdict
added to its message where the measurement agrees; kept with why it was not judged where
it was not; and dropped where the measurement disagrees: advice the program's own runs
contradict is a cost to the reader. Every finding the profile saw is named with what the
measurement said of it (`report`), the disagreements among them. A file whose text
changed since it was profiled is not matched (its lines may have moved); the summary says
so. No TensorFlow here.
"""
from __future__ import annotations

import hashlib
import json
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .records import field, record, replace


class ProfileUnreadable(Exception):
    """The file is not a profile this version can read (a usage error)."""


AGREES, DISAGREES = "agrees", "disagrees"


@record
class Judged:
    """What the profile said of one finding of this run."""

    finding: Any
    verdict: str  # "agrees", "disagrees" or "not measured"
    why: str


@record
class Applied:
    findings: list
    carried: int  # findings whose message now carries the measurement
    dropped: int  # findings the measurement contradicts, left out
    stale: List[str]  # files changed since they were profiled
    judged: List[Judged] = field(default_factory=list)  # every finding the profile saw


def file_digest(path: str) -> Optional[str]:
    try:
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    except OSError:
        return None


def load(path: str) -> List[Dict[str, Any]]:
    """The measured sites of a saved profile."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except OSError as exc:
        raise ProfileUnreadable(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ProfileUnreadable(f"{path} is not JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("mode") != "run":
        raise ProfileUnreadable(f"{path} is not a profile of a program: write one with "
                                "`syncadvisor profile --run SCRIPT --save PROFILE.json`")
    sites = data.get("sites")
    if not isinstance(sites, list):
        raise ProfileUnreadable(f"{path} has no list of sites")
    return [s for s in sites if isinstance(s, dict) and s.get("realpath")]


def apply(findings: Sequence[Any], sites: List[Dict[str, Any]]) -> Applied:
    by_key: Dict[Tuple[str, str, int], Tuple[Dict[str, Any], Dict[str, Any]]] = {}
    digests: Dict[str, Optional[str]] = {}
    stale: List[str] = []
    for site in sites:
        real = site["realpath"]
        if real not in digests:
            digests[real] = file_digest(real)
            if site.get("source_sha256") and digests[real] != site["source_sha256"]:
                stale.append(site.get("path") or real)
        if digests[real] is None or digests[real] != site.get("source_sha256"):
            continue
        judged = (site.get("recommendation") or {}).get("static_findings") or []
        for f in judged:
            by_key[(real, f.get("code"), f.get("line"))] = (site, f)
    kept, carried, dropped, seen = [], 0, 0, []
    for finding in findings:
        hit = by_key.get((os.path.realpath(finding.path), finding.code, finding.line))
        if hit is None:
            kept.append(finding)
            continue
        site, judged = hit
        verdict, why = judged.get("verdict") or "not measured", judged.get("why") or ""
        seen.append(Judged(finding, verdict, why))
        if verdict == DISAGREES:
            dropped += 1
            continue
        if verdict == AGREES:
            carried += 1
            text = (site.get("verdict") or {}).get("text") or why
            finding = replace(finding, message=f"{finding.message} [measured: {text}]")
        else:
            finding = replace(finding, message=f"{finding.message} [measured site, not "
                                               f"judged: {why}]")
        kept.append(finding)
    return Applied(kept, carried, dropped, sorted(set(stale)), seen)


def report(applied: Applied) -> List[str]:
    """A line per finding the profile saw: where, its code, and what the measurement said
    (a disagreement named as one, with the finding left out)."""
    lines = []
    for j in applied.judged:
        f = j.finding
        said = {AGREES: "agrees", DISAGREES: "disagrees, left out"}.get(j.verdict,
                                                                       "not judged")
        lines.append(f"{f.path}:{f.line}:{f.column}: {f.code}: the measurement {said}: {j.why}")
    return lines


def summary(applied: Applied, path: str) -> str:
    unjudged = len(applied.judged) - applied.carried - applied.dropped
    words = [f"{applied.carried} finding{' carries' if applied.carried == 1 else 's carry'} "
             f"measurements",
             f"{applied.dropped} dropped as the measurements contradict them",
             f"{unjudged} on measured sites not judged"]
    text = f"Profile {path}: " + ", ".join(words) + "."
    if applied.stale:
        text += (f" Not matched, changed since profiled: {', '.join(applied.stale)}.")
    return text
