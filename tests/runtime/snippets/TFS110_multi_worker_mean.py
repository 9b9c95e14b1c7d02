# claim: under MultiWorkerMirroredStrategy (here one local worker) a MEAN variable assigned inside
# a `tf.cond` branch of traced replica code raises the same RuntimeError.
# syncadvisor-expect: TFS110 error 15
# tensorflow-raises: RuntimeError: `merge_call` called while defining a new graph or a tf.function
# without-strategy: clean
import tensorflow as tf

strategy = tf.distribute.MultiWorkerMirroredStrategy()
with strategy.scope():
    scale = tf.Variable(1.0, trainable=False, aggregation=tf.VariableAggregation.MEAN)
    ready = tf.Variable(False, trainable=False)


def step(x):
    tf.cond(ready, lambda: tf.identity(scale), lambda: scale.assign(1.0 / tf.math.reduce_std(x)))
    return x


@tf.function
def train_step(x):
    return strategy.run(step, args=(x,))


train_step(tf.constant([1.0, 2.0, 4.0]))
RESULT = {"scale": float(scale.numpy())}
print(RESULT)
