"""The built-in reader of notebook cells against IPython itself, the oracle.

For every cell of a corpus, `read_cell(cell).python` must be what IPython's
`TransformerManager().transform_cell(cell)` returns, or both must refuse the cell, or
both must make code that Python cannot parse. The corpus: the cells that
`tests/surfaces/ipython_corpus.py` took from PyPI sdists (notebooks, and IPython's own
transformer tests), one example of each IPython form, and cells that hypothesis makes
by combining every form. IPython is needed here only: the reader never imports it.
"""
from __future__ import annotations

import ast
import json
import warnings
from typing import Optional

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from syncadvisor.notebook.ipython import read_cell
from tests.surfaces.ipython_corpus import CORPUS

inputtransformer2 = pytest.importorskip("IPython.core.inputtransformer2")
IPYTHON_MAJOR = int(__import__("IPython").__version__.split(".")[0])
if IPYTHON_MAJOR < 9:  # the reader follows IPython 9 (its dedent and doctest prompts)
    pytest.skip("the oracle is IPython 9 (pip install '.[test]')", allow_module_level=True)


def _parses(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, "<cell>", "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT,
                    dont_inherit=True)
        return True
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False


def _ipython(cell: str) -> Optional[str]:
    try:
        return inputtransformer2.TransformerManager().transform_cell(cell)
    except Exception:  # noqa: BLE001 - IPython refuses the cell (it raises anything)
        return None


def disagreement(cell: str) -> Optional[str]:
    """None where the reader and IPython agree on `cell`; else what each made of it."""
    ours, theirs = read_cell(cell).python, _ipython(cell)
    if ours == theirs:
        return None
    if ours is not None and theirs is not None and not _parses(ours) and not _parses(theirs):
        return None
    return f"cell {cell!r}\nreader:  {ours!r}\nIPython: {theirs!r}"


def test_the_corpus_reads_as_ipython_reads_it():
    corpus = json.loads(CORPUS.read_text(encoding="utf-8"))
    cells = corpus["cells"]
    assert len(cells) > 1000
    wrong = [f"{c['from']}: {d}" for c in cells if (d := disagreement(c["cell"])) is not None]
    assert not wrong, f"{len(wrong)} of {len(cells)} cells:\n" + "\n\n".join(wrong[:10])


# One example of each form IPython reads, as a user writes it (with the code around it).
FORMS = {
    "line-magic": "%matplotlib inline\nimport tensorflow as tf\n",
    "indented-line-magic": "for i in range(3):\n    %time f(i)\n",
    "magic-continued": "%env A=1 \\\n   B=2\nx = 1\n",
    "cell-magic": "%%bash\necho hi\n",
    "cell-magic-with-args": "%%time x = 1\ny = 2\n",
    "cell-magic-help": "%%timeit?\n",
    "shell": "!pip install tensorflow\nimport tensorflow as tf\n",
    "shell-continued": "!pip install \\\n    tensorflow \\\n    keras\nx = 1\n",
    "shell-capture": "!!ls\n",
    "system-assign": "files = !ls *.py\n",
    "system-assign-continued": "files = !ls \\\n  *.py\n",
    "magic-assign": "t = %timeit -o f()\n",
    "help-end": "tf.Variable?\n",
    "help-end-detailed": "tf.distribute.MirroredStrategy??\n",
    "help-start": "?tf.Variable\n",
    "help-start-detailed": "??tf.Variable\n",
    "help-magic": "%time?\n",
    "help-search": "tf.*Strategy*?\n",
    "help-usage": "?\n",
    "help-in-block": "if x:\n    y.z?\n",
    "autocall-quote": ",print a b\n",
    "autocall-quote-whole": ";print a b\n",
    "autocall-paren": "/print a b\n",
    "not-in-brackets": "f(a,\n  !b)\n",
    "not-in-strings": "s = '!ls'\nt = '''\n%time\n'''\n# why?\n",
    "leading-indent": "    x = 1\n    if x:\n        y = 2\n",
    "leading-empty-lines": "\n\n  \nx = 1\n",
    "classic-prompt": ">>> x = 1\n>>> if x:\n...     y = 2\n",
    "indented-doctest-prompt": "    >>> x = 1\n    ... \n",
    "ipython-prompt": "In [1]: x = 1\n   ...: y = 2\n",
    "crlf": "%ls\r\nx = 1\r\n",
    "form-feed": "x = 1\x0c\n!ls\n",
    "top-level-await": "await asyncio.sleep(0)\n",
}


@pytest.mark.parametrize("cell", list(FORMS.values()), ids=list(FORMS))
def test_each_form_reads_as_ipython_reads_it(cell):
    assert disagreement(cell) is None, disagreement(cell)
    assert disagreement(cell.rstrip("\n")) is None  # a cell's last line has no newline


# --- generated cells ------------------------------------------------------------------

_HEADS = ["", "%time ", "%%time ", "%%bash ", "!", "!!", "?", "??", ",", ";", "/", ">>> ",
          "... ", "In [3]: ", "   ...: ", "x = !", "y = %", "a, b = !", "z = ", "%", "%%",
          "if x:", "def f(", ")", "#", "'", '"""', "await ", "f\"{x!r}\" "] + ["!", "%"] * 4
_BODIES = ["", "ls", "pip install tf", "tf.Variable", "tf.Variable?", "obj.attr[0]??",
           "echo a \\", "x", "(1,", "2)", "a = 1", "pass", "print('?')", "'!ls'", "%x",
           "!x", "*Strategy*?", "  ", "\t", "é", "{", "}", "=", "==", "!= 1", "cmd ; other"]
_ENDS = ["\n", "\n", "\n", "\r\n", "\r", "\x0c", "\\\n", ""]
_INDENTS = ["", "", "    ", "\t", "  "]

_line = st.builds(lambda i, h, b, e: i + h + b + e, st.sampled_from(_INDENTS),
                  st.sampled_from(_HEADS), st.sampled_from(_BODIES), st.sampled_from(_ENDS))


@settings(max_examples=400, derandomize=True, deadline=None,
          suppress_health_check=list(HealthCheck))
@given(st.lists(_line, min_size=1, max_size=8).map("".join))
def test_generated_cells_read_as_ipython_reads_them(cell):
    assert disagreement(cell) is None, disagreement(cell)
