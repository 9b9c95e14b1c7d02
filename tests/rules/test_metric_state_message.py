"""TFS201 on a variable a Keras metric holds says what the metric's `result()` then
reports, which is not the same in the two Kerases (runtime:
tests/runtime/snippets/TFS201_*_metric_state_result.py): tf_keras computes it once, in
cross-replica context, from replica 0's copy; Keras 3 in each replica from its own. Where
which Keras runs is a guess, the message says only what holds for both."""
from __future__ import annotations

import textwrap

import pytest

from syncadvisor import api

METRIC = textwrap.dedent("""\
    import tensorflow as tf
    strategy = tf.distribute.MirroredStrategy()
    class LastBatchMean(tf.keras.metrics.Metric):
        def __init__(self):
            super().__init__(name="last")
            self.last = tf.Variable(0.0, trainable=False)
        def update_state(self, x):
            self.last.assign(tf.reduce_mean(x))
        def result(self):
            return tf.identity(self.last)
    with strategy.scope():
        metric = LastBatchMean()
    strategy.run(metric.update_state, args=(tf.constant([1.0]),))
""")

TF_KERAS = "tf_keras computes once, in cross-replica context (`merge_call`), from replica 0's"
KERAS3 = "Keras 3 computes in each replica from that replica's own copy"
BOTH = "its copies silently diverge, and reads and checkpoints see replica 0's copy"


@pytest.mark.parametrize(("requirements", "says", "not_says"), [
    ("tensorflow<2.16\n", TF_KERAS, KERAS3),
    ("tensorflow>=2.16\n", KERAS3, TF_KERAS),
    ("tensorflow\n", BOTH, "result()"),
])
def test_the_message_names_the_mechanism_of_the_keras_that_runs(tmp_path, requirements, says,
                                                                 not_says):
    (tmp_path / "requirements.txt").write_text(requirements)
    path = tmp_path / "m.py"
    path.write_text(METRIC)
    messages = [f.message for f in api.check_source(METRIC, filename=str(path))
                if f.code == "TFS201"]
    assert len(messages) == 1
    assert says in messages[0] and not_says not in messages[0]
