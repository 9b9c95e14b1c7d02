# claim: the update outside the branch, weighted by the condition, runs under `fit`: 2 steps,
# each replica adds 1 a step, and SUM adds the replicas'.
# result-assert: RESULT["seen"] == 4.0
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
        # counted outside the branch, weighted by the condition
        self.seen.assign_add(tf.cast(loss > 0, tf.float32))
        return {"loss": loss}


with strategy.scope():
    model = Model()
    model.compile(optimizer="sgd")
model.fit(tf.ones((16, 4)), tf.ones((16, 1)), batch_size=8, epochs=1, verbose=0)
RESULT = {"seen": float(model.seen.numpy())}
print(RESULT)
