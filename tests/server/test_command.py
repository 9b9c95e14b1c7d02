"""`syncadvisor server` as a command: without its extra it says what to install."""
from __future__ import annotations

import subprocess
import sys


def test_without_pygls_the_server_says_how_to_install_it():
    code = ("import sys; sys.modules['pygls'] = None; from syncadvisor.cli import main; "
            "raise SystemExit(main(['server']))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2
    assert "pip install 'syncadvisor[server]'" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_check_never_imports_the_server():
    code = ("import sys; from syncadvisor.cli import main; main(['check', '-q', '--exit-zero', "
            "'-']); print(sorted(m for m in sys.modules if m.startswith(('pygls', "
            "'lsprotocol', 'syncadvisor.server'))))")
    done = subprocess.run([sys.executable, "-c", code], input="x = 1\n", capture_output=True,
                          text=True, timeout=60)
    assert done.stdout.strip().splitlines()[-1] == "[]"
