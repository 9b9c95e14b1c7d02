# claim: Keras 3 `keras.Variable(dtype="int32", aggregation="mean")` fails the same way under MirroredStrategy.
# syncadvisor-expect: TFS104 error 13
# tensorflow-raises: ValueError: creating distributed tf.Variable with aggregation=MEAN and a non-floating dtype is not supported
# without-strategy: clean
import keras
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    samples_seen = keras.Variable(
        0,
        dtype="int32",
        aggregation="mean",
        trainable=False,
        name="samples_seen",
    )
