"""`check --profile PROFILE.json`: static findings read beside what the profiler measured.

A profile (`syncadvisor profile --run ... --save PROFILE.json`) judges each finding it saw
on a measured site: "agrees", "disagrees" or "not measured". Here a finding of this run
that the profile judged (same file, code and line) is kept with the site's measured
verdict added to its message where the measurement agrees, and dropped where it
disagrees: advice the program's own runs contradict is a cost to the reader. A file whose
text changed since it was profiled is not matched (its lines may have moved); the summary
says so. No TensorFlow here.
"""
from __future__ import annotations

import hashlib
import json
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .records import record, replace


class ProfileUnreadable(Exception):
    """The file is not a profile this version can read (a usage error)."""


@record
class Applied:
    findings: list
    carried: int  # findings whose message now carries the measurement
    dropped: int  # findings the measurement contradicts, left out
    stale: List[str]  # files changed since they were profiled


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
    kept, carried, dropped = [], 0, 0
    for finding in findings:
        hit = by_key.get((os.path.realpath(finding.path), finding.code, finding.line))
        if hit is None:
            kept.append(finding)
            continue
        site, judged = hit
        if judged.get("verdict") == "disagrees":
            dropped += 1
            continue
        if judged.get("verdict") == "agrees":
            carried += 1
            text = (site.get("verdict") or {}).get("text") or judged.get("why")
            finding = replace(finding, message=f"{finding.message} [measured: {text}]")
        kept.append(finding)
    return Applied(kept, carried, dropped, sorted(set(stale)))


def summary(applied: Applied, path: str) -> str:
    words = [f"{applied.carried} finding{' carries' if applied.carried == 1 else 's carry'} "
             f"measurements",
             f"{applied.dropped} dropped as the measurements contradict them"]
    text = f"Profile {path}: " + ", ".join(words) + "."
    if applied.stale:
        text += (f" Not matched, changed since profiled: {', '.join(applied.stale)}.")
    return text
