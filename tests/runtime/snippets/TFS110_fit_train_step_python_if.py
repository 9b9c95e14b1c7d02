# claim: (negative) Keras 3 traces `fit`'s steps without AutoGraph: an `if` on a tensor in a
# custom `train_step` is no `tf.cond` but a Python `if`, and raises OperatorNotAllowedInGraphError
# under any strategy (and with none), before any update: no TFS110 there.
# syncadvisor-expect-none: TFS110
# tensorflow-raises: OperatorNotAllowedInGraphError: Using a symbolic `tf.Tensor` as a Python `bool`
# without-strategy: raises OperatorNotAllowedInGraphError: Using a symbolic `tf.Tensor` as a Python `bool`
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
        if loss > 0:
            self.seen.assign_add(tf.ones(()))
        return {"loss": loss}


with strategy.scope():
    model = Model()
    model.compile(optimizer="sgd")
model.fit(tf.ones((16, 4)), tf.ones((16, 1)), batch_size=8, epochs=1, verbose=0)
RESULT = {"seen": float(model.seen.numpy())}
print(RESULT)
