"""Fuzzing, bounded and deterministic: generated programs and mutated fixtures never make
the engine raise, and every fix parses, is idempotent and touches only its own edits.

The harness (generators and the oracle, `check_program`) lives in tests/fuzz/harness.py, which
also runs the same for as long as you like: `python -m tests.fuzz.harness --minutes 10`.
Here: about 300 programs in a few seconds, the same ones on every run.
"""
from __future__ import annotations


import pytest

from tests.fuzz import harness as fuzz
from tests.fuzz.harness import SETTINGS, check_program, mutants

try:
    from hypothesis import HealthCheck, given, settings, strategies as st
except ImportError:  # the mutation half needs no hypothesis
    given = None

needs_hypothesis = pytest.mark.skipif(given is None, reason="pip install hypothesis hypothesmith "
                                                            "(the test extras have them)")


def _fuzz(strategy, examples: int, stats: dict) -> None:
    BOUNDED = settings(derandomize=True, database=None, deadline=None, print_blob=False,
                       suppress_health_check=list(HealthCheck))

    @settings(BOUNDED, max_examples=examples)
    @given(strategy, st.sampled_from(sorted(SETTINGS)))
    def run(program, settings_name):
        problems = check_program(program, SETTINGS[settings_name], stats=stats)
        assert not problems, "\n\n".join(problems)

    run()


@needs_hypothesis
def test_model_programs():
    """Programs built from what the model reads: strategies, scopes, variables, updates."""
    stats: dict = {}
    _fuzz(fuzz.model_programs(), 50, stats)
    assert stats["programs"] == 50
    # The oracle's fix checks only mean something if fixes happen.
    assert stats.get("safe fix applied", 0) >= 15 and stats.get("unsafe fix applied", 0) >= 15, stats


@needs_hypothesis
def test_hypothesmith_programs():
    """Whole generated modules, between variable statements under a TF preamble."""
    pytest.importorskip("hypothesmith")
    stats: dict = {}
    _fuzz(fuzz.hypothesmith_programs(), 30, stats)
    assert stats.get("safe fix applied", 0) >= 5, stats


@pytest.mark.parametrize("seed", [1, 2])
def test_mutated_fixtures(seed):
    """Token deletions, insertions, duplications, line swaps and odd whitespace."""
    stats: dict = {}
    failures = []
    names = sorted(SETTINGS)
    for n, (label, sources) in enumerate(mutants(seed, 100)):
        problems = check_program(sources, SETTINGS[names[n % len(names)]], stats=stats)
        if problems:
            failures.append(f"{label}:\n" + "\n".join(problems))
    assert not failures, "\n\n".join(failures[:3])
    assert stats["programs"] == 100 and stats.get("unsafe fix applied", 0) >= 10, stats
    assert stats.get("noqa added", 0) >= 10, stats  # --add-noqa, on those with findings


def test_mutations_are_deterministic():
    assert list(mutants(7, 5)) == list(mutants(7, 5))
    assert list(mutants(7, 5)) != list(mutants(8, 5))


# --- the oracle catches what it is meant to catch ---------------------------------------

BAD = ("import tensorflow as tf\n"
       "v = tf.Variable(1., synchronization=tf.VariableSynchronization.DEFAULT)\n"
       "w = tf.Variable(2.)\n")


def test_oracle_accepts_a_good_program():
    stats: dict = {}
    assert check_program(BAD, stats=stats) == []
    assert stats["safe fix applied"] == 1


def test_oracle_catches_bytes_changed_outside_the_edits(monkeypatch):
    import syncadvisor.fixes as fixes

    original = fixes.apply_fixes

    def sloppy(text, findings, unsafe):
        new, count = original(text, findings, unsafe)
        return new.replace("w = ", "w  = "), count

    monkeypatch.setattr(fixes, "apply_fixes", sloppy)
    problems = check_program(BAD)
    assert any("declared edits" in p for p in problems), problems


def test_oracle_catches_a_fix_that_is_not_idempotent(monkeypatch):
    import syncadvisor.fixes as fixes

    original = fixes.fix_results
    calls = []

    def flaky(results, texts, settings, unsafe):
        outcome = original(results, texts, settings, unsafe)
        calls.append(1)
        if len(calls) % 2 == 0:  # every second fix run changes the file again
            outcome.fixed = {p: t + "# again\n" for p, t in texts.items()}
        return outcome

    monkeypatch.setattr(fixes, "fix_results", flaky)
    assert any("not a no-op" in p for p in check_program(BAD))


def test_oracle_catches_a_broken_diff(monkeypatch):
    import syncadvisor.fixes as fixes

    monkeypatch.setattr(fixes, "unified_diff", lambda path, old, new: "--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y\n")
    assert any("--diff" in p for p in check_program(BAD))


def test_oracle_catches_an_internal_error(monkeypatch):
    """The engine turns it into a TFS900 finding; the fuzzer still counts it as a failure."""
    import syncadvisor.model.builder as builder

    def boom(*args, **kwargs):
        raise KeyError("boom")

    monkeypatch.setattr(builder, "build_model", boom)
    problems = check_program(BAD)
    assert problems and "internal error" in problems[0] and "KeyError" in problems[0]


# --- what the fuzzer found -----------------------------------------------------------------

NOQA = ("import tensorflow as tf\n"
        "strategy = tf.distribute.MirroredStrategy()\n"
        "with strategy.scope():\n"
        "    a = tf.Variable(1.0, synchronization=tf.VariableSynchronization.NONE)  # noqa\n"
        "    b = tf.Variable(1.0, synchronization=tf.VariableSynchronization.NONE)  # noqa: TFS101\n")


