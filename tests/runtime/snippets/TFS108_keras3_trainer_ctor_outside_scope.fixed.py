# claim: the same optimizer made inside the scope trains through the trainer.
# result-assert: RESULT == 4
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

strategy = tf.distribute.MirroredStrategy(
    ["/cpu:0", "/cpu:1"], cross_device_ops=tf.distribute.ReductionToOneDevice())

with strategy.scope():
    optimizer = tf.keras.optimizers.Adam()
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])
    trainer = Trainer(strategy, model, optimizer)
dataset = strategy.experimental_distribute_dataset(
    tf.data.Dataset.from_tensor_slices((features, labels)).batch(16))
for x, y in dataset:
    trainer.train_step(x, y)
RESULT = int(optimizer.iterations.numpy())
