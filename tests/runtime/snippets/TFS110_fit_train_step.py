# claim: Keras 3 `fit` runs a custom `train_step` in `strategy.run` inside a `tf.function`: a SUM
# update inside a `tf.cond` branch there raises the same RuntimeError as in a custom loop's step
# (MirroredStrategy over 2 replicas).
# syncadvisor-expect: TFS110 warning 25
# tensorflow-raises: RuntimeError: `merge_call` called while defining a new graph or a tf.function
# without-strategy: clean
import keras
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])


class Model(keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(1)
        self.seen = tf.Variable(0.0, trainable=False, aggregation=tf.VariableAggregation.SUM)

    def call(self, x):
        return self.dense(x)

    def train_step(self, data):
        x, y = data
        loss = tf.reduce_mean((self(x) - y) ** 2)
        tf.cond(loss > 0, lambda: self.seen.assign_add(tf.ones(())), lambda: tf.identity(self.seen))
        return {"loss": loss}


with strategy.scope():
    model = Model()
    model.compile(optimizer="sgd")
model.fit(tf.ones((16, 4)), tf.ones((16, 1)), batch_size=8, epochs=1, verbose=0)
RESULT = {"seen": float(model.seen.numpy())}
print(RESULT)
