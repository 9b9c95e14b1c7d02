"""Run one command and measure wall time and peak memory.

Peak memory, two numbers:

* ``maxrss_mb`` -- ``ru_maxrss`` from ``os.wait4`` on the child: the peak
  resident set of the largest single process in the child's tree (the child
  and every descendant it reaped).  This is exactly the number
  ``/usr/bin/time -f %M`` prints (GNU time gets it from the same ``wait4``
  call); we call ``wait4`` ourselves so nothing extra is exec'd, no output has
  to be parsed, and it works where ``/usr/bin/time`` is missing.  Exact, but a
  lower bound for a tool that runs a process pool.
* ``tree_rss_mb`` -- the largest sum of RSS over the child and all its
  descendants, sampled from ``/proc`` every ``poll_interval`` seconds.
  Shared pages (forked workers, shared libraries) count once per process, so
  it is an upper bound, and a peak shorter than the interval can be missed.
  ``None`` where ``/proc`` is missing.
* ``tree_pss_mb`` -- the largest sum of PSS over the tree (``/proc/PID/smaps_rollup``):
  each shared page is split between the processes that share it, so the sum is
  what the tree really holds -- a forked worker's inherited copy of its parent
  counts once, not once per process.  Reading it costs milliseconds per sample
  (the kernel walks the page tables), so it is only sampled when asked for, in a
  run of its own, never in a timed one.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_HAVE_PROC = Path("/proc/self/statm").exists()
_HAVE_SMAPS = Path("/proc/self/smaps_rollup").exists()
_MAXRSS_UNIT = 1 if os.uname().sysname == "Darwin" else 1024  # bytes on macOS, KiB elsewhere

MEMORY_METHOD = (
    "largest process: ru_maxrss from os.wait4 (same number as /usr/bin/time -f %M); "
    + ("tree: sum of RSS over the process tree, sampled from /proc every 50 ms (upper bound)"
       if _HAVE_PROC else "tree: not available (no /proc)")
    + ("; tree PSS: sum of PSS over the process tree (shared pages split between their "
       "processes), sampled every 50 ms in one extra untimed run" if _HAVE_SMAPS else "")
)


@dataclass
class RunResult:
    seconds: float
    returncode: int | None
    timed_out: bool
    maxrss_mb: float | None
    tree_rss_mb: float | None
    stderr_tail: str = ""
    tree_pss_mb: float | None = None
    source: str | None = None  # syncadvisor runs: fingerprint of its sources right after the run

    def to_dict(self) -> dict:
        return asdict(self)


def _children(pid: int) -> list[int]:
    kids: list[int] = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/children") as f:
                    kids.extend(int(x) for x in f.read().split())
            except OSError:
                pass
    except OSError:
        pass
    return kids


def _rss_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


def _pss_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def tree_rss(pid: int, per_process=_rss_bytes) -> int:
    """Sum of RSS (or of ``per_process``) of ``pid`` and all its descendants, in bytes."""
    total, stack, seen = 0, [pid], set()
    while stack:
        p = stack.pop()
        if p in seen:
            continue
        seen.add(p)
        total += per_process(p)
        stack.extend(_children(p))
    return total


def run_measured(cmd: list[str], cwd: Path, env: dict | None = None, timeout: float | None = None,
                 poll_interval: float = 0.05, track_tree: bool = True,
                 track_pss: bool = False, stdin: bytes | None = None) -> RunResult:
    """Run ``cmd`` (stdout discarded, stderr kept for diagnostics) and measure it; ``stdin``:
    what it reads on standard input (from a file written before the clock starts)."""
    with tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as given:
        if stdin is not None:
            given.write(stdin)
            given.seek(0)
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=str(cwd), env=env,
                                stdin=given if stdin is not None else subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
        done = threading.Event()
        state = {"tree_peak": 0, "pss_peak": 0, "timed_out": False}

        def watch() -> None:
            deadline = start + timeout if timeout else None
            while not done.is_set():
                if track_tree and _HAVE_PROC:
                    state["tree_peak"] = max(state["tree_peak"], tree_rss(proc.pid))
                if track_pss and _HAVE_SMAPS:
                    state["pss_peak"] = max(state["pss_peak"], tree_rss(proc.pid, _pss_bytes))
                if deadline and time.perf_counter() > deadline:
                    state["timed_out"] = True
                    try:
                        os.killpg(proc.pid, signal.SIGKILL)
                    except OSError:
                        pass
                    return
                done.wait(poll_interval)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        try:
            _, status, ru = os.wait4(proc.pid, 0)
        except BaseException:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
            raise
        seconds = time.perf_counter() - start
        done.set()
        watcher.join()
        proc.returncode = os.waitstatus_to_exitcode(status)
        # Leftovers of the tool's own process group (should be none) must not disturb the next run.
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        err.seek(0)
        tail = err.read()[-4000:].decode("utf-8", "replace")
    return RunResult(
        seconds=seconds,
        returncode=proc.returncode,
        timed_out=state["timed_out"],
        maxrss_mb=ru.ru_maxrss * _MAXRSS_UNIT / 1e6,
        # The tree's peak is at least the largest process's peak (a short run can end before a sample).
        tree_rss_mb=(max(state["tree_peak"], ru.ru_maxrss * _MAXRSS_UNIT) / 1e6)
        if (track_tree and _HAVE_PROC) else None,
        stderr_tail=tail,
        tree_pss_mb=state["pss_peak"] / 1e6 if (track_pss and _HAVE_SMAPS and state["pss_peak"])
        else None,
    )
