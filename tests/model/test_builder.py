"""The model from Python's `ast`: positions in characters, source texts as written,
argument spans fixes can add and remove at, and models that pickle back to themselves."""
from __future__ import annotations

import ast
import pickle
import re
import textwrap

import pytest

from syncadvisor.model import tfapi
from syncadvisor.model.builder import build_model
from syncadvisor.model.builder.syntax import word_positions
from syncadvisor.records import fields
from tests import paths

TESTS = paths.TESTS
SOURCES = sorted(p for folder in (paths.FIXTURES, paths.SNIPPETS)
                 for p in folder.rglob("*.py")
                 if p.name != "syntax_error.py")
REWRITES = tfapi.prefix_rewrites(False)


def _model(text: str):
    return build_model(ast.parse(text), "a.py", "a", REWRITES, text)


def _text_at(text: str, span) -> str:
    lines = text.splitlines(keepends=True)
    start = sum(len(line) for line in lines[:span.line - 1]) + span.column
    end = sum(len(line) for line in lines[:span.end_line - 1]) + span.end_column
    return text[start:end]


def _same(a, b, seen) -> bool:
    """Structural equality that follows each pair of objects once (Bounds can cycle)."""
    if type(a) is not type(b):
        return False
    if hasattr(a, "__record_fields__"):
        if (id(a), id(b)) in seen:
            return True
        seen.add((id(a), id(b)))
        return all(_same(getattr(a, name), getattr(b, name), seen) for name in fields(a))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y, seen) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k], seen) for k in a)
    return a == b


@pytest.mark.parametrize("path", SOURCES[::3], ids=lambda p: str(p.relative_to(TESTS)))
def test_a_model_pickles_back_to_itself(path):
    """Models travel between processes and to the cache as pickles, their call edges as
    one flat tuple (facts._flat_calls): what comes back is the same model."""
    model = _model(path.read_text(encoding="utf-8"))
    back = pickle.loads(pickle.dumps(model))
    assert _same(back, model, set())


def test_the_pickled_sample_has_call_edges():
    """The sample above is not vacuous: most of its models have call edges to compare."""
    with_calls = [p for p in SOURCES[::3] if _model(p.read_text(encoding="utf-8")).calls]
    assert len(with_calls) > len(SOURCES[::3]) // 2


def test_columns_count_characters_not_bytes():
    """Python counts columns in UTF-8 bytes; spans count characters."""
    text = ('# é\nimport tensorflow as tf\nx = "é€😀"; v = tf.Variable(1., '
            'synchronization=tf.VariableSynchronization.NONE)\n')
    model = _model(text)
    creation = model.creations[0]
    assert (creation.span.line, creation.span.column) == (3, 15)  # 24 bytes in
    assert _text_at(text, creation.span).startswith("tf.Variable(1., ")
    assert _text_at(text, creation.args[1].span) == \
        "synchronization=tf.VariableSynchronization.NONE"
    assert _text_at(text, model.enum_refs[0].member_span) == "NONE"


def test_a_name_python_normalised_keeps_its_source_spelling():
    """Python stores `ﬁlt` (a ligature) as `filt` (NFKC); a name's text is what the user
    wrote, and its columns count that."""
    text = ("import tensorflow as tf\nﬁlt = tf.Variable(1.)\n"
            "def f():\n    return ﬁlt.assign_add(1.)\n")
    update = _model(text).updates[0]
    assert update.receiver.text == "ﬁlt" and _text_at(text, update.receiver.span) == "ﬁlt"


@pytest.mark.parametrize("call, spans", [
    ("tf.Variable(1., (S.NONE))", ["1.", "(S.NONE)"]),
    ("tf.Variable(((1.)), S.NONE)", ["((1.))", "S.NONE"]),
    ("tf.Variable(  # a (comment\n    (1.), aggregation=(A.SUM))", ["(1.)", "aggregation=(A.SUM)"]),
    ("(tf.Variable)((1.))", ["(1.)"]),
    ("tf.Variable(*(args), **(kwargs))", ["*(args)", "**(kwargs)"]),
])
def test_an_argument_span_takes_the_parentheses_that_group_it(call, spans):
    """Python leaves `(` `)` around an expression out of its node; an argument's span
    takes them, so that a fix adding an argument after it, or removing it, keeps code
    that means what it meant (`f((x), y=1)`, never `f((x, y=1))`)."""
    text = f"import tensorflow as tf\nv = {call}\n"
    args = _model(text).creations[0].args
    assert [_text_at(text, a.span) for a in args] == spans


