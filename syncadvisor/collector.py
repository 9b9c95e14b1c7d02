"""Python's cycle collector, paused while a run builds or loads models."""
from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def collector_paused():
    """Python's cycle collector off for a while, then back as it was.

    A parse allocates a tree of objects that all live until the model is built, and a
    run keeps every file's model: the collector would scan all of them again and again
    to find little (a few hundred objects in cycles per file). What it would have found
    is collected once it is back on.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
