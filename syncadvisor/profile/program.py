"""Running the user's own program under one choice per site (the child process of `--run`).

`python -m syncadvisor.profile.program SPEC.json` runs the program named in the spec once
per run read from the spec's `commands_fd` (a JSON line each), in this one process, and
answers each with a JSON line on `results_fd` (the values read go to an `.npz` beside the
spec). The parent (`runs.py`) reads them; a run that kills this process is told apart by
its missing line.

A run changes one site's choice (`program_variables.py`), counts steps and cross-device
traffic (`program_traffic.py`), and when the program stops reads every copy of every
variable it made in a strategy's scope where the copy lives (`program_values.py`). The
user's files are never edited.
"""
from __future__ import annotations

import importlib
import json
import os
import random
import runpy
import sys
import traceback
from typing import Any, Dict, List, Optional

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from ..model.tfapi import KERAS3_MODULE, KERAS_MODULES  # noqa: E402
from . import program_state, program_traffic, program_variables  # noqa: E402
from .program_state import in_project, real  # noqa: E402
from .program_traffic import StopProgram  # noqa: E402
from .program_values import read_all  # noqa: E402

__all__ = ["StopProgram", "error_text", "main"]


# --- devices ----------------------------------------------------------------------------------

def _setup_devices(count: Optional[int]) -> Dict[str, Any]:
    import tensorflow as tf

    tf.get_logger().setLevel("ERROR")
    try:
        from absl import logging as absl_logging

        absl_logging.set_verbosity(absl_logging.ERROR)
    except ImportError:  # pragma: no cover - absl comes with TensorFlow
        pass
    gpus = tf.config.list_physical_devices("GPU")
    if os.environ.get("TF_CONFIG"):
        return {"note": "the program's own strategy over the cluster in TF_CONFIG"}
    if count == 1:  # the run on one replica that every choice is judged against: on the
        # kind of device the replicas run on (GPUs where there are two, else the CPU)
        tf.config.set_visible_devices(gpus[:1] if len(gpus) >= 2 else [], "GPU")
        return {"note": "one GPU" if len(gpus) >= 2 else "the CPU as one device"}
    if len(gpus) >= 2:
        chosen = gpus[:count] if count else gpus
        tf.config.set_visible_devices(chosen, "GPU")
        return {"note": f"{len(chosen)} of {len(gpus)} GPUs"}
    if gpus:
        tf.config.set_visible_devices([], "GPU")
    n = count or 2
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(
        cpu, [tf.config.LogicalDeviceConfiguration() for _ in range(n)])
    why = "only one GPU found" if gpus else "no GPU found"
    return {"note": f"the CPU split into {n} logical devices ({why}); a MirroredStrategy() "
                    f"with no devices given spans them"}


# --- one run ----------------------------------------------------------------------------------

def _purge_project_modules() -> None:
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if path and in_project(real(path)) and not name.startswith("syncadvisor"):
            del sys.modules[name]


def _reseed(seed: int) -> None:
    import numpy as np
    import tensorflow as tf

    for name in KERAS_MODULES:
        module = sys.modules.get(name)
        if module is not None:
            try:
                module.backend.clear_session()
            except Exception:  # a program's Keras may be half-imported; seeds still follow
                pass
    random.seed(seed)
    np.random.seed(seed)
    tf.random.set_seed(seed)
    keras = sys.modules.get(KERAS3_MODULE)
    if keras is not None and hasattr(getattr(keras, "utils", None), "set_random_seed"):
        keras.utils.set_random_seed(seed)


def error_text(exc: BaseException) -> str:
    """`Type: message` in a line or two: TensorFlow's graph errors carry a "Detected at
    node ... (most recent call last)" stack of the trace (the profiler's frames among
    them), which says nothing the message does not; tf.function's "in user code:" too."""
    kept = []
    for line in str(exc).splitlines():
        text = line.strip()
        if not text or text.startswith(("File ", "Detected at node", "in user code:")) or \
                "(most recent call last)" in text:
            continue
        kept.append(text)
    name = type(exc).__name__
    for index in range(len(kept) - 1, -1, -1):  # "in user code:" ends with the real error
        if kept[index].startswith(f"{name}: "):
            kept = [kept[index][len(name) + 2:]] + kept[index + 1:]
            break
    message = " ".join(kept)
    if len(message) > 400:
        message = message[:397] + "..."
    return f"{name}: {message}" if message else name


def _target(spec: Dict[str, Any]):
    target = spec["target"]
    argv = list(spec.get("args", []))
    if "module" in target:
        sys.argv = [target["module"]] + argv

        def go():
            runpy.run_module(target["module"], run_name="__main__", alter_sys=True)
    else:
        script = target["script"]
        sys.argv = [script] + argv
        folder = os.path.dirname(os.path.abspath(script))
        if not sys.path or sys.path[0] != folder:
            sys.path.insert(0, folder)

        def go():
            runpy.run_path(script, run_name="__main__")
    return go


