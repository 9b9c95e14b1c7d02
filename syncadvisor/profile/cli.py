"""`syncadvisor profile`: measure every synchronization/aggregation choice with real TensorFlow.

Importing this module (as `syncadvisor --help` does) imports neither TensorFlow nor numpy:
TensorFlow is imported inside `run`, after the static part is done and only if it is
installed (the `profile` extra).
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import json
import sys
from typing import Any, Dict, List, Tuple

INSTALL_HINT = ("pip install 'syncadvisor[profile]' (from a checkout of syncadvisor: "
                "pip install '.[profile]')")
EXIT_OK, EXIT_ERROR = 0, 2
DEFAULT_STEPS = 20
DEFAULT_WARMUP = 3


def _positive(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {number}")
    return number


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Replay each variable site found in FILES (or, with no FILES, the built-in canonical "
        "patterns: trainable weight, metric accumulator, step counter, moving statistic, "
        "gradient accumulator) under every synchronization x aggregation choice with real "
        "TensorFlow, and report the measured step time, cross-device reductions per step, "
        "whether the values read agree with the reference choice, and any error. "
        f"Needs TensorFlow: {INSTALL_HINT}.")
    parser.add_argument("files", nargs="*", metavar="FILE",
                        help="Python files or folders to take the variable sites from; with "
                             "--run, the program's own arguments (after `--`)")
    parser.add_argument("--run", nargs="?", const="", metavar="SCRIPT",
                        help="run this program (or, with -m, a module) once per candidate "
                             "choice of each variable site that matters, under the strategy it "
                             "creates, and measure each: `profile --run train.py -- ARGS` (its "
                             "standard input is empty: give it input through files or ARGS)")
    parser.add_argument("-m", dest="module", metavar="MODULE",
                        help="with --run: run a module, as `python -m MODULE` does")
    parser.add_argument("--site", action="append", default=[], metavar="PATH:LINE",
                        help="with --run: profile the site created at PATH:LINE (repeatable; "
                             "default: every site with a finding about its choice or an "
                             "explicit synchronization or aggregation)")
    parser.add_argument("--choices", choices=("candidates", "all"), default="candidates",
                        help="with --run: the code's choice, the reference, AUTO + NONE and "
                             "ON_READ where it applies (default), or every distinct one (12: "
                             "AUTO and ON_WRITE run once under the mirrored strategies)")
    parser.add_argument("--seed", type=int, default=0,
                        help="with --run: the seed set before every run (default 0)")
    parser.add_argument("--timeout", type=_positive, default=300, metavar="S",
                        help="with --run: seconds one run may take (default 300)")
    parser.add_argument("--save", metavar="PROFILE.json",
                        help="also write the JSON report here, for `syncadvisor check "
                             "--profile PROFILE.json`")
    parser.add_argument("--verbose", action="store_true",
                        help="show TensorFlow's log and the program's output (on standard "
                             "error)")
    parser.add_argument("--devices", type=_positive, metavar="N",
                        help="replicas: the first N GPUs when there are two or more, else the "
                             "CPU split into N logical devices (default: all GPUs, or 2)")
    parser.add_argument("--steps", type=_positive, default=DEFAULT_STEPS, metavar="K",
                        help=f"timed steps per choice (default {DEFAULT_STEPS})")
    parser.add_argument("--warmup", type=_positive, default=DEFAULT_WARMUP, metavar="W",
                        help=f"untimed steps before them, the first traces "
                             f"(default {DEFAULT_WARMUP})")
    parser.add_argument("--strategy", choices=("mirrored", "multiworker"), default="mirrored",
                        help="MirroredStrategy on this machine, or MultiWorkerMirroredStrategy "
                             "over the cluster in TF_CONFIG (run the same command on every worker)")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--plot", metavar="FILE.png",
                        help="also write a chart (matplotlib): with --run, the bytes each "
                             "choice moves per step per site, step times beside; else the step "
                             "time per choice")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress output on standard error")


@contextlib.contextmanager
def _quiet_stderr(quiet: bool):
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


def tf_config_cluster(text: str) -> Tuple[int, Dict[str, Any], bool]:
    """(workers, this task, whether it is the chief) from a TF_CONFIG, as
    MultiWorkerMirroredStrategy reads it: the chief is the `chief` task where the cluster
    has one, else worker 0. ValueError, AttributeError or TypeError for a malformed one."""
    data = json.loads(text)
    cluster = data.get("cluster", {})
    task = data.get("task", {})
    workers = len(cluster.get("worker", [])) + len(cluster.get("chief", []))
    if cluster.get("chief"):
        chief = task.get("type") == "chief"
    else:
        chief = task.get("type") == "worker" and int(task.get("index", 0)) == 0
    return workers, task, chief


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # ValueError: a module set to None in sys.modules
        return False


def _fail(message: str) -> int:
    print(f"syncadvisor: {message}", file=sys.stderr)
    return EXIT_ERROR


def _missing_tensorflow() -> int:
    return _fail(f"the profiler needs TensorFlow, which is not installed: {INSTALL_HINT}")


def run(args: argparse.Namespace) -> int:
    if not _importable("tensorflow"):
        return _missing_tensorflow()
    if not args.verbose:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    from .plot import matplotlib_available

    if args.plot and not matplotlib_available():
        return _fail(f"--plot needs matplotlib, which is not installed: {INSTALL_HINT}")
    if args.devices == 1:
        return _fail("--devices 1: with one replica nothing can diverge or be reduced, so "
                     "there is nothing to measure; use 2 or more")
    if args.run is not None or args.module:
        from .program_cli import run_program

        return run_program(args)
    specs = _static_sites(args)
    if specs is None:
        return EXIT_ERROR
    try:
        with _quiet_stderr(not args.verbose):
            from . import measure
    except ImportError as exc:
        if "tensorflow" in str(exc) or getattr(exc, "name", "") in ("tensorflow", "numpy"):
            return _missing_tensorflow()
        raise
    try:
        with _quiet_stderr(not args.verbose):
            env = measure.setup(args.strategy, args.devices)
    except measure.ProfileError as exc:
        return _fail(str(exc))
    if env.replicas < 2:
        return _fail(f"{env.strategy_name} has {env.replicas} replica ({env.note}): with fewer "
                     "than 2 nothing can diverge or be reduced, so there is nothing to measure")
    report = _measure(args, specs, env, measure)
    write_report(args, report, env.chief)
    return EXIT_OK


def write_report(args: argparse.Namespace, report: Dict[str, Any], chief: bool = True) -> None:
    """The report on standard output, then --save and --plot."""
    if args.format == "json":
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        from .report import render_text

        sys.stdout.write(render_text(report))
    sys.stdout.flush()
    if args.save and chief:
        from ..fixes import write_atomically

        try:
            write_atomically(args.save, (json.dumps(report, indent=2) + "\n").encode("utf-8"))
        except OSError as exc:
            print(f"syncadvisor: cannot write {args.save}: {exc.strerror or exc}",
                  file=sys.stderr)
        else:
            print(f"syncadvisor: wrote {args.save}", file=sys.stderr)
    if args.plot and chief:
        from .plot import write_plot

        write_plot(report, args.plot)
        print(f"syncadvisor: wrote {args.plot}", file=sys.stderr)


def _static_sites(args: argparse.Namespace):
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

    settings = load_settings(None, args.files[0])
    try:
        return sites_and_lines(args.files, settings)[0]
    except MissingPath as exc:
        _fail(f"{exc}: no such file or directory")
        return None


def sites_and_lines(files: List[str], settings):
    """Every site under `files`, with the findings `check` reports on its call or its
    updates, and each site's (first, last) line keyed by `id(spec)`."""
    from ..api import linked_files
    from .plan import FindingRef, site_lines, site_spec

    linked = linked_files(files, settings)
    findings = _findings([lf.model.path for lf in linked], settings)
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
    return specs, lines


def _findings(paths: List[str], settings) -> Dict[str, list]:
    """Every file's findings, as `syncadvisor check` reports them (one linked run)."""
    from ..engine import Run

    run = Run(settings)
    for path in paths:
        run.add_file(path)
    by_path: Dict[str, list] = {}
    for f in run.check().findings:
        by_path.setdefault(f.path, []).append(f)
    return by_path


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
