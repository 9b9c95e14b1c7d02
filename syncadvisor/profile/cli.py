"""`syncadvisor profile` arguments (no TensorFlow import here)."""
from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="*", metavar="FILE")


def run(args: argparse.Namespace) -> int:
    print("syncadvisor: the profiler is not built yet")
    return 2
