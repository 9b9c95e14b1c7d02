"""The prefilter: which files stage 1 models at all (`engine.prefilter`), and the quick
path for the files it drops (`engine.analyze.analyze_unmodelled`)."""
from __future__ import annotations

import ast

import pytest

from syncadvisor.config import Settings
from syncadvisor.engine import analyze as analyze_module, prefilter


@pytest.mark.parametrize("word", prefilter.PREFILTER_WORDS)
def test_any_prefilter_word_gets_a_file_modelled_and_none_leaves_it_unparsed(word):
    # (a word that is a statement's, `import *`, in that statement)
    text = f"from y {word}\n" if " " in word else f"x = y.{word.lstrip('.')}\n"
    assert prefilter.may_hold_a_finding(text) and prefilter.may_hold_a_finding(text.encode())
    assert analyze_module.analyze_text(text, "a.py", Settings()).model is not None
    # Case-sensitive; and a scope is a strategy's only as `X.scope()`.
    for plain in ("x = y.variables\n", "with tf.name_scope('a'):\n    v.assign(1)\n"):
        assert not prefilter.may_hold_a_finding(plain)
        assert not prefilter.may_hold_a_finding(plain.encode())
        assert analyze_module.analyze_text(plain, "a.py", Settings()).model is None


# "Variable" alone keeps a file where a variable can be made or its class named...
VARIABLE_KEPT = [
    "v = tf.Variable(1.0)\n", "v = tf.Variable (1.0)\n", "v = KerasVariable(1.0)\n",
    "v = tf.Variable\n", "v = tf.Variable  # the class\n", "V = tf.Variable; v = V(1.0)\n",
    "V = tf.Variable", "from tensorflow import Variable as V\n", "[V] = [tf.Variable]\n",
    "V, W = tf.Variable, tf.Tensor\n", "V = (tf.Variable)\n", "f((V := tf.Variable))\n",
    "V = tf.Variable \\\n    if a else b\n", "make(tf.Variable)\n", "V = tf.Variable\r\n",
    '{"source": ["V = tf.Variable\\n", "v = V(1.0)"]}', '{"source": ["V = tf.Variable"]}',
]
# ...and nothing else: prose, attributes of the class, annotations.
VARIABLE_DROPPED = [
    '"""Returns a `tf.Variable` object."""\n', "# Variables in the list\n",
    'def f(scope):\n    """scope: VariableScope for the cell"""\n',
    "info = variables.Variable.SaveSliceInfo(name, shape, offset, length)\n",
    "v: tf.Variable = make()\n", "raise ValueError('Variable global_device_ids must be set')\n",
]


@pytest.mark.parametrize("text", VARIABLE_KEPT, ids=repr)
def test_variable_where_one_can_be_made_or_named_keeps_a_file(text):
    assert prefilter.may_hold_a_finding(text) and prefilter.may_hold_a_finding(text.encode())


@pytest.mark.parametrize("text", VARIABLE_DROPPED, ids=repr)
def test_variable_in_prose_or_attributes_alone_leaves_a_file_unparsed(text):
    assert not prefilter.may_hold_a_finding(text) and not prefilter.may_hold_a_finding(text.encode())
    # What modelling it would have given: nothing that makes a variable, even through a
    # name it binds (each called after it).
    from syncadvisor.model.builder import build_model

    tree = ast.parse(text)
    names = [n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
    probe = text + "".join(f"{name}(1.0)\n" for name in names)
    model = build_model(ast.parse(probe), "a.py", "a", analyze_module.rewrites_for(Settings()),
                        probe)
    assert model.creations == []
    # With another word beside it, the file is modelled as before.
    assert prefilter.may_hold_a_finding(text + "s = tf.distribute.MirroredStrategy()\n")


def test_a_name_kept_for_variable_makes_variables():
    for text in ("V = tf.Variable\n", "from tensorflow import Variable as V\n",
                 "[V] = [tf.Variable]\n", "V = (tf.Variable)\n"):
        probe = "import tensorflow as tf\n" + text + "v = V(1.0)\n"
        result = analyze_module.analyze_text(probe, "a.py", Settings())
        assert [c.span.line for c in result.model.creations] == [3], text


@pytest.mark.parametrize("data", [
    b"x = 1\n", b"", b"# -*- coding: latin-1 -*-\nx = 'caf\xe9'\n", b"x = 'caf\xc3\xa9'\n",
    b"# coding: utf-16\nx = 1\n", b"# coding: no-such-codec\nx = 1\n", b"x = 1\x00\n",
    b"x = '\xff'\n", b"\xef\xbb\xbfx = 1\n", b"x = 1\r\n" * 3,
], ids=repr)
def test_a_file_without_prefilter_words_is_read_as_a_full_analysis_would(data):
    """Stage 1 takes a shortcut for plain-ASCII files the prefilter drops
    (`analyze_unmodelled`); the result is the one decoding and analysing would give."""
    settings = Settings()
    for path in ("a.py", "a.ipynb"):
        quick = analyze_module.analyze_unmodelled(path, data, settings)
        full = analyze_module.analyze_bytes(path, data, settings)
        assert (quick.path, quick.size, quick.model, quick.errors) == \
            (full.path, full.size, full.model, full.errors)
