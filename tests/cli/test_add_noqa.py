"""`syncadvisor check --add-noqa`: a `# noqa: CODE` for every finding, where flake8 reads it."""
from __future__ import annotations

import ast
import json
import shutil

import pytest

from syncadvisor.cli import main
from tests import paths
from tests.fuzz.harness import SETTINGS, add_noqa_problems

SOURCE = '''\
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy()
with strategy.scope():
    a = tf.Variable(1.0, synchronization=tf.VariableSynchronization.NONE, name="""multi
line""")
    b = tf.Variable(1.0, \\
        synchronization=tf.VariableSynchronization.NONE)
    c = tf.Variable(
        1.0,
        synchronization=tf.VariableSynchronization.NONE,  # noqa: E501
    )
    d = tf.Variable(1.0, synchronization=tf.VariableSynchronization.DEFAULT)  # why: legacy
    e = tf.Variable(0, synchronization=tf.VariableSynchronization.NONE, aggregation=tf.VariableAggregation.MEAN)
    f = tf.Variable(1.0)  # noqa:TFS303
'''

EXPECTED = '''\
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy()
with strategy.scope():
    a = tf.Variable(1.0, synchronization=tf.VariableSynchronization.NONE, name="""multi
line""")  # noqa: TFS101
    b = tf.Variable(1.0, \\
        synchronization=tf.VariableSynchronization.NONE)  # noqa: TFS101
    c = tf.Variable(
        1.0,
        synchronization=tf.VariableSynchronization.NONE,  # noqa: E501, TFS101
    )
    d = tf.Variable(1.0, synchronization=tf.VariableSynchronization.DEFAULT)  # why: legacy  # noqa: TFS001
    e = tf.Variable(0, synchronization=tf.VariableSynchronization.NONE, aggregation=tf.VariableAggregation.MEAN)  # noqa: TFS101, TFS104
    f = tf.Variable(1.0)  # noqa:TFS303, TFS901
'''


def _cli(args, capsys):
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"], ids=["lf", "crlf", "cr"])
def test_add_noqa_puts_each_comment_where_flake8_reads_it(tmp_path, capsys, newline):
    """The end of the token run: after a multi-line string, after a backslash
    continuation's last line; merged into an existing `# noqa: X`; after another
    comment; one comment for two findings of a line. A TFS901 (an unused code) gets its
    code too, as ruff adds RUF100."""
    target = tmp_path / "m.py"
    target.write_bytes(SOURCE.replace("\n", newline).encode())
    code, out, err = _cli(["check", "--no-cache", "--add-noqa", str(target)], capsys)
    assert code == 0 and out == "" and err == "Added 6 noqa directives.\n"
    assert target.read_bytes() == EXPECTED.replace("\n", newline).encode()
    code, out, _ = _cli(["check", "--no-cache", "--format", "json", str(target)], capsys)
    assert code == 0 and json.loads(out) == []
    code, _, err = _cli(["check", "--no-cache", "--add-noqa", str(target)], capsys)
    assert code == 0 and err == "Added 0 noqa directives.\n"
    assert target.read_bytes() == EXPECTED.replace("\n", newline).encode()


def test_add_noqa_follows_the_selection(tmp_path, capsys):
    target = tmp_path / "m.py"
    target.write_text(SOURCE)
    code, _, err = _cli(["check", "--no-cache", "--add-noqa", "--select", "TFS104",
                         str(target)], capsys)
    assert code == 0 and err == "Added 1 noqa directive.\n"
    assert target.read_text().splitlines()[13].endswith("MEAN)  # noqa: TFS104")
    assert target.read_text().count("# noqa") == 3


def test_add_noqa_in_a_notebook_writes_the_cells_line(tmp_path, capsys):
    target = tmp_path / "train.ipynb"
    shutil.copy(paths.FIXTURES / "notebooks" / "train.ipynb", target)
    before = json.loads(target.read_text())
    code, _, err = _cli(["check", "--no-cache", "--add-noqa", str(target)], capsys)
    assert code == 0 and err == "Added 2 noqa directives.\n"
    after = json.loads(target.read_text())
    changed = [i for i, (a, b) in enumerate(zip(before["cells"], after["cells"])) if a != b]
    assert changed == [4]
    lines = "".join(after["cells"][4]["source"]).splitlines()
    assert lines[1].endswith("  # noqa: TFS001") and lines[2].endswith("  # noqa: TFS104")
    code, out, _ = _cli(["check", "--no-cache", "--format", "json", str(target)], capsys)
    assert code == 0 and json.loads(out) == []


@pytest.mark.parametrize("option", ["--fix", "--diff"])
def test_add_noqa_with_fix_or_diff_is_a_usage_error(tmp_path, capsys, option):
    target = tmp_path / "m.py"
    target.write_text(SOURCE)
    code, _, err = _cli(["check", "--add-noqa", option, str(target)], capsys)
    assert code == 2 and "--add-noqa cannot be combined with " + option in err
    assert target.read_text() == SOURCE


def test_add_noqa_on_standard_input_is_a_usage_error(capsys):
    code, _, err = _cli(["check", "--add-noqa", "-"], capsys)
    assert code == 2 and "standard input" in err


def _fixture_runs():
    yield pytest.param(sorted((paths.FIXTURES / "check").rglob("*.py")), id="check")
    for path in sorted((paths.FIXTURES / "fix").glob("*.py")):
        if not path.name.endswith("fixed.py"):
            yield pytest.param([path], id=f"fix/{path.name}")


@pytest.mark.parametrize("files", list(_fixture_runs()))
def test_after_add_noqa_every_fixture_checks_clean_and_parses(files):
    sources = {str(p): p.read_text() for p in files}
    problems = add_noqa_problems(sources, SETTINGS["unknown"])
    assert not problems, "\n".join(problems)
    assert all(isinstance(ast.parse(text), ast.Module) for path, text in sources.items()
               if not path.endswith("syntax_error.py"))
