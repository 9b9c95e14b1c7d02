"""The cluster a MultiWorkerMirroredStrategy reads from TF_CONFIG (no TensorFlow)."""
from __future__ import annotations

import json
import os
from typing import Any, Dict, Optional, Tuple


def tf_config_cluster(text: str) -> Tuple[int, Dict[str, Any], bool]:
    """(workers, this task, whether it is the chief) from a TF_CONFIG, as
    MultiWorkerMirroredStrategy reads it: the chief is the `chief` task where the cluster
    has one, else worker 0. ValueError, AttributeError or TypeError for a malformed one."""
    data = json.loads(text)
    cluster = data.get("cluster", {})
    task = data.get("task", {})
    workers = len(cluster.get("worker", [])) + len(cluster.get("chief", []))
    if cluster.get("chief"):
        chief = task.get("type") == "chief"
    else:
        chief = task.get("type") == "worker" and int(task.get("index", 0)) == 0
    return workers, task, chief


def from_environment() -> Tuple[int, Optional[Dict[str, Any]], bool]:
    """(workers, this task, whether it is the chief) from the TF_CONFIG in the
    environment; (1, None, True) without one, or with one that names no task."""
    try:
        workers, task, chief = tf_config_cluster(os.environ.get("TF_CONFIG") or "{}")
    except (ValueError, AttributeError, TypeError):
        return 1, None, True
    if not workers or not isinstance(task, dict) or not task:
        return 1, None, True
    return workers, task, chief
