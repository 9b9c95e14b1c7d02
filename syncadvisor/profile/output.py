"""How both profile modes end: the report on standard output, then `--save` and `--plot`;
and the one-line usage errors (no TensorFlow)."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Dict

INSTALL_HINT = ("pip install 'syncadvisor[profile]' (from a checkout of syncadvisor: "
                "pip install '.[profile]')")
EXIT_OK, EXIT_ERROR = 0, 2


def fail(message: str) -> int:
    """Say what is wrong in one line on standard error; the usage error's exit code."""
    print(f"syncadvisor: {message}", file=sys.stderr)
    return EXIT_ERROR


def missing_tensorflow() -> int:
    return fail(f"the profiler needs TensorFlow, which is not installed: {INSTALL_HINT}")


def write_report(args: argparse.Namespace, report: Dict[str, Any], chief: bool = True) -> None:
    """The report on standard output, then --save and --plot (by the chief worker only:
    every worker of a cluster prints its own report, one of them writes the files)."""
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
