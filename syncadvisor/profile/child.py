"""The child process that runs the program (`program.py`), seen from the parent: runs go
out on one pipe as JSON lines and come back on another, so TensorFlow is imported once for
all of a child's runs. A run that kills the child (a crash, `os._exit`) or outlives the
timeout is that run's error, and a fresh child takes the next run (no TensorFlow here).
"""
from __future__ import annotations

import json
import os
import re
import select
import subprocess
import sys
import time
from typing import Any, Dict, Optional

class _Child:
    def __init__(self, spec: Dict[str, Any], log_path: str, verbose: bool,
                 environment: Optional[Dict[str, Optional[str]]] = None):
        cmd_r, self._cmd_w = os.pipe()
        self._res_r, res_w = os.pipe()
        spec = dict(spec, commands_fd=cmd_r, results_fd=res_w)
        spec_path = os.path.join(os.path.dirname(log_path), f"spec-{os.getpid()}-{id(self)}.json")
        with open(spec_path, "w", encoding="utf-8") as handle:
            json.dump(spec, handle)
        env = dict(os.environ)
        for name, value in (environment or {}).items():
            if value is None:
                env.pop(name, None)
            else:
                env[name] = value
        if not verbose:
            env["TF_CPP_MIN_LOG_LEVEL"] = "3"
        env["PYTHONUNBUFFERED"] = "1"
        self._log = open(log_path, "ab")
        out = None if verbose else self._log
        self.process = subprocess.Popen(
            [sys.executable, "-m", "syncadvisor.profile.program", spec_path],
            stdin=subprocess.DEVNULL, stdout=sys.stderr if verbose else out,
            stderr=None if verbose else out, pass_fds=(cmd_r, res_w), env=env)
        os.close(cmd_r)
        os.close(res_w)
        self._buffer = b""

    def ask(self, run: Dict[str, Any], timeout: float) -> Optional[Dict[str, Any]]:
        """The run's result; None when the child ended or timed out (then it is killed)."""
        try:
            os.write(self._cmd_w, (json.dumps(run) + "\n").encode())
        except OSError:
            return None
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                self.close(kill=True)
                return {"timed_out": True}
            ready, _, _ = select.select([self._res_r], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._res_r, 1 << 16)
            if not chunk:
                return None
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)

    def close(self, kill: bool = False) -> Optional[int]:
        try:
            os.close(self._cmd_w)
        except OSError:
            pass
        if kill:
            self.process.kill()
        try:
            code = self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        try:
            os.close(self._res_r)
        except OSError:
            pass
        self._log.close()
        return code


# TensorFlow's C++ side (glog lines, absl's preamble), which writes before any log level applies.
_TF_LOG = re.compile(r"^([IWEF]\d{4} \d\d:\d\d:\d\d|WARNING: All log messages before absl)")


def log_tail(path: str, lines: int = 8, skip_tensorflow: bool = False) -> str:
    try:
        with open(path, "rb") as handle:
            text = handle.read()[-8000:].decode("utf-8", "replace")
    except OSError:
        return ""
    kept = [line for line in text.splitlines()
            if line.strip() and not (skip_tensorflow and _TF_LOG.match(line))]
    return "\n".join(kept[-lines:])


class Runner:
    """Runs, one child at a time; a fresh child after one dies (or for every run)."""

    def __init__(self, spec: Dict[str, Any], work: str, verbose: bool, timeout: float,
                 fresh_each_run: bool, name: str = "program",
                 environment: Optional[Dict[str, Optional[str]]] = None):
        self.spec = spec
        self.environment = environment
        self.work = work
        self.verbose = verbose
        self.timeout = timeout
        self.fresh = fresh_each_run
        self.child: Optional[_Child] = None
        self.log = os.path.join(work, f"{name}.log")

    def run(self, run: Dict[str, Any]) -> Dict[str, Any]:
        if self.child is None:
            self.child = _Child(self.spec, self.log, self.verbose, self.environment)
        result = self.child.ask(run, self.timeout)
        if result is not None and not result.get("timed_out") and not self.fresh:
            return result
        timed_out = bool(result and result.get("timed_out"))
        code = self.child.close(kill=timed_out)
        self.child = None
        if result is not None and not timed_out:
            return result
        if timed_out:
            error = f"the program did not finish its steps within {self.timeout:g} s"
        else:
            error = f"the program's process ended with exit code {code} during this run"
            tail = "" if self.verbose else log_tail(self.log)
            if tail:
                error += ": " + tail.splitlines()[-1]
        return {"id": run["id"], "error": error, "error_stage": "program", "steps": 0,
                "step_times_ms": []}

    def close(self) -> None:
        if self.child is not None:
            self.child.close()
            self.child = None
