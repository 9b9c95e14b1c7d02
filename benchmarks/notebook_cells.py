"""`check` on notebooks, per code cell, for two checkouts of syncadvisor side by side.

    python -m benchmarks.notebook_cells --before /tmp/base --after . NOTEBOOK_FOLDER

Times `python -m syncadvisor check --no-cache --exit-zero --jobs 1` over every notebook
under NOTEBOOK_FOLDER, twice: as they are ("as-is": most have no TensorFlow and the
prefilter drops them), and each with a TensorFlow cell added at the end ("with-tf":
every cell is then read, parsed and modelled). The two checkouts run alternately, in
a new order each round, so that other work on the machine falls on both; the ratio
after/before of each round is printed with its median and range.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Tuple

TF_CELL = ("import tensorflow as tf\nstrategy = tf.distribute.MirroredStrategy()\n"
           "with strategy.scope():\n"
           "    v = tf.Variable(1.0, synchronization=tf.VariableSynchronization.DEFAULT)\n")


def _corpus(folder: Path, out: Path) -> Tuple[int, int, int]:
    """Copy the notebooks (nbformat 4, JSON) to out/as-is and, with a TF cell, out/with-tf;
    (notebooks, code cells as-is, code cells with-tf)."""
    notebooks = cells = 0
    for index, path in enumerate(sorted(folder.rglob("*.ipynb"))):
        try:
            raw = path.read_text(encoding="utf-8")
            data = json.loads(raw)
        except (UnicodeDecodeError, ValueError):
            continue
        if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
            continue
        notebooks += 1
        cells += sum(1 for c in data["cells"]
                     if isinstance(c, dict) and c.get("cell_type") == "code")
        name = f"nb{index:04d}.ipynb"
        (out / "as-is").mkdir(parents=True, exist_ok=True)
        (out / "with-tf").mkdir(parents=True, exist_ok=True)
        (out / "as-is" / name).write_text(raw, encoding="utf-8")
        data["cells"].append({"cell_type": "code", "execution_count": None, "metadata": {},
                              "outputs": [], "source": TF_CELL})
        (out / "with-tf" / name).write_text(json.dumps(data, indent=1), encoding="utf-8")
    return notebooks, cells, cells + notebooks


def _time(checkout: Path, folder: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "syncadvisor", "check", "--no-cache", "--exit-zero",
                    "--jobs", "1", "--format", "concise", str(folder)], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, required=True)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("notebooks", type=Path)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        notebooks, cells_as_is, cells_tf = _corpus(args.notebooks, out)
        print(f"{notebooks} notebooks; code cells: {cells_as_is} as-is, {cells_tf} with-tf; "
              f"{args.repeats} rounds, 1 warm-up")
        for kind, cells in (("as-is", cells_as_is), ("with-tf", cells_tf)):
            folder = out / kind
            times: Dict[str, List[float]] = {"before": [], "after": []}
            for side in ("before", "after"):  # warm-up: the file cache, .pyc files
                _time(getattr(args, side), folder)
            for round_ in range(args.repeats):
                order = ("before", "after") if round_ % 2 == 0 else ("after", "before")
                for side in order:
                    times[side].append(_time(getattr(args, side), folder))
            ratios = [a / b for a, b in zip(times["after"], times["before"])]
            for side in ("before", "after"):
                per = [t / cells * 1e6 for t in times[side]]
                print(f"{kind:8} {side:6} median {statistics.median(times[side]):.3f} s "
                      f"({min(times[side]):.3f}-{max(times[side]):.3f}); per cell "
                      f"{statistics.median(per):.0f} us ({min(per):.0f}-{max(per):.0f})")
            print(f"{kind:8} after/before per round: median {statistics.median(ratios):.3f}, "
                  f"range {min(ratios):.3f}-{max(ratios):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