@pytest.mark.parametrize("call, comma", [
    ("tf.Variable(1., aggregation=A.SUM,)", True),
    ("tf.Variable(1., aggregation=A.SUM , )", True),
    ("tf.Variable(1., (A.SUM)\t,)", True),
    ("tf.Variable(1., aggregation=A.SUM \\\n,)", True),
    ("tf.Variable(1., aggregation=A.SUM\n,)", False),  # a line break before it
    ("tf.Variable(1., aggregation=A.SUM  # c\n,)", False),
    ("tf.Variable(1., aggregation=A.SUM)", False),
])
def test_the_trailing_comma_of_the_last_argument(call, comma):
    text = f"import tensorflow as tf\nv = {call}\n"
    last = _model(text).creations[0].args[-1]
    if comma:
        assert last.trailing_comma is not None and _text_at(text, last.trailing_comma) == ","
    else:
        assert last.trailing_comma is None


@pytest.mark.parametrize("code", [
    "x = " + " + ".join(["1"] * 900),
    "if a:\n    pass\n" + "elif a:\n    pass\n" * 900,
    "x = a" + "[0]" * 900,
    "x = a" + ".b" * 900,
    "x = f" + "()" * 900,
])
def test_code_as_deep_as_python_parses_is_modelled(code):
    """Python builds trees about as deep as its recursion limit; the walk, which takes
    two or three frames a level, still models them."""
    text = "import tensorflow as tf\nv = tf.Variable(1.)\n" + code + "\n"
    assert len(_model(text).creations) == 1


def test_source_texts_are_the_source_as_written():
    text = textwrap.dedent("""\
        import tensorflow as tf
        class M(tf.Module):
            def __init__(self):
                self.total = tf.Variable(
                    0., aggregation=tf.VariableAggregation.NONE)
            def step(self, x):
                self.total.assign(
                    self.total
                    + x)
        """)
    update = _model(text).updates[0]
    assert update.value.text == "self.total\n            + x"


_SETTLED = """\
class L:
    def _apply(self, value):
        self.v.assign(value)
    def call(self, x):
        self._apply(1.0)
"""


@pytest.mark.parametrize("more, settled", [
    ("", True),  # its one call passes the same value everywhere
    ("    @register(_apply)\n    def other(self):\n        pass\n", False),  # in a decorator
    ("    def other(self, x):\n        print(f'{self._apply(x)}')\n", False),  # an f-string's
    ("    def other(self):\n        # _apply, in a comment\n        s = '_apply'\n", True),
])
def test_a_parameter_is_settled_from_every_reference_to_its_function(more, settled):
    """Only the lines that name the function are looked into for its references: the
    ones a decorator or an f-string hides still count; a comment or a string does not."""
    text = _SETTLED + more
    [update] = _model(text).updates
    assert (update.depends is not None) is settled


_RUN = """\
import tensorflow as tf
def _step(x, factor, rate=1.0):
    v.assign(factor * rate)
def train(batch, options):
    strategy.run(_step, {passed})
"""


@pytest.mark.parametrize("passed, settled", [
    ("args=(batch, 0.5)", True),  # bound as `_step(batch, 0.5)` is
    ("(batch, 0.5), {'rate': 2.0}", True),  # by position, and `kwargs` by name
    ("args=(batch, 0.5), kwargs={'rate': 2.0}", True),
    ("args=(batch, batch)", False),  # the replica's data
    ("args=(batch, 0.5), kwargs={'rate': batch}", False),
    ("args=options", False),  # what `args` holds is not seen
    ("args=(batch, 0.5), kwargs=options", False),
])
def test_a_strategy_runs_arguments_bind_to_its_functions_parameters(passed, settled):
    """`strategy.run(fn, args=..., kwargs=...)` calls `fn(*args, **kwargs)`: a parameter is
    settled from it as from a direct call."""
    [update] = _model(_RUN.format(passed=passed)).updates
    assert (update.depends is not None) is settled


@pytest.mark.parametrize("word, text", [
    ("step", "step(1)\n_step(step2) + astep + step"),
    ("t\u00e9", "t\u00e9(1) + t\u00e9t\u00e9 + \u00e9t\u00e9 + t\u00e9_"),  # letters past ASCII: \w
    ("x\u0301", "x\u0301 = 1\nf(x\u0301)\nx\u0301y"),  # ends with a combining mark
    ("_\u0906\u0930\u0902\u092d_\u0915\u0930\u0928\u093e",  # Devanagari: ends with a vowel sign
     "def _\u0906\u0930\u0902\u092d_\u0915\u0930\u0928\u093e(v):\n    pass\n"
     "_\u0906\u0930\u0902\u092d_\u0915\u0930\u0928\u093e(1)\n"),
    ("\u2118", "\u2118(1) + a\u2118"),  # a symbol a name may start with
    ("a\u00b7a", "ba\u00b7a\u00b7a"),  # a middle dot inside: matches that overlap
])
def test_a_word_is_found_where_the_pattern_finds_it(word, text):
    """`parameters.references_of` finds a function's name by `word_positions`: where
    `\\bname\\b` finds it, for any identifier Python takes."""
    assert word.isidentifier()
    expected = [m.start() for m in re.finditer(rf"\b{re.escape(word)}\b", text)]
    assert list(word_positions(text, word)) == expected
