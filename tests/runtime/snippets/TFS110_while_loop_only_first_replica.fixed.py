# claim: counting outside the loop body (by the loop's trip count, which the loop returns) runs.
# result-assert: RESULT["copies"] == [3, 3]
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    iterations = tf.Variable(0, trainable=False, aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)


def refine(i, x):
    return i + 1, x * 0.5


def step(x):
    trips, out = tf.while_loop(lambda i, _: i < 3, refine, [tf.constant(0), x])
    iterations.assign_add(trips)
    return out


@tf.function
def train_step(x):
    return strategy.run(step, args=(x,))


train_step(tf.constant(1.0))
RESULT = {"copies": [int(c.numpy()) for c in strategy.experimental_local_results(iterations)]}
print(RESULT)