def _strategy_fields(strategy) -> Dict[str, Any]:
    name = type(strategy).__name__
    local = list(strategy.extended.worker_devices)
    replicas = int(strategy.num_replicas_in_sync)
    return {
        # MultiWorkerMirroredStrategy's class is CollectiveAllReduceStrategy.
        "strategy": ("MultiWorkerMirroredStrategy" if name == "CollectiveAllReduceStrategy"
                     else name),
        "replicas": replicas, "devices": local,
        "workers": max(1, replicas // max(1, len(local))),
    }


_RUNS = [0]  # runs this process has started


def _separate_collectives() -> None:
    """Give this run's strategies collective keys no earlier run used. Every strategy
    numbers its collective groups from `_collective_key_base` (0), and TensorFlow's
    collective executor is one per process: a run whose collective reuses an earlier
    run's keys with another shape fails ("Shape mismatch"), as running two programs in
    one process does. Workers of a cluster run the same runs in order, so their keys
    still match."""
    from tensorflow.python.distribute import collective_all_reduce_strategy as collective
    from tensorflow.python.distribute import mirrored_strategy as mirrored

    _RUNS[0] += 1
    for module in (mirrored, collective):
        for cls in vars(module).values():
            if isinstance(cls, type) and "_collective_key_base" in vars(cls):
                strategy_class: Any = cls
                strategy_class._collective_key_base = 1000 * _RUNS[0]


def _run_once(spec: Dict[str, Any], run: Dict[str, Any], out_dir: str) -> Dict[str, Any]:
    _purge_project_modules()
    _reseed(int(spec["seed"]))
    _separate_collectives()
    state = program_state.State(spec, run)
    program_state.current = state
    result: Dict[str, Any] = {"id": run["id"]}
    error = None
    try:
        _target(spec)()
        result["ended"] = "finished"
    except StopProgram:
        result["ended"] = "stopped"
    except SystemExit as exc:
        code = exc.code
        result["ended"] = "exited"
        if code not in (None, 0):
            error = f"SystemExit: the program exited with {code!r}"
    except BaseException as exc:  # the user's program raised: the run's error
        if isinstance(exc, KeyboardInterrupt):
            raise
        error = error_text(exc)
        result["traceback"] = "".join(traceback.format_exception(exc))[-4000:]
        result["ended"] = "raised"
    finally:
        program_state.current = None
    if error:
        result["error"] = error
        # After a step has run, the program's own code raised (a final read of a variable).
        result["error_stage"] = state.error_stage or ("after" if state.done else "program")
    result["steps"] = max(0, state.done - state.warmup)
    result["steps_total"] = state.done
    result["step_times_ms"] = state.times
    result["costs"] = {"reductions": state.window.reductions,
                       "broadcasts": state.window.broadcasts,
                       "bytes": state.window.bytes,
                       "unknown_bytes": state.window.unknown_bytes}
    result["random_ops"] = sorted(state.random)
    result["replica_count_read_at"] = state.replica_reads
    if state.strategies:
        result.update(_strategy_fields(state.strategies[0]))
    records, arrays = read_all(state.made)
    result["variables"] = records
    loaded = {real(getattr(m, "__file__", None) or "") for m in list(sys.modules.values())}
    if "script" in spec["target"]:
        loaded.add(real(spec["target"]["script"]))
    result["project_files"] = sorted(p for p in loaded if p and in_project(p))
    if arrays:
        import numpy as np

        path = os.path.join(out_dir, f"values-{run['id']}.npz")
        np.savez(path, **arrays)
        result["values_file"] = path
    return result


def main(argv: List[str]) -> int:
    with open(argv[0], encoding="utf-8") as handle:
        spec = json.load(handle)
    program_state.configure(spec)
    commands = os.fdopen(spec["commands_fd"], "r", encoding="utf-8")
    results = os.fdopen(spec["results_fd"], "w", encoding="utf-8")
    device = _setup_devices(spec.get("devices"))
    program_traffic.install()
    program_variables.install()
    try:  # Keras 3 comes with TensorFlow; patched before the program builds a layer
        importlib.import_module(KERAS3_MODULE)
    except Exception:
        pass
    program_variables.prepare_keras()
    import tensorflow as tf

    out_dir = os.path.dirname(os.path.abspath(argv[0]))
    for line in commands:  # one run per line until the parent closes the pipe
        run = json.loads(line)
        result = _run_once(spec, run, out_dir)
        result["device_note"] = device["note"]
        result["tf_version"] = tf.__version__
        results.write(json.dumps(result) + "\n")
        results.flush()
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    # Not sys.exit: Python would wait for the program's non-daemon threads (a logger thread
    # the stopped program never got to join), and the parent would wait for this process.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
