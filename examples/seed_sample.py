"""The sample the tool was seeded with: a TensorFlow tutorial pattern.

`tf.VariableSynchronization.DEFAULT` does not exist; running this raises
AttributeError. `syncadvisor check examples/` reports it (TFS001) and
`syncadvisor check --fix examples/` rewrites it to AUTO.
"""
import tensorflow as tf

# Create a variable with the "default" synchronization, as the tutorial wrote it.
weights = tf.Variable(
    tf.random.normal([784, 10]),
    synchronization=tf.VariableSynchronization.DEFAULT,
    aggregation=tf.VariableAggregation.NONE,
    name="weights",
)
