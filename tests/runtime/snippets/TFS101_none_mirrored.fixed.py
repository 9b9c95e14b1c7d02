# claim: dropping the argument (AUTO) runs under MirroredStrategy.
# result-assert: RESULT == "MirroredVariable"
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

with strategy.scope():
    should_compute_metrics = tf.Variable(
        True,
        trainable=False,
        name="should_compute_metrics",
    )

print("compute metrics:", should_compute_metrics.numpy())
RESULT = type(should_compute_metrics).__name__
