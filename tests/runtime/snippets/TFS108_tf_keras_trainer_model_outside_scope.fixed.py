# claim: the fix: a tf_keras model built under the arguments' strategy scope and handed to a
# trainer whose optimizer is made under that scope trains without an error.
import numpy as np
import tensorflow as tf
import tf_keras


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
            self.optimizer = tf_keras.optimizers.Adam(self.args.learning_rate)

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

args = TrainingArguments()
with args.strategy.scope():
    model = tf_keras.Sequential([tf_keras.Input((2,)), tf_keras.layers.Dense(1)])
trainer = Trainer(model, args)
trainer.train(train_dataset)
