# claim: ON_READ + SUM: each replica adds to its own copy and a read sums them: 4.0.
# result-assert: RESULT["value"] == 4.0 and RESULT["copies"] == [2.0, 2.0]
import keras
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    seen = keras.Variable(0.0, trainable=False, aggregation="sum", synchronization="on_read")


@tf.function
def step():
    strategy.run(lambda: seen.assign_add(1.0))


step()
step()
RESULT = {"value": float(seen.numpy()),
          "copies": [float(c.numpy()) for c in strategy.experimental_local_results(seen.value)]}
print(RESULT)
