"""Benchmark harness for syncadvisor.

Run ``python -m benchmarks --help``.  The harness downloads its corpus (the
keras, tf_keras and tensorflow wheels, pinned) from PyPI into
``benchmarks/.work/wheels``, extracts the ``.py`` files into
``benchmarks/corpus/<name>/``, then times syncadvisor (cold and warm), ruff,
flake8 with and without the syncadvisor plugin, and TorchFix on exactly the
same files, alternating tools round by round, and prints medians, ratios to
ruff's ``--no-cache`` time, peak memory and the issue's targets.

It measures only; it never changes the engine.
"""

from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent
WORK_DIR = HERE / ".work"
WHEELS_DIR = WORK_DIR / "wheels"
VENVS_DIR = WORK_DIR / "venvs"
SCALE_DIR = WORK_DIR / "scale"
CORPUS_DIR = HERE / "corpus"
