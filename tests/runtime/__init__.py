"""Runtime truth harness: run snippets under real TensorFlow on 2 logical CPU devices.

- ``harness.py``: the subprocess (``python tests/runtime/harness.py < request.json``).
- ``runner.run_snippets({name: source}) -> {name: record}``: spawns it with ``sys.executable``.
- ``cases``: the metadata of the snippet files in ``snippets/`` and the variants to run.
"""

from .cases import (
    SNIPPET_DIR,
    Expectation,
    MetadataError,
    Raises,
    Snippet,
    describe_record,
    fixed_of,
    load_snippets,
    matches,
    originals,
    parse_snippet,
    runtime_requests,
)
from .runner import HarnessError, TensorFlowUnavailable, run_snippets

__all__ = [
    "SNIPPET_DIR",
    "Expectation",
    "HarnessError",
    "MetadataError",
    "Raises",
    "Snippet",
    "TensorFlowUnavailable",
    "describe_record",
    "fixed_of",
    "load_snippets",
    "matches",
    "originals",
    "parse_snippet",
    "run_snippets",
    "runtime_requests",
]
