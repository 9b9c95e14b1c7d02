# claim: "sum" (a per-replica count to be added up) runs.
# result-assert: RESULT == "SUM"
import keras
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    samples_seen = keras.Variable(
        0,
        dtype="int32",
        aggregation="sum",
        trainable=False,
        name="samples_seen",
    )

RESULT = samples_seen.value.aggregation.name
