"""Keras `fit` under MirroredStrategy, with BatchNormalization and a custom metric.

`syncadvisor profile --run examples/train_fit.py` runs this program under each choice
for the metric's two variables and says what each costs per step and whether the
values it reports stay right.
"""
import keras
import numpy as np
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy()


class MeanAbsoluteError(keras.metrics.Metric):
    """The mean absolute error over every example seen since the last reset."""

    def __init__(self, name="mean_absolute_error", **kwargs):
        super().__init__(name=name, **kwargs)
        self.total = self.add_variable(shape=(), initializer="zeros", name="total",
                                       aggregation="sum")
        self.count = self.add_variable(shape=(), initializer="zeros", name="count",
                                       aggregation="sum")

    def update_state(self, y_true, y_pred, sample_weight=None):
        errors = tf.abs(tf.cast(y_true, "float32") - tf.cast(y_pred, "float32"))
        self.total.assign_add(tf.reduce_sum(errors))
        self.count.assign_add(tf.cast(tf.size(errors), "float32"))

    def result(self):
        return self.total / tf.maximum(self.count, 1.0)


def make_data(n=2048):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, 8)).astype("float32")
    y = x.sum(axis=1, keepdims=True)
    return x, y


def main(epochs=2):
    x, y = make_data()
    with strategy.scope():
        model = keras.Sequential([
            keras.Input(shape=(8,)),
            keras.layers.Dense(32),
            keras.layers.BatchNormalization(),
            keras.layers.ReLU(),
            keras.layers.Dense(1),
        ])
        model.compile(optimizer="sgd", loss="mse", metrics=[MeanAbsoluteError()])
    model.fit(x, y, batch_size=64, epochs=epochs, verbose=0)
    print(model.evaluate(x, y, batch_size=64, verbose=0, return_dict=True))


if __name__ == "__main__":
    main()
