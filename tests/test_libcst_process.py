"""The flake8 plugin's libcst helper process (syncadvisor/libcst_process.py)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from syncadvisor.config import Settings
from syncadvisor.engine import analyze_text, check_sources
from syncadvisor.libcst_process import LibcstProcess

REPO = Path(__file__).parent.parent
SOURCE = ("import tensorflow as tf\n"
          "strategy = tf.distribute.MirroredStrategy()\n"
          "with strategy.scope():\n"
          "    v = tf.Variable(0., synchronization=(tf.VariableSynchronization.NONE))\n")
ITEM = (SOURCE, "m.py", None)


def test_the_helper_models_a_file_as_libcst_does_here():
    settings = Settings()
    helper = LibcstProcess()
    try:
        there = helper.model(ITEM, settings)
        again = helper.model(ITEM, settings)  # the same process serves the next file
        pid = helper.helper.pid
    finally:
        helper.close()
    here = analyze_text(SOURCE, "m.py", settings, exact=True)
    assert there.model.exact and not there.errors
    assert there.model == here.model and again.model == here.model
    assert pid != 0 and helper.helper is None


def test_a_helper_that_dies_costs_its_file_only_and_is_started_again():
    settings = Settings()
    helper = LibcstProcess()
    helper.command = [sys.executable, "-c", "import sys; sys.stdin.buffer.read(1); sys.exit(3)"]
    died = helper.model(ITEM, settings)
    assert died.internal_error and died.model is None
    assert [e.code for e in died.errors] == ["TFS900"]
    assert "process parsing it with libcst died" in died.errors[0].message
    assert helper.helper is None  # the dead one is gone: the next file starts another
    helper.command = LibcstProcess.command
    try:
        assert helper.model(ITEM, settings).model.exact
    finally:
        helper.close()


def test_without_an_interpreter_to_start_libcst_runs_here():
    helper = LibcstProcess()
    helper.command = [str(REPO / "no-such-interpreter")]
    result = helper.model(ITEM, Settings())
    assert result.model is not None and result.model.exact and helper.helper is None


def test_libcst_never_enters_the_flake8_process():
    """The plugin reports what the command reports, from libcst's tree, and libcst is
    imported only in the helper."""
    script = (
        "import ast, sys\n"
        "from syncadvisor.flake8_plugin import SyncAdvisorChecker\n"
        f"text = {SOURCE!r}\n"
        "found = list(SyncAdvisorChecker(ast.parse(text), text.splitlines(True), 'm.py').run())\n"
        "print([(line, col + 1, message) for line, col, message, _ in found])\n"
        "print('libcst' in sys.modules)\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            cwd=REPO, env={"SYNCADVISOR_NO_CACHE": "1", "PATH": ""})
    assert result.returncode == 0, result.stderr
    found, imported = result.stdout.splitlines()
    command = check_sources({"m.py": SOURCE}, Settings()).findings
    assert found == repr([(f.line, f.column, f"{f.code} {f.message}") for f in command])
    assert "TFS101" in found
    assert imported == "False"
