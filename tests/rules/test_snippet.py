"""`snippet`: how the rules write their VALID/INVALID example code."""
from __future__ import annotations

import pytest

from syncadvisor.rules.base import snippet


def test_dedents_and_keeps_the_final_newline():
    assert snippet("""
        import tensorflow as tf
        class M:
            x = 1

        v = tf.Variable(0.)
    """) == "import tensorflow as tf\nclass M:\n    x = 1\n\nv = tf.Variable(0.)\n"


def test_closing_quotes_after_the_code_leave_no_final_newline():
    assert snippet("""
        v = 1""") == "v = 1"


def test_code_must_start_on_the_next_line():
    with pytest.raises(ValueError):
        snippet("""v = 1
        """)
