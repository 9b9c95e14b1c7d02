# claim: (negative) Keras 3 does NOT raise here: `keras.Variable.assign` converts the Python number
# to a tensor before the strategy sees it, so an ON_WRITE + SUM variable given `assign(1.0)` in
# replica context runs (SUM adds each replica's 1.0). TFS107's ValueError is tf.Variable's.
# syncadvisor-expect-none: TFS107
# result-assert: RESULT["copies"] == [2.0, 2.0]
import keras
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    seen = keras.Variable(0.0, trainable=False, aggregation="sum")


@tf.function
def step():
    strategy.run(lambda: seen.assign(1.0))


step()
RESULT = {"copies": [float(c.numpy()) for c in strategy.experimental_local_results(seen.value)]}
print(RESULT)
