# claim: ON_READ + SUM: each replica adds to its own copy and a read sums them: 4.0.
# result-assert: RESULT["value"] == 4.0 and RESULT["copies"] == [2.0, 2.0]
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    total = tf.Variable(0.0, trainable=False, aggregation=tf.VariableAggregation.SUM, synchronization=tf.VariableSynchronization.ON_READ)


@tf.function
def step():
    strategy.run(lambda: total.assign(total + 1.0))


step()
step()
RESULT = {"value": float(total.numpy()),
          "copies": [float(c.numpy()) for c in strategy.experimental_local_results(total)]}
print(RESULT)
