"""Run Python snippets under real TensorFlow on 2 logical CPU devices.

Usage::

    python tests/runtime/harness.py < request.json

The request is one JSON object ``{name: source_text}``. Every snippet is executed,
in request order, in a fresh namespace whose ``__name__`` is ``"__main__"``; TensorFlow is
imported once for all of them (about 5 s) after the single physical CPU has been split into
two logical devices, so ``tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])`` has two
replicas.

For each snippet the harness records::

    {"ok": bool,                 # the snippet ran to its end without an exception
     "exc_type": "ValueError",   # type(exc).__name__, or null
     "exc_mro": [...],           # names of the exception's classes (subclass matching)
     "message": "...",           # str(exc), or null
     "result": ...,              # namespace["RESULT"] made JSON-able, or null
     "lineno": 12,               # innermost snippet line in the traceback, or null
     "traceback": "...",         # the (tail of the) formatted traceback, or null
     "seconds": 0.12}

Output protocol (stdout only carries protocol lines; whatever the snippets or TensorFlow
print, at Python or C level, is sent to stderr):

    @@syncadvisor-runtime-harness@@ READY {"tensorflow": "2.21.0", "import_seconds": 4.8}
    @@syncadvisor-runtime-harness@@ START "name"
    @@syncadvisor-runtime-harness@@ DONE {"name": "name", "record": {...}}
    ...
    @@syncadvisor-runtime-harness@@ RESULTS
    {"name": {...}, ...}                      <- one JSON document, the combined results

The START/DONE lines let the caller (``runner.py``) keep every finished result when a
snippet hangs or kills the process: a watchdog thread ends the process with a ``Timeout``
record once a snippet exceeds ``SYNCADVISOR_SNIPPET_TIMEOUT`` seconds (default 60), and a
snippet that leaves a ``strategy.scope()`` entered also ends the process (the next snippet
would inherit the scope), and so does one that raised a ``tf.errors.OpError`` (a failed graph
execution under MirroredStrategy aborts the process's collective ops: every later all-reduce in
it fails with "Collective ops is aborted"); the runner then restarts the harness for the
remaining snippets.
If TensorFlow cannot be imported, a ``FATAL`` line is written and the exit status is 3.
"""

from __future__ import annotations

import builtins
import enum
import json
import linecache
import os
import shutil
import sys
import tempfile
import threading
import time
import traceback

MARK = "@@syncadvisor-runtime-harness@@"
EXIT_TF_IMPORT_FAILED = 3
EXIT_TIMEOUT = 124
EXIT_LEAKED_SCOPE = 5
EXIT_AFTER_OP_ERROR = 6
_TRACEBACK_LIMIT = 6000
_MESSAGE_LIMIT = 20000


class _Protocol:
    """Writes protocol lines to the real stdout, whatever fd 1 has become."""

    def __init__(self) -> None:
        sys.stdout.flush()
        self._out = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
        self._lock = threading.Lock()
        # From now on, anything written to fd 1 (print(), TF's C++ code) goes to stderr.
        os.dup2(2, 1)

    def line(self, kind: str, payload=None) -> None:
        text = f"{MARK} {kind}" if payload is None else f"{MARK} {kind} {json.dumps(payload)}"
        with self._lock:
            self._out.write(text + "\n")
            self._out.flush()

    def document(self, results: dict) -> None:
        with self._lock:
            self._out.write(f"{MARK} RESULTS\n")
            self._out.write(json.dumps(results, indent=1, sort_keys=False) + "\n")
            self._out.flush()


def _jsonable(value, _depth: int = 0):
    """Best-effort conversion of RESULT to plain JSON types."""
    if _depth > 50:
        return repr(value)
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else repr(value)
    if isinstance(value, dict):
        return {str(k): _jsonable(v, _depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        return [_jsonable(v, _depth + 1) for v in items]
    if hasattr(value, "numpy") and callable(value.numpy):  # tf.Tensor, tf.Variable
        try:
            return _jsonable(value.numpy(), _depth + 1)
        except Exception:  # noqa: BLE001 - fall through to the other conversions
            pass
    if hasattr(value, "tolist") and callable(value.tolist):  # numpy arrays and scalars
        try:
            return _jsonable(value.tolist(), _depth + 1)
        except Exception:  # noqa: BLE001
            pass
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, enum.Enum):
        return value.name  # what assertions usually want
    return repr(value)


def _snippet_filename(name: str) -> str:
    return f"<snippet:{name}>"


def _innermost_snippet_line(tb, filename: str):
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


class _Watchdog(threading.Thread):
    """Ends the process if the current snippet runs past its deadline."""

    def __init__(self, protocol: _Protocol, timeout: float) -> None:
        super().__init__(name="snippet-watchdog", daemon=True)
        self._protocol = protocol
        self._timeout = timeout
        self._lock = threading.Lock()
        self._current = None  # (name, started)
        self._wake = threading.Event()

    def begin(self, name: str) -> None:
        with self._lock:
            self._current = (name, time.monotonic())
        self._wake.set()

    def end(self) -> None:
        with self._lock:
            self._current = None

    def run(self) -> None:  # pragma: no cover - only fires on a hang
        while True:
            self._wake.wait(0.25)
            self._wake.clear()
            with self._lock:
                current = self._current
            if current is None:
                continue
            name, started = current
            elapsed = time.monotonic() - started
            if elapsed > self._timeout:
                record = {
                    "ok": False,
                    "exc_type": "Timeout",
                    "exc_mro": ["Timeout"],
                    "message": f"snippet still running after {self._timeout:g} s; harness process ended",
                    "result": None,
                    "lineno": None,
                    "traceback": None,
                    "seconds": round(elapsed, 3),
                }
                self._protocol.line("DONE", {"name": name, "record": record})
                if tempfile.tempdir and "syncadvisor-harness-" in tempfile.tempdir:
                    shutil.rmtree(tempfile.tempdir, ignore_errors=True)
                os._exit(EXIT_TIMEOUT)


def _run_one(name: str, source: str) -> dict:
    filename = _snippet_filename(name)
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"__name__": "__main__", "__file__": filename, "__builtins__": builtins}
    record = {
        "ok": True,
        "exc_type": None,
        "exc_mro": None,
        "message": None,
        "result": None,
        "lineno": None,
        "traceback": None,
        "seconds": None,
    }
    started = time.perf_counter()
    try:
        code = compile(source, filename, "exec")
        exec(code, namespace)  # noqa: S102 - executing test snippets is the point
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - SystemExit from a snippet is a result too
        record["ok"] = False
        record["exc_type"] = type(exc).__name__
        record["exc_mro"] = [cls.__name__ for cls in type(exc).__mro__]
        record["message"] = str(exc)[:_MESSAGE_LIMIT]
        record["lineno"] = _innermost_snippet_line(exc.__traceback__, filename)
        record["traceback"] = "".join(traceback.format_exception(exc))[-_TRACEBACK_LIMIT:]
    record["seconds"] = round(time.perf_counter() - started, 3)
    if "RESULT" in namespace:
        try:
            record["result"] = _jsonable(namespace["RESULT"])
        except Exception as exc:  # noqa: BLE001
            record["result"] = None
            record["result_error"] = f"{type(exc).__name__}: {exc}"
    return record


