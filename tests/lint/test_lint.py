"""The package passes its linter and its type checker (configured in pyproject.toml), as
CI runs them through this suite."""
from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from tests import paths


def _run(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *argv], cwd=paths.REPO, capture_output=True,
                          text=True, timeout=600)


@pytest.mark.skipif(shutil.which("ruff") is None and not _run("ruff", "--version").stdout,
                    reason="ruff is in the test extras")
def test_ruff_passes_over_the_package():
    result = _run("ruff", "check", "syncadvisor")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_passes_over_the_package():
    pytest.importorskip("mypy", reason="mypy is in the test extras")
    result = _run("mypy")
    assert result.returncode == 0, result.stdout + result.stderr
