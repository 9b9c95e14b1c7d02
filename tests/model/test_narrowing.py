"""`isinstance(strategy, X)` narrows the strategy of the scopes a branch sees
(builder/narrowing.py, `contexts._narrowed`): TFS101's severity shows which kinds are
left, an error where only a mirroring strategy is, nothing where none is."""
from __future__ import annotations

import textwrap

import pytest

from syncadvisor.api import check_source

HEAD = """\
import tensorflow as tf
from tensorflow.distribute import MirroredStrategy, OneDeviceStrategy
class Local:
    pass
def make(n):
    if n > 1:
        return tf.distribute.MirroredStrategy()
    return tf.distribute.OneDeviceStrategy("/cpu:0")
strategy = make(2)
NONE = tf.VariableSynchronization.NONE
"""

CASES = [
    ("no test: either kind", """
        with strategy.scope():
            v = tf.Variable(0, synchronization=NONE)
    """, ["warning"]),
    ("the test passes for the other kind", """
        with strategy.scope():
            if isinstance(strategy, OneDeviceStrategy):
                v = tf.Variable(0, synchronization=NONE)
    """, []),
    ("the test fails for the other kind", """
        with strategy.scope():
            if isinstance(strategy, OneDeviceStrategy):
                pass
            else:
                v = tf.Variable(0, synchronization=NONE)
    """, ["error"]),
    ("a test outside the scope", """
        if not isinstance(strategy, tf.distribute.OneDeviceStrategy):
            with strategy.scope():
                v = tf.Variable(0, synchronization=NONE)
    """, ["error"]),
    ("an elif sees the if's test failed", """
        with strategy.scope():
            if isinstance(strategy, OneDeviceStrategy):
                pass
            elif isinstance(strategy, tf.distribute.TPUStrategy):
                pass
            else:
                v = tf.Variable(0, synchronization=NONE)
    """, ["error"]),
    ("a tuple of classes", """
        with strategy.scope():
            if isinstance(strategy, (MirroredStrategy, tf.distribute.TPUStrategy)):
                v = tf.Variable(0, synchronization=NONE)
    """, ["error"]),
    ("a class that is no strategy narrows nothing", """
        with strategy.scope():
            if isinstance(strategy, Local):
                v = tf.Variable(0, synchronization=NONE)
    """, ["warning"]),
    ("another name is not narrowed", """
        other = make(3)
        with other.scope():
            if isinstance(strategy, OneDeviceStrategy):
                v = tf.Variable(0, synchronization=NONE)
    """, ["warning"]),
    ("a def in the branch runs later", """
        with strategy.scope():
            if isinstance(strategy, OneDeviceStrategy):
                def later():
                    with strategy.scope():
                        return tf.Variable(0, synchronization=NONE)
    """, ["warning"]),
    ("a test no option the run sees passes: the code's own word", """
        mirrored = tf.distribute.MirroredStrategy()
        if isinstance(mirrored, OneDeviceStrategy):
            with mirrored.scope():
                v = tf.Variable(0, synchronization=NONE)
    """, []),
    ("an unknown strategy that passes is of the tested kind", """
        def train(distribution):
            with distribution.scope():
                if isinstance(distribution, MirroredStrategy):
                    return tf.Variable(0, synchronization=NONE)
    """, ["error"]),
]


@pytest.mark.parametrize("body, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_isinstance_narrows_the_strategy_in_each_branch(body, expected):
    findings = check_source(HEAD + textwrap.dedent(body))
    assert [f.severity for f in findings if f.code == "TFS101"] == expected
