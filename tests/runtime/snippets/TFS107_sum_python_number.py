# claim: an ON_WRITE + SUM variable updated in replica context with a Python number cannot be reduced.
# syncadvisor-expect: TFS107 error 13
# tensorflow-raises: ValueError: A non-DistributedValues value 1.0 cannot be reduced with the given reduce op ReduceOp.SUM
# without-strategy: clean
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

with strategy.scope():
    steps_taken = tf.Variable(
        0.0,
        trainable=False,
        aggregation=tf.VariableAggregation.SUM,
    )


@tf.function
def train_step():
    def step_fn():
        steps_taken.assign_add(1.0)

    strategy.run(step_fn)


train_step()
train_step()
print("steps:", steps_taken.numpy())
