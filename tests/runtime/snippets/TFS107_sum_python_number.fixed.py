# claim: ONLY_FIRST_REPLICA (every replica adds the same amount) runs and counts steps, not replica-steps.
# result-assert: RESULT == [2.0, 2.0]
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

with strategy.scope():
    steps_taken = tf.Variable(
        0.0,
        trainable=False,
        aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA,
    )


@tf.function
def train_step():
    def step_fn():
        steps_taken.assign_add(1.0)

    strategy.run(step_fn)


train_step()
train_step()
print("steps:", steps_taken.numpy())
RESULT = [copy.numpy() for copy in steps_taken.values]
