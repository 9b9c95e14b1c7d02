# claim: the lowercase string runs and gives a SyncOnReadVariable.
# result-assert: RESULT == "SyncOnReadVariable"
import keras
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

with strategy.scope():
    tokens_seen = keras.Variable(
        0.0,
        trainable=False,
        synchronization="on_read",
        aggregation="sum",
        name="tokens_seen",
    )

RESULT = type(tokens_seen.value).__name__
