"""syncadvisor: finds wrong tf.Variable synchronization/aggregation choices before run time."""

__version__ = "0.1.0"
