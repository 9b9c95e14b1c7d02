"""Shared set-up for the blind benchmark's runtime checks: TF 2.21 on 2 logical CPUs.

Each check imports the project's own code from its unpacked wheel in
``benchmarks/.work/blind/<name>-<version>/`` (run ``python -m benchmarks blind`` first).
"""

import importlib.util
import os
import sys
import types
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
BLIND = Path(__file__).resolve().parent.parent / ".work" / "blind"


def stub(*names):
    """Empty modules for a project's imports that these checks never use (tqdm, PIL, ...)."""
    for name in names:
        mod = types.ModuleType(name)
        mod.__path__ = []
        mod.tqdm = lambda *a, **k: a[0] if a else None
        sys.modules.setdefault(name, mod)


def project(name):
    root = BLIND / name
    if not root.is_dir():
        raise SystemExit(f"{root} is missing: run `python -m benchmarks blind` first")
    sys.path.insert(0, str(root))
    return root


def load_file(path, name):
    """A module from one file, without its package's __init__."""
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def two_cpus():
    import tensorflow as tf

    cpus = tf.config.list_physical_devices("CPU")
    tf.config.set_logical_device_configuration(
        cpus[0], [tf.config.LogicalDeviceConfiguration()] * 2)
    return tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])


def trial(label, fn):
    try:
        print(f"[OK]  {label}: {fn()}", flush=True)
    except Exception as e:  # noqa: BLE001 - the point is to print what TF raises
        print(f"[ERR] {label}: {type(e).__name__}: {str(e)[:300]}", flush=True)
