"""`profile --run SCRIPT` / `--run -m MODULE`: from the command line to the report (no TensorFlow).

The static part finds the sites in the program's project (the script's folder, or the
folder the module's top-level package sits in), with the findings `syncadvisor check`
reports there; `runs.py` measures them; `verdict.py` decides; this module writes the report.
"""
from __future__ import annotations

import argparse
import importlib.machinery
import os
import sys
from typing import Any, Dict, List, Optional, Tuple

from .cluster import from_environment
from .output import EXIT_OK, fail, write_report
from .report import shown_path


def _target(args: argparse.Namespace) -> Tuple[Optional[Dict[str, str]], str, List[str]]:
    """(target, project folder, files to read sites from), or (None, message, [])."""
    if args.module:
        if args.run:
            return None, "give --run SCRIPT or --run -m MODULE, not both", []
        top = args.module.split(".")[0]
        spec = importlib.machinery.PathFinder.find_spec(top, [os.getcwd()] + sys.path[1:])
        if spec is None or not spec.origin and not spec.submodule_search_locations:
            return None, f"-m {args.module}: no module named {top!r}", []
        if spec.submodule_search_locations:
            package = list(spec.submodule_search_locations)[0]
            project = os.path.dirname(package)
            files = [shown_path(package)]
        else:
            origin = spec.origin or ""
            project = os.path.dirname(origin)
            files = [shown_path(origin)]
        if os.path.realpath(project).startswith(os.path.realpath(sys.prefix) + os.sep):
            return None, (f"-m {args.module}: the module is installed in {sys.prefix}, not "
                          f"part of a project to profile"), []
        return {"module": args.module}, project, files
    script = args.run
    if not script:
        return None, "--run needs a SCRIPT, or -m MODULE", []
    if not os.path.isfile(script):
        return None, f"{script}: no such file", []
    project = os.path.dirname(os.path.abspath(script))
    return {"script": os.path.abspath(script)}, project, [shown_path(project)]


def _chosen(values: List[str]) -> Tuple[Optional[List[Tuple[str, int]]], str]:
    """(`--site` PATH:LINE values, parsed; the first bad one's message)."""
    chosen = []
    for value in values:
        path, _, line = value.rpartition(":")
        if not path or not line.isdigit():
            return None, "--site expects PATH:LINE, e.g. --site train.py:12"
        if not os.path.isfile(path):
            return None, f"--site {value}: {path}: no such file"
        chosen.append((path, int(line)))
    return chosen, ""


def _sites(files: List[str]):
    """Every site under `files`, with its findings and its (first, last) lines."""
    from ..config import load_settings
    from .sites import sites_and_lines

    return sites_and_lines(files, load_settings(None, files[0]))


def run_program(args: argparse.Namespace) -> int:
    from ..config import load_settings
    from . import runs
    from .sites import sites_lines_findings

    target, project, files = _target(args)
    if target is None:
        return fail(project)
    chosen, bad = _chosen(args.site)
    if chosen is None:
        return fail(bad)
    specs, lines, findings_at = sites_lines_findings(files, load_settings(None, files[0]))
    show = not args.no_progress and args.format == "text"

    def progress(text: str) -> None:
        if show:
            print(f"profiling {text}", file=sys.stderr, flush=True)

    options = {"steps": args.steps, "warmup": args.warmup, "seed": args.seed,
               "devices": args.devices, "timeout": float(args.timeout),
               "verbose": args.verbose, "everything": args.choices == "all"}
    try:
        raw = runs.profile(target, list(args.files), project, specs, lines, findings_at,
                           chosen, options, progress)
    except runs.RunFailed as exc:
        return fail(str(exc))
    if raw["unmatched"]:
        made = _made_lines(raw)
        where = ", ".join(f"{p}:{n}" for p, n in raw["unmatched"])
        return fail(f"--site {where}: the program as written made no variable there"
                    + (f" (it made variables at {', '.join(made)})" if made else ""))
    workers, task, chief = from_environment()
    report = build_report(args, target, raw, lines, workers)
    if task:
        report["task"] = task
    write_report(args, report, chief)
    return EXIT_OK


def _made_lines(raw: Dict[str, Any]) -> List[str]:
    """Where the program as written made variables: static sites' and library lines."""
    base = raw["base"]
    made = {r.get("site") for r in base.get("variables") or []}
    found = [f"{s.path}:{s.line}" for s in raw["static"] + raw["library"] if s.key in made]
    return list(dict.fromkeys(found))


def build_report(args: argparse.Namespace, target: Dict[str, str], raw: Dict[str, Any],
                 lines, workers: int) -> Dict[str, Any]:
    """The `--run` report (JSON-ready) from what `runs.profile` measured."""
    from ..measured import file_digest
    from .report import site_json
    from .verdict import decide, summary

    base = raw["base"]
    sites = []
    measured = set()
    for spec, measurements, judgement in raw["sites"]:
        measured.add(id(spec))
        decided = decide(spec, measurements, raw.get("noise_ms"), judgement["cannot_judge"],
                         fixes=judgement.get("with_fixes") or ())
        site = site_json(spec, measurements, decided["recommendation"])
        site["end_line"] = lines[id(spec)][1] if id(spec) in lines else spec.line
        # What `check --profile` matches findings by: the file, unchanged since.
        site["realpath"] = os.path.realpath(spec.path)
        site["source_sha256"] = file_digest(spec.path)
        site["verdict"] = decided["verdict"]
        site["judgement"] = judgement
        site["recommendation"]["static_findings"] = decided["static_findings"]
        sites.append(site)
    library = [{"path": s.path, "line": s.line, "name": s.name, "why": s.library,
                "measured": id(s) in measured} for s in raw["library"]]
    report: Dict[str, Any] = {
        "mode": "run",
        "program": dict(target, args=list(args.files)),
        "tensorflow": base.get("tf_version"),
        "strategy": base.get("strategy"),
        "replicas": base.get("replicas"),
        "devices": base.get("devices", []),
        "device_note": base.get("device_note"),
        "workers": max(workers, base.get("workers") or 1),
        "steps": args.steps,
        "measured_steps": base.get("steps"),
        "program_steps": base.get("steps_total"),
        "ended": base.get("ended"),
        "warmup": args.warmup,
        "seed": args.seed,
        "noise_ms": raw.get("noise_ms"),
        "reference": raw.get("reference"),
        "sites": sites,
        "not_reached": [{"path": s.path, "line": s.line, "name": s.name}
                        for s in raw["not_reached"]],
        "library": library,
        "summary": summary(sites, len(raw["not_reached"])),
    }
    if not sites:
        report["nothing_to_profile"] = (
            "no variable the program made is at a site with a finding about its choice or "
            "a synchronization or aggregation written out; name one with --site PATH:LINE")
    return report
