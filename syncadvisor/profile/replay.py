"""`syncadvisor profile [FILES]` (no `--run`): each statically found site's pattern, or the
built-in canonical patterns, replayed under every choice (`measure.py`)."""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
from typing import Any, Dict, List

from .output import EXIT_OK, fail, write_report


@contextlib.contextmanager
def quiet_stderr(quiet: bool):
    """Standard error's descriptor pointed at /dev/null while TensorFlow starts: its C++ side
    prints (CUDA probes, absl's preamble) before any log level applies."""
    if not quiet:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def static_sites(args: argparse.Namespace):
    """The sites to profile, with their static findings; None after a usage error."""
    from .plan import FindingRef, canonical_sites

    if not args.files:
        from ..api import check_source

        def findings_of(source: str) -> List[FindingRef]:
            return [FindingRef(f.code, f.line, f.severity, f.message)
                    for f in check_source(source, "canonical.py", assume_strategy="mirrored")]

        return canonical_sites(findings_of)

    from ..config import load_settings
    from ..files import MissingPath
    from .sites import sites_and_lines

    settings = load_settings(None, args.files[0])
    try:
        return sites_and_lines(args.files, settings)[0]
    except MissingPath as exc:
        fail(f"{exc}: no such file or directory")
        return None


def replay(args: argparse.Namespace, specs, measure) -> int:
    """Measure `specs` with `measure` (the module, imported by the caller) and report."""
    try:
        with quiet_stderr(not args.verbose):
            env = measure.setup(args.strategy, args.devices)
    except measure.ProfileError as exc:
        return fail(str(exc))
    if env.replicas < 2:
        return fail(f"{env.strategy_name} has {env.replicas} replica ({env.note}): with fewer "
                    "than 2 nothing can diverge or be reduced, so there is nothing to measure")
    report = _measure(args, specs, env, measure)
    write_report(args, report, env.chief)
    return EXIT_OK


def _measure(args: argparse.Namespace, specs, env, measure) -> Dict[str, Any]:
    from .advice import recommend
    from .verdict import from_recommendation
    from .plan import CHOICES
    from .report import Progress, site_json

    distinct = {spec.pattern.key() for spec in specs}
    progress = Progress(len(distinct) * len(CHOICES),
                        enabled=env.chief and not args.no_progress)
    profiler = measure.Profiler(env, args.steps, args.warmup, on_choice=progress.choice)
    cache: Dict[tuple, List[Dict[str, Any]]] = {}
    sites = []
    for index, spec in enumerate(specs, 1):
        key = spec.pattern.key()
        if key not in cache:
            progress.start_site(index, len(specs), spec.label)
            cache[key] = profiler.measure_all(spec.pattern)
        measurements = [dict(m) for m in cache[key]]
        recommendation = recommend(spec, measurements)
        site = site_json(spec, measurements, recommendation)
        site["verdict"] = from_recommendation(spec, measurements, recommendation)
        sites.append(site)
    progress.finish()
    report: Dict[str, Any] = {
        "tensorflow": measure.tensorflow_version(),
        "strategy": env.strategy_name,
        "replicas": env.replicas,
        "devices": env.devices,
        "device_note": env.note,
        "workers": env.workers,
        "steps": args.steps,
        "warmup": args.warmup,
        "sites": sites,
    }
    if env.task:
        report["task"] = env.task
    return report
