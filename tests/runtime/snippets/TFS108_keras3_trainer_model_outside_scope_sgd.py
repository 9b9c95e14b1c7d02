# claim: a Keras 3 model built outside any scope and handed to a trainer whose optimizer (SGD
# without momentum: no slot variables) is made under `self.args.strategy.scope()` fails with a
# bare AssertionError when the step run by `strategy.run` applies gradients.
# syncadvisor-expect: TFS108 error 49
# tensorflow-raises: AssertionError
import numpy as np
import tensorflow as tf
import keras


class TrainingArguments:
    def __init__(self, learning_rate=1e-3):
        self.learning_rate = learning_rate
        # Reductions without collective ops: a snippet that fails inside a step can leave
        # a collective pending in the process, and later snippets' collectives would meet it.
        self.strategy = tf.distribute.MirroredStrategy(
            ["/cpu:0", "/cpu:1"], cross_device_ops=tf.distribute.ReductionToOneDevice())


class Trainer:
    def __init__(self, model, args):
        self.model = model
        self.args = args

    def create_optimizer(self):
        with self.args.strategy.scope():
            self.optimizer = keras.optimizers.SGD(self.args.learning_rate)  # no slot variables

    def train(self, dataset):
        self.create_optimizer()
        for batch in self.args.strategy.experimental_distribute_dataset(dataset):
            self.distributed_training_steps(batch)

    @tf.function
    def distributed_training_steps(self, batch):
        return self.args.strategy.run(self._step, args=batch)

    def _step(self, features, labels):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.model(features, training=True) - labels))
        gradients = tape.gradient(loss, self.model.trainable_variables)
        self.optimizer.apply_gradients(zip(gradients, self.model.trainable_variables))
        return loss


x = np.random.RandomState(0).rand(8, 2).astype("float32")
train_dataset = tf.data.Dataset.from_tensor_slices((x, x.sum(axis=1, keepdims=True))).batch(8)

model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
trainer = Trainer(model, TrainingArguments())
trainer.train(train_dataset)
