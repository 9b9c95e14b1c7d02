"""The command's output options: -V, --quiet, --output-file, --show-fixes."""
from __future__ import annotations

import subprocess
import sys

import pytest

from syncadvisor import __version__
from syncadvisor.cli import main
from tests import paths


@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_version(flag, capsys):
    with pytest.raises(SystemExit) as exit:
        main([flag])
    assert exit.value.code == 0
    assert capsys.readouterr().out == f"syncadvisor {__version__}\n"


def test_version_from_the_command_line():
    result = subprocess.run([sys.executable, "-m", "syncadvisor", "-V"], capture_output=True,
                            text=True, cwd=paths.REPO)
    assert result.returncode == 0 and result.stdout == f"syncadvisor {__version__}\n"
