"""`syncadvisor check --watch`: check again on every change, stop cleanly on Ctrl-C."""
from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time

import pytest

from syncadvisor.cli import main

GOOD = "import tensorflow as tf\nv = tf.Variable(1.)\n"
BAD = "import tensorflow as tf\nv = tf.Variable(1., synchronization=tf.VariableSynchronization.DEFAULT)\n"
TIMEOUT = 60  # seconds for each report to come: a slow machine, not the tool's speed


class Watcher:
    """`check --watch` in its own process group, as a terminal runs it (Ctrl-C reaches
    the whole group), with its output read line by line as it comes."""

    def __init__(self, *args: str):
        # SIGINT at its default in the child: run in the background by a shell without job
        # control (as CI may run the suite), pytest inherits it ignored, and Python would
        # leave it ignored in the child, which then never sees Ctrl-C.
        self.process = subprocess.Popen(
            [sys.executable, "-m", "syncadvisor", "check", "--watch", "--no-cache", *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        self.lines: "queue.Queue[str]" = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def report(self) -> str:
        """The output up to the next "Watching for file changes." line."""
        got = []
        deadline = time.monotonic() + TIMEOUT
        while not got or "Watching for file changes." not in got[-1]:
            got.append(self.lines.get(timeout=max(0.1, deadline - time.monotonic())))
        return "".join(got)

    def interrupt(self):
        os.killpg(self.process.pid, signal.SIGINT)
        _, err = self.process.communicate(timeout=TIMEOUT)
        return self.process.returncode, err

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


def test_watch_checks_again_on_a_change_and_a_new_file_and_ctrl_c_exits_0(tmp_path):
    target = tmp_path / "train.py"
    target.write_text(GOOD)
    watcher = Watcher(str(tmp_path))
    try:
        first = watcher.report()
        assert "Starting linter in watch mode..." in first and "All checks passed." in first
        target.write_text(BAD)
        second = watcher.report()
        assert "File change detected..." in second
        assert f"{target}:2:37: TFS001" in second
        (tmp_path / "new.py").write_text(BAD)  # a new file in a checked folder
        third = watcher.report()
        assert f"{tmp_path / 'new.py'}:2:37: TFS001" in third and f"{target}:2:37" in third
        code, err = watcher.interrupt()
    finally:
        watcher.kill()
    assert code == 0 and "Traceback" not in err and "KeyboardInterrupt" not in err


@pytest.mark.parametrize("option", ["--fix", "--diff", "--add-noqa"])
def test_watch_with_a_writing_option_is_a_usage_error(tmp_path, capsys, option):
    (tmp_path / "a.py").write_text(BAD)
    assert main(["check", "--watch", option, str(tmp_path)]) == 2
    assert f"--watch cannot be combined with {option}" in capsys.readouterr().err
