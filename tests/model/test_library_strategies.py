"""tfapi.LIBRARY_STRATEGIES: a library's strategy class is its tf.distribute base plus the
creators its `scope()` enters. The table's programs must be what the model reads from the
library's own code: from the verbatim copy of sonnet's `replica_local_creator` in the
strategy_subclasses fixture, and from dm-sonnet's wheel where the field benchmark has
unpacked it."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from syncadvisor.engine.analyze import rewrites_for
from syncadvisor.config import Settings
from syncadvisor.model import tfapi
from syncadvisor.model.builder import build_model
from tests import paths

COPY = paths.FIXTURES / "check" / "strategy_subclasses" / "replicators.py"
WHEEL = paths.REPO / "benchmarks" / ".work" / "field" / "dm-sonnet-2.0.2" / "sonnet" / "src" / \
    "distribute" / "replicator.py"


def read_program(path: Path, module: str, function: str):
    text = path.read_text()
    model = build_model(ast.parse(text), str(path), module, rewrites_for(Settings()), text)
    return model.creator_effects[f"{module}.{function}"]


@pytest.mark.parametrize("qname", sorted(tfapi.LIBRARY_STRATEGIES))
def test_the_table_says_what_the_copy_of_the_library_code_does(qname):
    library = tfapi.LIBRARY_STRATEGIES[qname]
    for name, program in library.creators:
        assert read_program(COPY, "replicators", name) == program


@pytest.mark.skipif(not WHEEL.exists(), reason="dm-sonnet's wheel is not unpacked here")
def test_the_table_says_what_sonnets_own_code_does():
    for library in tfapi.LIBRARY_STRATEGIES.values():
        for name, program in library.creators:
            assert read_program(WHEEL, tfapi.LIBRARY_STRATEGIES[
                "sonnet.distribute.Replicator"].module, name) == program


def test_the_library_strategy_and_its_project_twin_give_the_same_findings(tmp_path):
    """A run with sonnet's code (the editor with sonnet installed and followed) and one
    without it (an isolated hook) report the same: here, with its copy as a project class."""
    from syncadvisor import api

    user = ("import tensorflow as tf\n{imports}\n"
            "r = {ctor}()\n"
            "with r.scope():\n"
            "    ready = tf.Variable(True, synchronization=tf.VariableSynchronization.NONE)\n"
            "    steps = tf.Variable(0, aggregation=tf.VariableAggregation.MEAN)\n"
            "    last = tf.Variable(tf.zeros([3]))\n"
            "r.run(lambda x: last.assign(x), args=(tf.ones([3]),))\n")
    library = api.check_source(user.format(imports="import sonnet as snt",
                                           ctor="snt.distribute.Replicator"))
    copy = COPY.read_text() + "\n" + user.format(imports="", ctor="Replicator")
    offset = len(COPY.read_text().splitlines()) + 1  # the copy, then a blank line
    project = api.check_source(copy)
    assert [(f.code, f.severity) for f in library] == [("TFS101", "error"), ("TFS104", "error")]
    assert [(f.code, f.severity, f.line - offset) for f in project] == \
        [(f.code, f.severity, f.line) for f in library]
