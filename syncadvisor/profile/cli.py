"""`syncadvisor profile`: measure every synchronization/aggregation choice with real TensorFlow.

Importing this module (as `syncadvisor --help` does) imports neither TensorFlow nor numpy:
TensorFlow is imported inside `run`, after the static part is done and only if it is
installed (the `profile` extra).
"""
from __future__ import annotations

import argparse
import importlib.util
import os

from .output import EXIT_ERROR, INSTALL_HINT, fail, missing_tensorflow

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
                        help="with --run: profile the site created at PATH:LINE, or the "
                             "variables library code makes on that line (a Keras metric's, an "
                             "optimizer's, a layer's); repeatable; default: every site with a "
                             "finding about its choice or an explicit synchronization or "
                             "aggregation")
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
    parser.add_argument("--output-format", "--format", dest="format", choices=("text", "json"),
                        default="text")
    parser.add_argument("--plot", metavar="FILE.png",
                        help="also write a chart (matplotlib): with --run, the bytes each "
                             "choice moves per step per site, step times beside; else the step "
                             "time per choice")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress output on standard error")


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # ValueError: a module set to None in sys.modules
        return False


def run(args: argparse.Namespace) -> int:
    if not _importable("tensorflow"):
        return missing_tensorflow()
    if not args.verbose:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    from .plot import matplotlib_available

    if args.plot and not matplotlib_available():
        return fail(f"--plot needs matplotlib, which is not installed: {INSTALL_HINT}")
    if args.devices == 1:
        return fail("--devices 1: with one replica nothing can diverge or be reduced, so "
                    "there is nothing to measure; use 2 or more")
    if args.run is not None or args.module:
        from .program_cli import run_program

        return run_program(args)
    from .replay import quiet_stderr, replay, static_sites

    specs = static_sites(args)
    if specs is None:
        return EXIT_ERROR
    try:
        with quiet_stderr(not args.verbose):
            from . import measure
    except ImportError as exc:
        if "tensorflow" in str(exc) or getattr(exc, "name", "") in ("tensorflow", "numpy"):
            return missing_tensorflow()
        raise
    return replay(args, specs, measure)
