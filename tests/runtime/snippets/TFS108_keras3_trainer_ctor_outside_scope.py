# claim: a Keras 3 optimizer made outside the scope and handed to a trainer's constructor
# inside it raises once the trainer's `strategy.run` step applies gradients.
# syncadvisor-expect: TFS108 error 35
# tensorflow-raises: RuntimeError: Mixing different tf.distribute.Strategy objects
import numpy as np
import tensorflow as tf


class Trainer:
    def __init__(self, strategy, model, optimizer):
        self.strategy = strategy
        self.model = model
        self.optimizer = optimizer

    def step(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.model(x) - y))
        grads = tape.gradient(loss, self.model.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
        return loss

    @tf.function
    def train_step(self, x, y):
        return self.strategy.run(self.step, args=(x, y))


features = np.random.rand(64, 4).astype("float32")
labels = np.random.rand(64, 1).astype("float32")

# Reductions without collective ops: a snippet that fails inside a step can leave a
# collective pending in the process, and later snippets' collectives would meet it.
strategy = tf.distribute.MirroredStrategy(
    ["/cpu:0", "/cpu:1"], cross_device_ops=tf.distribute.ReductionToOneDevice())

optimizer = tf.keras.optimizers.Adam()
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])
    trainer = Trainer(strategy, model, optimizer)
dataset = strategy.experimental_distribute_dataset(
    tf.data.Dataset.from_tensor_slices((features, labels)).batch(16))
for x, y in dataset:
    trainer.train_step(x, y)
