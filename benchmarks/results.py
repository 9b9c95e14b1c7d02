"""What every timing benchmark does around its runs: compile the tools' modules first, and
append its tables to the results file."""

from __future__ import annotations

import sys
from pathlib import Path


def _fresh_bytecode() -> None:
    """Every tool's Python modules compiled now: with PYTHONDONTWRITEBYTECODE set, a module
    edited since its .pyc was written would be compiled again in every timed run, which an
    installed tool never does."""
    import os
    import subprocess

    import syncadvisor

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "compileall", "-q",
                    str(Path(syncadvisor.__file__).parent)], env=env, check=False,
                   stdout=subprocess.DEVNULL)


def _append_results(path: Path, machine: dict, argv: list, texts: list, seconds: float) -> None:
    """One section per run, newest last: when, where, the command, the tables."""
    new = not path.exists()
    with open(path, "a", encoding="utf-8") as out:
        if new:
            out.write("# Benchmark results\n\nWritten by `python -m benchmarks` (one section per run, "
                      "newest last; `--no-results` leaves this file alone). Each section names the "
                      "machine and the commit it measured.\n")
        commit = machine.get("git_commit") or "?"
        out.write(f"\n## {machine.get('date_utc', '?')} at {commit}\n\n")
        out.write(f"`python -m benchmarks {' '.join(argv)}` ({seconds:.0f} s)\n\n```\n")
        out.write("\n\n".join(t.strip("\n") for t in texts) + "\n```\n")
