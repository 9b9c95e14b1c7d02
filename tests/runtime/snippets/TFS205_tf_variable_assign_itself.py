# claim: an ON_WRITE + SUM tf.Variable assigned `total + 1.0` in replica context sums every
# replica's whole new value: two steps leave 6.0 (2 * (2 * 0 + 1) + 2), not 2.0 or 4.0.
# syncadvisor-expect: TFS205 warning 9
# result-assert: RESULT["value"] == 6.0 and RESULT["copies"] == [6.0, 6.0]
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    total = tf.Variable(0.0, trainable=False, aggregation=tf.VariableAggregation.SUM)


@tf.function
def step():
    strategy.run(lambda: total.assign(total + 1.0))


step()
step()
RESULT = {"value": float(total.numpy()),
          "copies": [float(c.numpy()) for c in strategy.experimental_local_results(total)]}
print(RESULT)
