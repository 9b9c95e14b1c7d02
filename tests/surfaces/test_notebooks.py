"""Notebooks read cell by cell as IPython reads them: findings in the cell as written, a
cell that cannot run is TFS900 there and the rest is still checked, `--fix` changes the
fixed cells' sources and not one other byte of the JSON."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from syncadvisor.notebook.ipython import read_cell
from syncadvisor.notebook.rewrite import cell_source

STRATEGY = "import tensorflow as tf\nstrategy = tf.distribute.MirroredStrategy()\n"
BAD_LINE = "v = tf.Variable(1.0, synchronization=tf.VariableSynchronization.DEFAULT)"
MEAN_INT = ("with strategy.scope():\n"
            "    step = tf.Variable(0, aggregation=tf.VariableAggregation.MEAN)\n")


def _notebook(cells, as_list=True, **dump) -> str:
    data = {"cells": [{"cell_type": "code", "execution_count": None, "metadata": {},
                       "outputs": [], "source": c.splitlines(True) if as_list else c}
                      for c in cells],
            "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
            "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(data, **dump)


def _check(path, *options):
    result = subprocess.run([sys.executable, "-m", "syncadvisor", "check", "--no-cache",
                             "--format", "json", *options, str(path)],
                            capture_output=True, text=True)
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout) if "--fix" not in options or result.stdout.strip() else []


def _syntax_error_at(cell: str):
    try:
        compile(cell, "<cell>", "exec")
    except SyntaxError as exc:
        return exc.lineno, exc.offset
    raise AssertionError("the cell parses")


def test_a_cell_that_cannot_run_is_tfs900_there_and_the_others_are_checked(tmp_path):
    broken = "x = 1\ndef f(:\n    pass\n"
    path = tmp_path / "nb.ipynb"
    path.write_text(_notebook([STRATEGY, broken, MEAN_INT]))
    found = {(d["cell"], d["code"]): d for d in _check(path)}
    assert set(found) == {(2, "TFS900"), (3, "TFS104")}
    line, column = _syntax_error_at(broken)
    assert (found[2, "TFS900"]["line"], found[2, "TFS900"]["column"]) == (line, column)
    # The strategy of cell 1 still reaches cell 3, past the cell that was left out.
    assert "cell 1, line 2" in found[3, "TFS104"]["message"]
    assert found[3, "TFS104"]["line"] == 2


def test_a_cell_ipython_refuses_is_tfs900(tmp_path):
    refused = "if x:\n        y = 1\n    z = 2\n"  # an unindent IPython's tokenizer rejects
    assert read_cell(refused).python is None
    path = tmp_path / "nb.ipynb"
    path.write_text(_notebook([STRATEGY, refused, MEAN_INT]))
    found = {(d["cell"], d["code"]): d for d in _check(path)}
    assert set(found) == {(2, "TFS900"), (3, "TFS104")}
    assert "IPython cannot read this cell" in found[2, "TFS900"]["message"]


def test_what_ipython_runs_is_never_tfs900(tmp_path):
    cells = [STRATEGY, "from __future__ import annotations\nx: int = 1\n",
             "await asyncio.sleep(0)\n", "%%bash\nnot python (\n", "files = !ls\n"]
    path = tmp_path / "nb.ipynb"
    path.write_text(_notebook(cells))
    assert _check(path) == []


# --- each IPython form around a finding -------------------------------------------------

FORMS = {
    "line-magic": f"%matplotlib inline\n{BAD_LINE}\n",
    "magic-after": f"{BAD_LINE}\n%time f()\n",
    "shell-continued": f"!pip install \\\n    tensorflow\n{BAD_LINE}\n",
    "system-assign": f"files = !ls\n{BAD_LINE}\n",
    "magic-assign": f"t = %timeit -o f()\n{BAD_LINE}\n",
    "help": f"tf.Variable?\n{BAD_LINE}\n",
    "help-start": f"??tf.Variable\n{BAD_LINE}\n",
    "autocall": f",print a b\n{BAD_LINE}\n",
    "indented-magic": f"for i in range(2):\n    %time f(i)\n    {BAD_LINE}\n",
    "leading-indent": f"    x = 1\n    {BAD_LINE}\n",
    "leading-empty-lines": f"\n\n{BAD_LINE}\n",
    "classic-prompt": f">>> x = 1\n>>> {BAD_LINE}\n",
    "ipython-prompt": f"In [1]: x = 1\n   ...: {BAD_LINE}\n",
    "no-final-newline": f"!ls\n{BAD_LINE}",
    "crlf": f"%ls\r\n{BAD_LINE}\r\n",
}


@pytest.mark.parametrize("cell", list(FORMS.values()), ids=list(FORMS))
def test_a_finding_next_to_ipython_syntax_is_where_it_was_written(tmp_path, cell):
    path = tmp_path / "nb.ipynb"
    raw = _notebook([STRATEGY, cell], indent=1) + "\n"
    path.write_bytes(raw.encode("utf-8"))
    findings = _check(path)
    assert [(d["cell"], d["code"]) for d in findings] == [(2, "TFS001")], findings
    lines = cell.splitlines()
    row = next(i for i, line in enumerate(lines) if "DEFAULT" in line)
    assert findings[0]["line"] == row + 1
    assert findings[0]["column"] == lines[row].index("tf.VariableSynchronization") + 1
    # --fix rewrites that line as written, prompt and indent kept, and nothing else.
    _check(path, "--fix")
    assert path.read_bytes().decode("utf-8") == raw.replace("DEFAULT", "AUTO")


def test_a_magic_cell_is_not_python(tmp_path):
    path = tmp_path / "nb.ipynb"
    path.write_text(_notebook([STRATEGY, f"%%time\n{BAD_LINE}\n"]))
    assert _check(path) == []  # IPython hands the body to the magic as a string


# --- the JSON around the fixed cells -------------------------------------------------------

MARKDOWN = {"cell_type": "markdown", "metadata": {"tags": ["é"]}, "source": ["# Titre é\n", "ü"]}


@pytest.mark.parametrize("as_list", [True, False], ids=["source-list", "source-string"])
@pytest.mark.parametrize("dump", [
    {"indent": 1, "ensure_ascii": False}, {"indent": 2}, {"indent": 4, "sort_keys": True},
    {"indent": "\t"}, {}, {"separators": (",", ":")}],
    ids=["nbformat", "indent-2", "indent-4-sorted", "tabs", "one-line", "compact"])
@pytest.mark.parametrize("end", ["\n", ""], ids=["newline", "no-newline"])
def test_fix_changes_the_fixed_line_and_not_one_other_byte(tmp_path, as_list, dump, end):
    broken = "def f(:\n  DEFAULT\n"
    data = json.loads(_notebook([STRATEGY + BAD_LINE + "\n", broken, "x = 1"], as_list))
    data["cells"].insert(1, MARKDOWN)
    data["cells"][0]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": ["ok\n"]}]
    raw = json.dumps(data, **dump) + end
    path = tmp_path / "nb.ipynb"
    path.write_bytes(raw.encode("utf-8"))
    _check(path, "--fix")
    expected = raw.replace("VariableSynchronization.DEFAULT", "VariableSynchronization.AUTO")
    assert expected != raw
    assert path.read_bytes().decode("utf-8") == expected
    assert "DEFAULT" in path.read_text()  # the broken cell is as it was


def test_a_fix_never_edits_a_line_ipython_rewrote():
    code = read_cell("x = !ls\ny = 1\n")
    assert code.python is not None
    first, second = code.python.splitlines(True)
    with pytest.raises(ValueError, match="IPython rewrites"):
        cell_source(code, first.replace("ls", "pwd") + second, 2)
    assert cell_source(code, first + "y = 2\n", 2) == "x = !ls\ny = 2\n"


def test_a_fix_keeps_a_cells_indent_and_prompts():
    for source in ("    x = 1\n    y = 1\n", ">>> x = 1\n>>> y = 1\n",
                   "In [1]: x = 1\n   ...: y = 1\n"):
        code = read_cell(source)
        assert code.python == "x = 1\ny = 1\n"
        assert cell_source(code, "x = 1\ny = 2\n", 1) == source[:-2] + "2\n"
