"""Spawn ``harness.py`` with the current interpreter and collect its results.

``run_snippets({name: source}) -> {name: record}`` (record format: see ``harness.py``).

One harness process runs all snippets. If it dies or hangs part-way (a snippet that
segfaults TensorFlow, a watchdog timeout, a leaked strategy scope), the results already
reported are kept, the snippet that was running gets a ``HarnessCrash``/``Timeout`` record,
and a fresh harness is started for the snippets that had not run yet.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HARNESS = Path(__file__).resolve().with_name("harness.py")
MARK = "@@syncadvisor-runtime-harness@@"


class HarnessError(RuntimeError):
    """The harness could not run at all (bad request, broken interpreter, ...)."""


class TensorFlowUnavailable(HarnessError):
    """``import tensorflow`` failed inside the harness."""


def _parse(stdout: str) -> tuple[dict, list, dict | None, dict | None, dict | None]:
    """Return (done records, started names, final document, READY info, FATAL info)."""
    done: dict[str, dict] = {}
    started: list[str] = []
    document = None
    ready = None
    fatal = None
    lines = stdout.splitlines()
    for i, line in enumerate(lines):
        if not line.startswith(MARK + " "):
            continue
        kind, _, payload = line[len(MARK) + 1 :].partition(" ")
        if kind == "START":
            started.append(json.loads(payload))
        elif kind == "DONE":
            item = json.loads(payload)
            done[item["name"]] = item["record"]
        elif kind == "READY":
            ready = json.loads(payload)
        elif kind == "FATAL":
            fatal = json.loads(payload)
        elif kind == "RESULTS":
            document = json.loads("\n".join(lines[i + 1 :]))
            break
    return done, started, document, ready, fatal


def _crash_record(message: str) -> dict:
    return {
        "ok": False,
        "exc_type": "HarnessCrash",
        "exc_mro": ["HarnessCrash"],
        "message": message,
        "result": None,
        "lineno": None,
        "traceback": None,
        "seconds": None,
    }


def run_snippets(
    snippets: dict[str, str],
    *,
    per_snippet_timeout: float = 60.0,
    env: dict[str, str] | None = None,
    info: dict | None = None,
) -> dict[str, dict]:
    """Run every snippet under TensorFlow (one process if nothing crashes).

    ``info``, if given, is filled with ``{"processes": n, "ready": [READY payloads],
    "stderr_tail": str}`` for diagnostics.
    Raises ``TensorFlowUnavailable`` when the harness cannot import TensorFlow and
    ``HarnessError`` when it fails before running any snippet.
    """
    remaining = dict(snippets)
    results: dict[str, dict] = {}
    child_env = dict(os.environ if env is None else env)
    child_env["SYNCADVISOR_SNIPPET_TIMEOUT"] = str(per_snippet_timeout)
    child_env.setdefault("PYTHONHASHSEED", "0")
    processes = 0
    readies = []
    stderr_tail = ""
    while remaining:
        processes += 1
        # Backstop only: the harness's own watchdog normally ends a hung snippet.
        backstop = 120.0 + per_snippet_timeout * (len(remaining) + 1)
        try:
            proc = subprocess.run(
                [sys.executable, str(HARNESS)],
                input=json.dumps(remaining),
                capture_output=True,
                text=True,
                timeout=backstop,
                env=child_env,
            )
            stdout, stderr, rc = proc.stdout, proc.stderr, proc.returncode
        except subprocess.TimeoutExpired as exc:
            stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            stderr = exc.stderr.decode() if isinstance(exc.stderr, bytes) else (exc.stderr or "")
            rc = None
        stderr_tail = stderr[-8000:]
        done, started, document, ready, fatal = _parse(stdout)
        if ready:
            readies.append(ready)
        if fatal is not None:
            raise TensorFlowUnavailable(
                f"{fatal.get('exc_type')}: {fatal.get('message')}\n{fatal.get('traceback', '')}"
            )
        if document is not None:
            done.update(document)
        progressed = False
        for name, record in done.items():
            if name in remaining:
                results[name] = record
                del remaining[name]
                progressed = True
        if not remaining:
            break
        # The process ended early. Blame the snippet that had started but not finished.
        unfinished = [n for n in started if n not in done and n in remaining]
        if unfinished:
            name = unfinished[-1]
            how = "timed out (backstop)" if rc is None else f"exited with status {rc}"
            results[name] = _crash_record(
                f"harness process {how} while running this snippet\n--- stderr tail ---\n"
                + stderr[-4000:]
            )
            del remaining[name]
            progressed = True
        if not progressed:
            raise HarnessError(
                f"harness made no progress (exit status {rc}); stderr tail:\n{stderr[-8000:]}"
            )
    if info is not None:
        info.update({"processes": processes, "ready": readies, "stderr_tail": stderr_tail})
    # Keep the caller's order.
    return {name: results[name] for name in snippets}


if __name__ == "__main__":  # pragma: no cover - manual use: runner.py FILE.py...
    files = [Path(p) for p in sys.argv[1:]]
    out = run_snippets({p.name: p.read_text(encoding="utf-8") for p in files})
    json.dump(out, sys.stdout, indent=1)
    print()