def _fresh_collective_keys(number: int) -> None:
    """Give the strategies snippet `number` makes collective keys of their own.

    TensorFlow keys a strategy's collective all-reduces from a class-level base (0 unless a
    test sets it): every MirroredStrategy of a process starts at the same group and
    instance keys, and one snippet's all-reduce of another shape under a key an earlier
    snippet used aborts the process's collectives ("Shape mismatch in the collective
    instance 100"). Each snippet is a program of its own: a base of its own."""
    from tensorflow.python.distribute import collective_all_reduce_strategy, mirrored_strategy

    for cls in (mirrored_strategy.MirroredStrategy, mirrored_strategy.MirroredStrategyV1,
                collective_all_reduce_strategy.CollectiveAllReduceStrategy,
                collective_all_reduce_strategy.CollectiveAllReduceStrategyV1):
        cls._collective_key_base = 10_000 * number


def main() -> int:
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
    # The claims are about the TensorFlow backend of Keras 3 and about plain Keras 3 as
    # `import keras`; pin both so the caller's environment cannot change what is tested.
    os.environ["KERAS_BACKEND"] = "tensorflow"
    os.environ.pop("TF_USE_LEGACY_KERAS", None)
    # Logical CPU devices only: a visible GPU would change where Keras places variables.
    os.environ["CUDA_VISIBLE_DEVICES"] = "-1"

    request = json.load(sys.stdin)
    if not isinstance(request, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in request.items()
    ):
        print("request must be a JSON object {name: source_text}", file=sys.stderr)
        return 2
    timeout = float(os.environ.get("SYNCADVISOR_SNIPPET_TIMEOUT", "60"))

    # Snippets that write checkpoints use tempfile; keep their files in one folder removed at exit.
    scratch = tempfile.mkdtemp(prefix="syncadvisor-harness-")
    tempfile.tempdir = scratch
    try:
        return _serve(request, timeout)
    finally:
        tempfile.tempdir = None
        shutil.rmtree(scratch, ignore_errors=True)


def _serve(request: dict, timeout: float) -> int:
    protocol = _Protocol()
    t0 = time.perf_counter()
    try:
        import tensorflow as tf

        cpus = tf.config.list_physical_devices("CPU")
        tf.config.set_logical_device_configuration(
            cpus[0], [tf.config.LogicalDeviceConfiguration()] * 2
        )
        logical = tf.config.list_logical_devices("CPU")
    except Exception as exc:  # noqa: BLE001
        protocol.line(
            "FATAL",
            {
                "stage": "import tensorflow",
                "exc_type": type(exc).__name__,
                "message": str(exc),
                "traceback": traceback.format_exc()[-_TRACEBACK_LIMIT:],
            },
        )
        return EXIT_TF_IMPORT_FAILED
    protocol.line(
        "READY",
        {
            "tensorflow": tf.__version__,
            "logical_cpus": len(logical),
            "import_seconds": round(time.perf_counter() - t0, 3),
        },
    )

    watchdog = _Watchdog(protocol, timeout)
    watchdog.start()
    results: dict[str, dict] = {}
    for number, (name, source) in enumerate(request.items()):
        _fresh_collective_keys(number)
        protocol.line("START", name)
        watchdog.begin(name)
        record = _run_one(name, source)
        watchdog.end()
        leaked = tf.distribute.has_strategy()
        if leaked:
            record["leaked_strategy_scope"] = True
        results[name] = record
        protocol.line("DONE", {"name": name, "record": record})
        if leaked:
            # Every later snippet would run inside that scope: let the runner restart us.
            return EXIT_LEAKED_SCOPE
        if "OpError" in (record["exc_mro"] or ()):
            # The collective executor of this process may be aborted: later snippets that
            # all-reduce would fail for this one's sake.
            return EXIT_AFTER_OP_ERROR
    protocol.document(results)
    return 0


if __name__ == "__main__":
    code = main()
    sys.stderr.flush()
    # Skip interpreter teardown: TensorFlow's atexit handlers are slow and sometimes noisy.
    os._exit(code)
