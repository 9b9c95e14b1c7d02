"""`syncadvisor profile [FILES]` (no `--run`): each statically found site's pattern, or the
built-in canonical patterns, replayed under every choice (`measure.py`)."""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
from typing import Any, Dict, List, Tuple

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


def choices_of(spec) -> List[Tuple[str, str]]:
    """The distinct choices under the mirrored strategies, the code's first (AUTO is
    ON_WRITE there, so it runs once, as `--run` runs it)."""
    from .plan import CHOICES, normalized

    return list(dict.fromkeys([normalized(spec.current)] + [normalized(c) for c in CHOICES]))


def _measure(args: argparse.Namespace, specs, env, measure) -> Dict[str, Any]:
    from .plan import choice_name, normalized
    from .report import Progress, site_json
    from .verdict import decide, summary

    distinct = {spec.pattern.key() for spec in specs}
    progress = Progress(len(distinct) * len(choices_of(specs[0])) if specs else 1,
                        enabled=env.chief and not args.no_progress)
    profiler = measure.Profiler(env, args.steps, args.warmup)
    cache: Dict[tuple, Dict[Tuple[str, str], Dict[str, Any]]] = {}
    sites = []
    for index, spec in enumerate(specs, 1):
        key = spec.pattern.key()
        choices = choices_of(spec)
        if key not in cache:
            progress.start_site(index, len(specs), spec.label)
            profiler.on_choice = lambda choice, spec=spec: progress.choice(
                choice_name(choice, spec.current))
            cache[key] = {(m["synchronization"], m["aggregation"]): m
                          for m in profiler.measure_all(spec.pattern, choices)}
        implied = normalized(spec.pattern.reference)
        measurements = []
        for choice in choices:
            m = dict(cache[key][choice], choice=choice_name(choice, spec.current))
            m["as_written"] = choice == choices[0]
            m["reference"] = choice == implied
            measurements.append(m)
        decided = decide(spec, measurements, None, None,
                         against=f"the reference {choice_name(implied, spec.current)}")
        site = site_json(spec, measurements, decided["recommendation"])
        site["verdict"] = decided["verdict"]
        site["recommendation"]["static_findings"] = decided["static_findings"]
        sites.append(site)
    progress.finish()
    # The report's fields, as `--run`'s report names them (`tensorflow`: the version).
    report: Dict[str, Any] = dict(
        mode="replay", canonical=not args.files, tensorflow=measure.tensorflow_version(),
        strategy=env.strategy_name, replicas=env.replicas, devices=env.devices,
        device_note=env.note, workers=env.workers, steps=args.steps, warmup=args.warmup,
        sites=sites, summary=summary(sites, 0))
    if env.task:
        report["task"] = env.task
    return report
