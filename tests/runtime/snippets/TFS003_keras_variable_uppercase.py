# claim: Keras 3 `keras.Variable` accepts only lowercase strings; "ON_READ" raises, with or without a strategy.
# syncadvisor-expect: TFS003 error 14
# tensorflow-raises: ValueError: Invalid value for argument `synchronization`. Expected one of
# without-strategy: raises ValueError: Received: synchronization=ON_READ
import keras
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

with strategy.scope():
    tokens_seen = keras.Variable(
        0.0,
        trainable=False,
        synchronization="ON_READ",
        aggregation="sum",
        name="tokens_seen",
    )