@pytest.mark.parametrize("variant", [
    pytest.param(lambda s: s.replace("\n", "\r"), id="cr-newlines"),
    pytest.param(lambda s: s.replace("\n", "\r\n"), id="crlf-newlines"),
    pytest.param(lambda s: "# page\x0cbreak\n" + s, id="form-feed-before"),
    pytest.param(lambda s: "x = '\u2028'\n" + s, id="line-separator-before"),
    pytest.param(lambda s: "\x0c\n" + s, id="form-feed-line"),
])
def test_noqa_is_honoured_whatever_the_newlines(variant):
    """Found by the newline-variant check: with CR newlines (the tokenizer saw one line) or a
    \\f / \\u2028 anywhere above (str.splitlines counted an extra line), `# noqa` was
    ignored, and --unsafe-fixes then removed the very settings the comment protected."""
    from syncadvisor.api import check_source, fix_source

    source = variant(NOQA)
    assert check_source(source) == []
    assert fix_source(source, unsafe=True) == source
    assert check_program(source) == []


@pytest.mark.parametrize("call", [
    "tf.Variable(synchronization=tf.VariableSynchronization.ON_WRITE,)",  # TFS303, safe
    "tf.compat.v1.Variable(\n    synchronization=tf.VariableSynchronization.ON_WRITE,  # why\n)",
    "tf.Variable(synchronization=tf.VariableSynchronization.NONE,\n)",  # TFS101, unsafe
])
def test_removing_a_lone_argument_takes_its_trailing_comma(call):
    """Found by the model programs (every failure of the long run): dropping the only
    argument of a call written with a trailing comma (TFS303's safe fix, TFS101's unsafe
    one) turned `tf.Variable(synchronization=X,)` into `tf.Variable(,)`. The fixer refused
    to write that, so nothing was lost, but the fix never applied."""
    from syncadvisor.api import fix_source

    source = ("import tensorflow as tf\nstrategy = tf.distribute.MirroredStrategy()\n"
              f"with strategy.scope():\n    v = {call}\n")
    assert check_program(source) == []
    assert "synchronization" not in fix_source(source, unsafe=True)


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"], ids=["lf", "crlf", "cr"])
@pytest.mark.parametrize("before", ["\\{nl}", "x = 1  # c{nl}\\{nl}\\{nl}"], ids=["one", "two"])
def test_a_lone_line_continuation_does_not_shift_positions(newline, before):
    """Found by the model programs (a hypothesmith statement ended in `\\`): libcst drops a
    backslash-newline that stands on a line of its own before a statement, so every
    position after it was off by two or three characters, and the safe TFS001 fix wrote
    `tf.VariableSynchronizatiAUTOULT` -- which parses, so nothing stopped it."""
    from syncadvisor.api import check_source, fix_source

    source = ("import tensorflow as tf" + newline + before.format(nl=newline)
              + "v = tf.Variable(1., synchronization=tf.VariableSynchronization.DEFAULT)" + newline)
    (finding,) = check_source(source)
    assert (finding.line, finding.column, finding.end_column) == (source.count(newline), 37, 71)
    assert fix_source(source) == source.replace("DEFAULT", "AUTO")
    assert check_program(source) == []


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_no_fix_where_libcst_misreads_a_line_continuation(newline):
    """After a block, libcst moves the statement that follows a lone `\\` line into the
    block (`def f(): pass` / `\\` / `v = ...` gives `v` an indent in its code): positions
    cannot be mapped back, so the fix is refused rather than written one column off."""
    from syncadvisor.api import fix_source

    source = newline.join(["import tensorflow as tf", "def f():", "    pass", "\\",
                           "v = tf.Variable(1., synchronization=tf.VariableSynchronization.DEFAULT)",
                           ""])
    assert fix_source(source) == source
    assert check_program(source) == []  # the oracle knows this libcst limit


def test_oracle_catches_a_fix_that_brings_a_finding(monkeypatch):
    """The fixer as it was: every finding after a round taken for one the run had."""
    import syncadvisor.fixes as fixes

    program = ("import keras\n"
               "class Counter(keras.layers.Layer):\n"
               "    def build(self, input_shape):\n"
               "        self.n = self.add_weight(shape=(), dtype='int64', aggregation='MEAN')\n")
    assert check_program(program) == []
    monkeypatch.setattr(fixes, "_descent", lambda before, *rest: [0] * len(rest[1]))
    problems = check_program(program)
    assert any("fix brought a finding the run did not have" in p and "TFS104" in p
               for p in problems), problems


def test_a_finding_whose_quoted_code_a_fix_changed_is_not_a_new_finding():
    """Found by the mutants: `aggregation=tf.VariableSynchronization.NONE1` has TFS001 (no
    such member; unsafe fix NONE) and TFS002 (not an aggregation). After the fix the
    TFS002 quotes `...NONE` instead of `...NONE1`: the same finding, which the oracle
    took for one the fix brought."""
    from syncadvisor.api import check_source

    program = ("import tensorflow as tf\n"
               "strategy = tf.distribute.MirroredStrategy()\n"
               "with strategy.scope():\n"
               "    v = tf.Variable(0.0, aggregation=tf.VariableSynchronization.NONE1)\n")
    assert sorted(f.code for f in check_source(program)) == ["TFS001", "TFS002"]
    assert check_program(program) == []
