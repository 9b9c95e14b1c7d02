"""libcst in a process of its own, for a host that should not hold it: flake8's.

Imported into a flake8 process, libcst's classes (15,700 objects the cycle collector
tracks) stay for the rest of the run, and every later full collection looks at them
again: flake8 -j1 over keras+tf_keras spent 1.7 s in full collections with the plugin
modelling files from libcst in its own process, 0.9-1.3 s more than when the plugin
never imported it. A helper process, started at the first file that needs libcst and
kept for the host's lifetime, takes that away; its crash in libcst's native parser
costs one file's findings, not the host.

Requests and answers are pickles on the helper's stdin and stdout: both ends are this
module, run by the same interpreter.
"""
from __future__ import annotations

import atexit
import os
import pickle
import subprocess
import sys
from typing import TYPE_CHECKING, List, Optional, Tuple

if TYPE_CHECKING:
    from .config import Settings
    from .engine import FileResult

Item = Tuple[str, str, Optional[str]]  # (text, path, module), as the engine's refiner has it

_PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The helper imports this copy of the package, whatever the working directory holds.
_COMMAND = [sys.executable, "-c",
            f"import sys; sys.path.insert(0, {_PACKAGE_PARENT!r}); "
            "from syncadvisor.libcst_process import serve; serve()"]


class LibcstProcess:
    """Models files exactly (from libcst's tree) in a helper process, started on first
    use and again after it died; where none can be started, in this process."""

    command: List[str] = _COMMAND

    def __init__(self) -> None:
        self.helper: Optional[subprocess.Popen] = None
        self.owner = 0  # the pid that started `helper` (a forked child must not share it)

    def model(self, item: Item, settings: "Settings") -> "FileResult":
        helper = self._helper()
        if helper is None:
            from .engine import _model_exactly

            return _model_exactly(item, settings)
        try:
            pickle.dump((item, settings), helper.stdin, protocol=pickle.HIGHEST_PROTOCOL)
            helper.stdin.flush()
            return pickle.load(helper.stdout)
        except (OSError, EOFError, ValueError, pickle.UnpicklingError):
            from .engine import died

            self.close()  # it died: the next file gets a new one
            return died(item[1], "the process parsing it with libcst")

    def _helper(self) -> Optional[subprocess.Popen]:
        if self.helper is not None and self.owner == os.getpid():
            return self.helper
        try:
            self.helper = subprocess.Popen(self.command, stdin=subprocess.PIPE,
                                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        except OSError:  # no interpreter to run (an embedded one): libcst here, as before
            self.helper = None
            return None
        self.owner = os.getpid()
        return self.helper

    def close(self) -> None:
        helper, self.helper = self.helper, None
        if helper is None or self.owner != os.getpid():
            return
        try:
            helper.stdin.close()  # end of requests: it exits
            helper.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            helper.kill()
            helper.wait()


_SHARED: Optional[LibcstProcess] = None


def shared() -> LibcstProcess:
    """This process's helper; closed when the process exits normally (a process that
    is killed closes its end of the pipe, which ends the helper too)."""
    global _SHARED
    if _SHARED is None:
        _SHARED = LibcstProcess()
        atexit.register(_SHARED.close)
    return _SHARED


def serve() -> None:
    """The helper: a request at a time until its stdin ends."""
    import signal

    from .collector import collector_paused
    from .engine import _model_exactly

    # Ctrl-C reaches the whole process group: the host decides, this one only follows
    # when its stdin ends (no traceback of its own on the user's terminal).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    requests, answers = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but answers on the channel
    while True:
        try:
            item, settings = pickle.load(requests)
        except EOFError:
            return
        with collector_paused():  # the tree and the model live only until sent
            result = _model_exactly(item, settings)
            try:
                pickle.dump(result, answers, protocol=pickle.HIGHEST_PROTOCOL)
                answers.flush()
            except BrokenPipeError:
                return
            del result
