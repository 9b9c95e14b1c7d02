"""An ON_READ fix that also makes the variable non-trainable says so in its message."""
import textwrap

import pytest

from syncadvisor.api import check_source

_SOURCE = textwrap.dedent("""\
    import keras
    import tensorflow as tf
    strategy = tf.distribute.MirroredStrategy()
    with strategy.scope():
        seen = keras.Variable(0., {trainable}aggregation={aggregation})
    strategy.run(lambda x: seen.assign_add(x), args=(1.,))
""")


@pytest.mark.parametrize("code, trainable, aggregation, says", [
    ("TFS205", "", '"sum"', True),
    ("TFS205", "trainable=True, ", '"sum"', True),
    ("TFS205", "trainable=False, ", '"sum"', False),
    ("TFS201", "", '"none"', True),
    ("TFS201", "trainable=False, ", '"none"', False),
])
def test_on_read_fix_names_trainable(code, trainable, aggregation, says):
    findings = [f for f in check_source(_SOURCE.format(trainable=trainable,
                                                       aggregation=aggregation))
                if f.code == code]
    assert len(findings) == 1 and findings[0].fix is not None
    message = findings[0].fix.message
    assert 'synchronization="on_read"' in message
    assert ("trainable=False" in message) is says, message
