"""A claim true of one Keras only is never an error where the project leaves open which
Keras runs (an unpinned `tensorflow`, or nothing declared): the newest release is a guess.
The same code in a project that settles it (`tensorflow>=2.16`) keeps its errors."""
from __future__ import annotations

import textwrap

import pytest

from syncadvisor import api

LAYER = textwrap.dedent("""\
    import tensorflow as tf
    class L(tf.keras.layers.Layer):
        def build(self, s):
            self.w = self.add_weight(shape=(), trainable=False,
                                     synchronization=tf.VariableSynchronization.ON_READ,
                                     aggregation=tf.VariableAggregation.SUM)
""")

OPTIMIZER_OUTSIDE = textwrap.dedent("""\
    import tensorflow as tf
    strategy = tf.distribute.MirroredStrategy()
    optimizer = tf.keras.optimizers.Adam()
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        model.compile(optimizer=optimizer, loss='mse')
    model.fit([[1.]], [[1.]])
""")

ASSIGN_ADD = textwrap.dedent("""\
    import tensorflow as tf
    strategy = tf.distribute.MirroredStrategy()
    class L(tf.keras.layers.Layer):
        def build(self, s):
            self.seen = self.add_weight(shape=(), trainable=False, aggregation="sum")
        def call(self, x):
            self.seen.assign_add(tf.reduce_sum(x))
            return x
    with strategy.scope():
        layer = L()
""")

OPEN = "if this runs on Keras 3 (TensorFlow >= 2.16; the project does not pin it)"


def check(tmp_path, requirements: str, source: str):
    """The findings of `source` in a project that declares `requirements` (a folder of
    its own: a project's declarations are read once per run of the process)."""
    project = tmp_path / str(abs(hash((requirements, source))))
    project.mkdir(exist_ok=True)
    (project / "requirements.txt").write_text(requirements)
    path = project / "m.py"
    path.write_text(source)
    return api.check_source(source, filename=str(path))


def by_code(findings, code):
    return [(f.severity, f.message) for f in findings if f.code == code]


@pytest.mark.parametrize("code", ["TFS003", "TFS004"])
def test_keras3_argument_claims_are_errors_only_where_the_project_settles_keras_3(tmp_path,
                                                                                  code):
    settled = by_code(check(tmp_path, "tensorflow>=2.16\n", LAYER), code)
    assert [severity for severity, _ in settled] == ["error"]
    assert OPEN not in settled[0][1]
    guessed = by_code(check(tmp_path, "tensorflow\n", LAYER), code)
    assert [severity for severity, _ in guessed] == ["warning"]
    assert OPEN in guessed[0][1]


def test_a_guessed_keras_3_fix_that_breaks_keras_2_is_unsafe(tmp_path):
    settled = [f for f in check(tmp_path, "tensorflow>=2.16\n", LAYER) if f.code == "TFS003"]
    guessed = [f for f in check(tmp_path, "tensorflow\n", LAYER) if f.code == "TFS003"]
    assert [f.fix.applicability for f in settled] == ["safe"]
    assert [f.fix.applicability for f in guessed] == ["unsafe"]


@pytest.mark.parametrize("evidence", ["experimental_autocast=False", "use_resource=True"])
def test_a_call_written_for_keras_2_gets_no_keras_3_claim_on_a_guess(tmp_path, evidence):
    source = LAYER.replace("aggregation=tf.VariableAggregation.SUM)",
                           f"aggregation=tf.VariableAggregation.SUM, {evidence})")
    assert by_code(check(tmp_path, "tensorflow\n", source), "TFS004") == []
    assert by_code(check(tmp_path, "tensorflow\n", source), "TFS003") == []
    # where the project settles Keras 3, the call is Keras 3's whatever it passes
    assert len(by_code(check(tmp_path, "tensorflow>=2.16\n", source), "TFS004")) == 1


def test_a_keras_3_only_argument_keeps_the_claim_settled(tmp_path):
    source = LAYER.replace("trainable=False,", "trainable=False, overwrite_with_gradient=False,")
    assert [s for s, _ in by_code(check(tmp_path, "tensorflow\n", source), "TFS004")] == \
        ["error"]


def test_a_keras_3_optimizer_made_outside_the_scope_is_an_error_only_on_settled_keras_3(
        tmp_path):
    settled = by_code(check(tmp_path, "tensorflow>=2.16\n", OPTIMIZER_OUTSIDE), "TFS108")
    assert [s for s, _ in settled] == ["error"]
    guessed = by_code(check(tmp_path, "tensorflow\n", OPTIMIZER_OUTSIDE), "TFS108")
    assert [s for s, _ in guessed] == ["warning"] and OPEN in guessed[0][1]


def test_a_keras_3_read_modify_write_claim_names_its_assumption(tmp_path):
    settled = by_code(check(tmp_path, "tensorflow>=2.16\n", ASSIGN_ADD), "TFS205")
    guessed = by_code(check(tmp_path, "tensorflow\n", ASSIGN_ADD), "TFS205")
    assert len(settled) == len(guessed) == 1
    assert OPEN not in settled[0][1] and OPEN in guessed[0][1]
