"""Large files are parsed in pieces (`parsing.parse_chunks`): the model must be the one a
whole-file parse gives, byte for byte, and errors must point where they would.

The same comparison over the installed keras, tf_keras and tensorflow packages (1,103
files that pass the prefilter, every top-level statement its own piece) is how the
cutting rule was checked; here it runs over our own fixtures and hand-made edge cases.
"""
from __future__ import annotations

import pickle
from pathlib import Path

import libcst as cst
import pytest

from syncadvisor.api import check_source
from syncadvisor.config import Settings
from syncadvisor.engine import rewrites_for
from syncadvisor.model.builder import build_model
from syncadvisor import parsing
from syncadvisor.parsing import CHUNK_THRESHOLD, parse_chunks

ROOT = Path(__file__).resolve().parent.parent
REWRITES = rewrites_for(Settings())

EDGE_CASES = {
    "semicolons": "import tensorflow as tf\na = 1; v = tf.Variable(1.0, synchronization=tf.VariableSynchronization.NONE)\nb = 2\n",
    "indented-trailing-comment": (
        "import tensorflow as tf\ndef f():\n    return tf.Variable(1.0)\n    # trailing, indented\n"
        "s = tf.distribute.MirroredStrategy()\nwith s.scope():\n    f()\n"),
    "decorators-and-comments": (
        "import tensorflow as tf\n\n# about f\n@tf.function\n@other\ndef f():\n"
        "    v = tf.Variable(0, aggregation='sum')\n\n\n# end\n"),
    "backslash-continuation": (
        "import tensorflow as tf\nv = \\\n    tf.Variable(1.0,\n    aggregation=tf.VariableAggregation.MEAN)\n"
        "\\\nw = tf.Variable(2)\n"),
    "no-trailing-newline": "import tensorflow as tf\nv = tf.Variable(1)\nw = tf.Variable(2, synchronization=tf.VariableSynchronization.DEFAULT)",
    "form-feed": "import tensorflow as tf\n\x0c\nv = tf.Variable(1)\n\x0cw = tf.Variable(2)\n",
    "strings-across-lines": 'import tensorflow as tf\nx = """\nnot = code\n"""\nv = tf.Variable(1)\n',
}


def _sources():
    for folder in ("tests/fixtures/check", "tests/fixtures/fix", "tests/runtime/snippets", "examples"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            yield path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8")
    yield from EDGE_CASES.items()


SOURCES = dict(_sources())


def _model_bytes(pieces, text: str) -> bytes:
    return pickle.dumps(build_model(pieces, "m.py", "m", REWRITES, text))


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"], ids=["lf", "crlf", "cr"])
def test_a_model_built_from_pieces_is_the_whole_files_model(newline):
    compared = 0
    for name, source in SOURCES.items():
        text = source.replace("\n", newline)
        try:
            whole = cst.parse_module(text)
        except cst.ParserSyntaxError:
            with pytest.raises(cst.ParserSyntaxError):
                parse_chunks(text, threshold=0, target=1)
            continue
        pieces = parse_chunks(text, threshold=0, target=1)  # every statement its own piece
        assert _model_bytes(pieces, text) == _model_bytes(whole, text), name
        compared += len(pieces) > 1
    assert compared >= 60  # the comparison really cut files


def test_large_files_are_cut_and_small_ones_are_not():
    unit = "v{i} = tf.Variable({i}.0, aggregation=tf.VariableAggregation.MEAN)\n"
    small = "import tensorflow as tf\n" + "".join(unit.format(i=i) for i in range(100))
    assert len(parse_chunks(small)) == 1
    large = "import tensorflow as tf\n" + "".join(unit.format(i=i) for i in range(3000))
    assert len(large) > CHUNK_THRESHOLD
    pieces = parse_chunks(large)
    assert len(pieces) > 2
    assert "".join(piece.code for piece, _ in pieces) == large


def _found(source: str):
    return [(f.code, f.line, f.column, f.end_line, f.end_column, f.message)
            for f in check_source(source, "big.py")]


def test_findings_and_errors_in_a_large_file_are_where_a_whole_parse_puts_them(monkeypatch):
    filler = "".join(f"def helper_{i}(x):\n    return x + {i}\n\n" for i in range(4000))
    bad = "import tensorflow as tf\n" + filler + \
        "v = tf.Variable(1.0, synchronization=tf.VariableSynchronization.DEFAULT)\n"
    broken = bad + "def oops(:\n    pass\n"
    assert len(bad) > CHUNK_THRESHOLD and len(parse_chunks(bad)) > 2
    in_pieces = _found(bad), _found(broken)
    monkeypatch.setattr(parsing, "CHUNK_THRESHOLD", 10 ** 9)
    assert len(parse_chunks(bad)) == 1
    assert (_found(bad), _found(broken)) == in_pieces
    assert [f[:2] for f in in_pieces[0]] == [("TFS001", bad.count("\n"))]
    assert ("TFS900", bad.count("\n") + 1) in [f[:2] for f in in_pieces[1]]
