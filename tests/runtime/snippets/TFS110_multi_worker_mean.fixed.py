# claim: assigning outside the branch, choosing the value with `tf.where`, runs under
# MultiWorkerMirroredStrategy.
# result-assert: abs(RESULT["scale"] - 0.8017837) < 1e-6
import tensorflow as tf

strategy = tf.distribute.MultiWorkerMirroredStrategy()
with strategy.scope():
    scale = tf.Variable(1.0, trainable=False, aggregation=tf.VariableAggregation.MEAN)
    ready = tf.Variable(False, trainable=False)


def step(x):
    scale.assign(tf.where(ready, scale, 1.0 / tf.math.reduce_std(x)))
    return x


@tf.function
def train_step(x):
    return strategy.run(step, args=(x,))


train_step(tf.constant([1.0, 2.0, 4.0]))
RESULT = {"scale": float(scale.numpy())}
print(RESULT)
