# claim: an ONLY_FIRST_REPLICA counter updated in a `tf.while_loop` body reached from the function
# given to `strategy.run` inside a `tf.function` raises when traced, as SUM and MEAN do.
# syncadvisor-expect: TFS110 error 14
# tensorflow-raises: RuntimeError: `merge_call` called while defining a new graph or a tf.function
# without-strategy: clean
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    iterations = tf.Variable(0, trainable=False, aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)


def refine(i, x):
    iterations.assign_add(1)
    return i + 1, x * 0.5


def step(x):
    _, out = tf.while_loop(lambda i, _: i < 3, refine, [tf.constant(0), x])
    return out


@tf.function
def train_step(x):
    return strategy.run(step, args=(x,))


train_step(tf.constant(1.0))
RESULT = {"copies": [int(c.numpy()) for c in strategy.experimental_local_results(iterations)]}
print(RESULT)
