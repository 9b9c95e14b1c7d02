# claim: (negative) Keras 3 `fit` with a custom `train_step` that applies the compiled optimizer:
# `fit` builds the optimizer before its traced steps, and it trains.
# syncadvisor-expect-none: TFS109
# result-assert: RESULT["slots"] == 6
import keras
import numpy as np
import tensorflow as tf


class Regressor(keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(1)

    def call(self, x):
        return self.dense(x)

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((self(x, training=True) - y) ** 2)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}


strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    model = Regressor()
    model.compile(optimizer=keras.optimizers.Adam())
model.fit(np.ones((16, 4), "float32"), np.zeros((16, 1), "float32"), batch_size=8, verbose=0)
RESULT = {"slots": len(model.optimizer.variables)}
print(RESULT)
