"""The variable sites of the files to profile, with the findings `check` reports on them
(the static model, read through its public API; no TensorFlow)."""
from __future__ import annotations

import os
from typing import Dict, List, Tuple

from .plan import FindingRef, site_lines, site_spec


def sites_and_lines(files: List[str], settings):
    """Every site under `files`, with the findings `check` reports on its call or its
    updates, and each site's (first, last) line keyed by `id(spec)`."""
    specs, lines, _ = sites_lines_findings(files, settings)
    return specs, lines


def sites_lines_findings(files: List[str], settings):
    """`sites_and_lines`, and every finding under `files` by (realpath, line): a line
    where library code makes variables has its findings too (TFS202 on a layer)."""
    from ..api import linked_files

    linked = linked_files(files, settings)
    findings = findings_by_path([lf.model.path for lf in linked], settings)
    specs, lines = [], {}
    for lf in linked:
        for site in lf.sites:
            first, last, update_lines = site_lines(site)
            mine = [FindingRef(f.code, f.line, f.severity, f.message)
                    for f in findings.get(site.path, [])
                    if first <= f.line <= last or f.line in update_lines]
            spec = site_spec(site, mine)
            specs.append(spec)
            lines[id(spec)] = (first, last)
    at: Dict[Tuple[str, int], List[FindingRef]] = {}
    for path, found in findings.items():
        for f in found:
            at.setdefault((os.path.realpath(path), f.line), []).append(
                FindingRef(f.code, f.line, f.severity, f.message))
    return specs, lines, at


def findings_by_path(paths: List[str], settings) -> Dict[str, list]:
    """Every file's findings, as `syncadvisor check` reports them (one linked run)."""
    from ..engine import Run

    run = Run(settings)
    for path in paths:
        run.add_file(path)
    by_path: Dict[str, list] = {}
    for f in run.check().findings:
        by_path.setdefault(f.path, []).append(f)
    return by_path
