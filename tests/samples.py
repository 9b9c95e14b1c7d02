"""Small programs several test packages check."""

# Two findings under a visible MirroredStrategy: TFS101 (NONE) and TFS001 (DEFAULT, with a
# safe fix).
BAD = (
    "import tensorflow as tf\n"
    "strategy = tf.distribute.MirroredStrategy()\n"
    "with strategy.scope():\n"
    "    v = tf.Variable(1., synchronization=tf.VariableSynchronization.NONE)\n"
    "    w = tf.Variable(1., synchronization=tf.VariableSynchronization.DEFAULT)\n"
)
