# claim: Keras 3's `assign_add(x)` is `assign(v + x)`: on an ON_WRITE + SUM variable in replica
# context every replica's whole new value is summed, so two steps that each add 1.0 per replica
# leave 6.0 (2 * (2 * 0 + 2) + 2), not 4.0, on every copy.
# syncadvisor-expect: TFS205 warning 12
# syncadvisor-expect-none: TFS107
# result-assert: RESULT["value"] == 6.0 and RESULT["copies"] == [6.0, 6.0]
import keras
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    seen = keras.Variable(0.0, trainable=False, aggregation="sum")


@tf.function
def step():
    strategy.run(lambda: seen.assign_add(1.0))


step()
step()
RESULT = {"value": float(seen.numpy()),
          "copies": [float(c.numpy()) for c in strategy.experimental_local_results(seen.value)]}
print(RESULT)
