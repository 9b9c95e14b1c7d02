"""The sample in README.md's profiler section: real output of this version of
`syncadvisor profile --run`, written by this script, never by hand.

    python -m tests.profile.readme_sample --write    # run the profile, rewrite the sample
    python -m tests.profile.readme_sample --check    # exit 1 if the sample has drifted

`tests/profile/test_readme.py` runs the check. Step times are measured anew on each run
and differ from run to run, so the comparison leaves them out (`comparable`): every
count, byte, verdict and judgement must match.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from typing import List

from tests.paths import REPO

README = REPO / "README.md"
PROGRAM = "examples/train_accumulate.py"
ARGUMENTS = ["profile", "--run", PROGRAM, "--no-progress"]
START = "<!-- profile-sample: python -m tests.profile.readme_sample --write -->"
END = "<!-- profile-sample: end -->"


def produce() -> str:
    """The profile's text output, run now, from the repository's root."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("TF_CONFIG", None)
    result = subprocess.run([sys.executable, "-m", "syncadvisor", *ARGUMENTS], cwd=REPO,
                            env=env, capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        raise RuntimeError(f"syncadvisor {' '.join(ARGUMENTS)} exited {result.returncode}:\n"
                           f"{result.stderr[-3000:]}")
    return result.stdout


def block(output: str) -> str:
    return f"```text\n$ syncadvisor profile --run {PROGRAM}\n{output.rstrip()}\n```"


def current(text: str) -> str:
    """The sample now in README.md (between the markers)."""
    start, end = text.index(START) + len(START), text.index(END)
    return text[start:end].strip()


def comparable(sample: str) -> List[str]:
    """The sample without what is measured anew each time: step times, their noise, and
    the time notes of the verdicts; spaces collapsed (the tables' widths follow the
    times)."""
    lines = []
    for line in sample.splitlines():
        if line.startswith("step-time noise:"):
            continue
        line = re.sub(r"\d+\.\d+ \[\d+\.\d+, \d+\.\d+\]", "<ms>", line)
        line = re.sub(r"; (step time within noise|median step [\d.]+ ms against [\d.]+ ms)", "",
                      line)
        line = re.sub(r"drifted [\d.e+-]+", "drifted <d>", line)
        lines.append(" ".join(line.split()))
    return lines


def write() -> None:
    text = README.read_text(encoding="utf-8")
    start, end = text.index(START) + len(START), text.index(END)
    README.write_text(text[:start] + "\n" + block(produce()) + "\n" + text[end:],
                      encoding="utf-8")


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.profile.readme_sample", allow_abbrev=False)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    if args.write:
        write()
        return 0
    if comparable(current(README.read_text(encoding="utf-8"))) != comparable(block(produce())):
        print("README.md's profile sample has drifted: python -m tests.profile.readme_sample "
              "--write", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
