"""The 40-file workspace of the server benchmark: a training program as an editor holds it
(`editor.py`'s 300-line buffer, importing the package) and 39 modules of a TF/Keras
project that import each other: layers, models, a trainer, data and utils.

What the server has to link on every edit is real: the training file builds a model from
`proj.models` under a strategy scope and updates a `proj.utils.metrics.Meter` in the
function it hands to `strategy.run` (a TFS201 in `metrics.py` that only the link between
the two files finds), and its own two findings (TFS103, TFS104) stay on every edit.
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.editor import buffer

PACKAGE = "proj"
TRAIN = f"{PACKAGE}/train.py"
TRAIN_LINES = 300

# The training file: editor.py's buffer with the package's imports and uses put in.
_TRAIN_IMPORTS = (
    "import tensorflow as tf\n"
    "\n"
    "from proj.models.classifier import Classifier\n"
    "from proj.trainer.schedule import warmup_schedule\n"
    "from proj.utils.metrics import Meter\n"
)
_TRAIN_SCOPE = ("    model = make_model()\n"
                "    classifier = Classifier(num_classes=10)\n"
                "    meter = Meter()\n")
_TRAIN_STEP = "        loss_total.assign_add(loss)\n        meter.update(loss)\n"


def train_text(edit: int) -> str:
    """The training program after `edit` keystrokes (the learning rate line edited)."""
    added = sum(part.count("\n") - 1 for part in (_TRAIN_IMPORTS, _TRAIN_SCOPE, _TRAIN_STEP))
    text = buffer(edit, TRAIN_LINES - added)
    text = text.replace("import tensorflow as tf\n", _TRAIN_IMPORTS, 1)
    text = text.replace("    model = make_model()\n", _TRAIN_SCOPE, 1)
    text = text.replace("        loss_total.assign_add(loss)\n", _TRAIN_STEP, 1)
    assert text.count("\n") == TRAIN_LINES, text.count("\n")
    return text


def learning_rate_line(text: str) -> int:
    """The 0-based line that each edit changes."""
    return next(i for i, line in enumerate(text.splitlines()) if line.startswith("LEARNING_RATE"))


_LAYER = '''\
"""{doc}"""
import tensorflow as tf

from proj.layers.base import BaseLayer
from proj.utils.tensors import {helper}


class {name}(BaseLayer):
    """{doc}"""

    def __init__(self, units={units}, rate=0.1, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.rate = rate

    def build(self, input_shape):
        width = int(input_shape[-1])
        self.kernel = self.add_weight(name="kernel", shape=(width, self.units),
                                      initializer="glorot_uniform")
        self.bias = self.add_weight(name="bias", shape=(self.units,), initializer="zeros")
        self.gamma = self.add_weight(name="gamma", shape=(self.units,), initializer="ones")
        self.seen = self.add_weight(name="seen", shape=(), dtype="int64", trainable=False,
                                    initializer="zeros", aggregation="sum")
        super().build(input_shape)

    def call(self, inputs, training=False):
        x = tf.matmul(inputs, self.kernel) + self.bias
        x = {helper}(x) * self.gamma
        if training:
            self.seen.assign_add(tf.cast(tf.shape(inputs)[0], tf.int64))
            x = tf.nn.dropout(x, rate=self.rate)
        return {activation}(x)

    def get_config(self):
        config = super().get_config()
        config.update({{"units": self.units, "rate": self.rate}})
        return config


def stack_{short}(depth, units={units}):
    """`depth` {name} layers, one after another."""
    return [{name}(units=units, name=f"{short}_{{i}}") for i in range(depth)]
'''

_LAYERS = [
    ("dense_block", "DenseBlock", "A dense layer with a learned scale.", "tf.nn.gelu", "safe_norm"),
    ("attention", "Attention", "Single-head dot-product attention, projected.", "tf.identity",
     "softmax_last"),
    ("norm", "ScaledNorm", "Layer normalisation with a learned gain.", "tf.identity",
     "safe_norm"),
    ("embedding", "Embedding", "A projection of one-hot inputs.", "tf.identity", "clip_values"),
    ("residual", "Residual", "A residual connection around a dense map.", "tf.nn.relu",
     "clip_values"),
    ("conv_block", "ConvBlock", "A 1x1 convolution as a dense map.", "tf.nn.relu",
     "safe_norm"),
    ("gating", "Gating", "A gated linear unit.", "tf.sigmoid", "softmax_last"),
    ("pooling", "Pooling", "Mean pooling followed by a projection.", "tf.identity",
     "clip_values"),
    ("position", "Position", "A learned positional offset.", "tf.identity", "clip_values"),
    ("feedforward", "FeedForward", "The transformer's feed-forward block.", "tf.nn.gelu",
     "safe_norm"),
]

_BASE = '''\
"""The layers' common base: naming, a config round trip, a build check."""
import tensorflow as tf

from proj.utils.registry import register


@register("layer")
class BaseLayer(tf.keras.layers.Layer):
    """A Keras layer that records how it was built."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.built_shape = None

    def build(self, input_shape):
        self.built_shape = tuple(input_shape)
        super().build(input_shape)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1]) + (getattr(self, "units", input_shape[-1]),)

    @classmethod
    def from_config(cls, config):
        return cls(**config)
'''

_MODEL = '''\
"""{doc}"""
import tensorflow as tf

from proj.layers.{first} import {First}
from proj.layers.{second} import {Second}
from proj.layers.norm import ScaledNorm
from proj.utils.config import ModelConfig


class {name}(tf.keras.Model):
    """{doc}"""

    def __init__(self, num_classes=10, config=None, **kwargs):
        super().__init__(**kwargs)
        self.config = config or ModelConfig()
        self.blocks = [{First}(units=self.config.width) for _ in range(self.config.depth)]
        self.mixer = {Second}(units=self.config.width)
        self.norm = ScaledNorm(units=self.config.width)
        self.head = tf.keras.layers.Dense(num_classes)
        self.steps = tf.Variable(0, dtype=tf.int64, trainable=False,
                                 aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)

    def call(self, inputs, training=False):
        x = inputs
        for block in self.blocks:
            x = block(x, training=training)
        x = self.norm(self.mixer(x, training=training))
        return self.head(x)

    def train_step(self, data):
        features, labels = data
        with tf.GradientTape() as tape:
            logits = self(features, training=True)
            loss = self.compute_loss(y=labels, y_pred=logits)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        self.steps.assign_add(1)
        return {{"loss": loss}}


def build_{short}(num_classes=10, **overrides):
    return {name}(num_classes=num_classes, config=ModelConfig(**overrides))
'''

_MODELS = [
    ("classifier", "Classifier", "A classifier: dense blocks, attention, a linear head.",
     "dense_block", "attention"),
    ("encoder", "Encoder", "An encoder of residual blocks.", "residual", "feedforward"),
    ("decoder", "Decoder", "A decoder of gated blocks.", "gating", "attention"),
    ("heads", "MultiHead", "Several heads over one trunk.", "dense_block", "pooling"),
    ("backbone", "Backbone", "The shared backbone of the models.", "conv_block", "position"),
    ("ensemble", "Ensemble", "An average of small members.", "embedding", "residual"),
]

_FILES = {
    "utils/metrics.py": '''\
"""Running metrics kept across steps."""
import tensorflow as tf


class Meter(tf.Module):
    """An exponential moving average of a scalar."""

    def __init__(self, decay=0.9):
        super().__init__()
        self.decay = decay
        self.value = tf.Variable(0.0, trainable=False)

    def update(self, x):
        self.value.assign(self.decay * self.value + (1.0 - self.decay) * x)
        return self.value

    def reset(self):
        self.value.assign(0.0)


class Counter(tf.Module):
    """Counts examples on every replica; the sum is read across them."""

    def __init__(self):
        super().__init__()
        self.count = tf.Variable(0, dtype=tf.int64, trainable=False,
                                 synchronization=tf.VariableSynchronization.ON_READ,
                                 aggregation=tf.VariableAggregation.SUM)

    def update(self, batch):
        self.count.assign_add(tf.cast(tf.shape(batch)[0], tf.int64))


def accuracy(labels, logits):
    predictions = tf.argmax(logits, axis=-1, output_type=tf.int64)
    return tf.reduce_mean(tf.cast(tf.equal(predictions, tf.cast(labels, tf.int64)), tf.float32))
''',
    "utils/config.py": '''\
"""Model and training settings."""
import dataclasses
import json
import os


@dataclasses.dataclass
class ModelConfig:
    width: int = 128
    depth: int = 4
    dropout: float = 0.1

    @classmethod
    def from_file(cls, path):
        with open(path) as f:
            return cls(**json.load(f))


@dataclasses.dataclass
class TrainConfig:
    batch_size: int = 64
    epochs: int = 10
    learning_rate: float = 1e-3
    warmup_steps: int = 1000
    checkpoint_dir: str = os.path.join("runs", "latest")

    def to_dict(self):
        return dataclasses.asdict(self)
''',
    "utils/io.py": '''\
"""Reading and writing arrays and records."""
import os

import numpy as np
import tensorflow as tf


def load_arrays(path):
    data = np.load(path)
    return data["x"], data["y"]


def write_records(path, features, labels):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with tf.io.TFRecordWriter(path) as writer:
        for x, y in zip(features, labels):
            example = tf.train.Example(features=tf.train.Features(feature={
                "x": tf.train.Feature(float_list=tf.train.FloatList(value=x.ravel())),
                "y": tf.train.Feature(int64_list=tf.train.Int64List(value=[int(y)])),
            }))
            writer.write(example.SerializeToString())


def parse_record(record, width):
    spec = {"x": tf.io.FixedLenFeature([width], tf.float32),
            "y": tf.io.FixedLenFeature([], tf.int64)}
    parsed = tf.io.parse_single_example(record, spec)
    return parsed["x"], parsed["y"]
''',
    "utils/logging_utils.py": '''\
"""Logging set up once per process."""
import logging
import sys

_CONFIGURED = False


def get_logger(name="proj"):
    global _CONFIGURED
    if not _CONFIGURED:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(message)s"))
        logging.getLogger("proj").addHandler(handler)
        logging.getLogger("proj").setLevel(logging.INFO)
        _CONFIGURED = True
    return logging.getLogger(name)
''',
    "utils/data.py": '''\
"""Small dataset helpers shared by the pipelines."""
import tensorflow as tf

from proj.utils.io import load_arrays


def from_arrays(path, batch_size):
    x, y = load_arrays(path)
    ds = tf.data.Dataset.from_tensor_slices((x, y))
    return ds.shuffle(4096).batch(batch_size, drop_remainder=True).prefetch(tf.data.AUTOTUNE)


def take_batches(ds, n):
    return ds.take(n).cache()
''',
    "utils/tensors.py": '''\
"""Numerically careful tensor helpers."""
import tensorflow as tf


def safe_norm(x, epsilon=1e-6):
    mean, variance = tf.nn.moments(x, axes=[-1], keepdims=True)
    return (x - mean) * tf.math.rsqrt(variance + epsilon)


def softmax_last(x):
    return tf.nn.softmax(x, axis=-1)


def clip_values(x, limit=10.0):
    return tf.clip_by_value(x, -limit, limit)
''',
    "utils/registry.py": '''\
"""A name -> class registry for layers and models."""
_REGISTRY = {}


def register(kind):
    def wrap(cls):
        _REGISTRY.setdefault(kind, {})[cls.__name__] = cls
        return cls
    return wrap


def lookup(kind, name):
    return _REGISTRY[kind][name]
''',
    "utils/summaries.py": '''\
"""TensorBoard summaries."""
import tensorflow as tf

from proj.utils.metrics import accuracy


class Summaries:
    def __init__(self, logdir):
        self.writer = tf.summary.create_file_writer(logdir)

    def scalars(self, step, **values):
        with self.writer.as_default(step=step):
            for name, value in values.items():
                tf.summary.scalar(name, value)

    def evaluation(self, step, labels, logits):
        self.scalars(step, accuracy=accuracy(labels, logits))
''',
    "trainer/loop.py": '''\
"""A custom training loop under a distribution strategy."""
import tensorflow as tf

from proj.models.encoder import Encoder
from proj.trainer.distribute import make_strategy
from proj.trainer.optimizer import make_optimizer
from proj.utils.metrics import Counter

strategy = make_strategy()

with strategy.scope():
    encoder = Encoder(num_classes=10)
    optimizer = make_optimizer()
    examples = Counter()
    global_step = tf.Variable(0, dtype=tf.int64, trainable=False,
                              aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)


@tf.function
def train_step(features, labels):
    def step(features, labels):
        with tf.GradientTape() as tape:
            logits = encoder(features, training=True)
            loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(
                labels, logits, from_logits=True))
        grads = tape.gradient(loss, encoder.trainable_variables)
        optimizer.apply_gradients(zip(grads, encoder.trainable_variables))
        examples.update(features)
        global_step.assign_add(1)
        return loss

    losses = strategy.run(step, args=(features, labels))
    return strategy.reduce(tf.distribute.ReduceOp.MEAN, losses, axis=None)


def train(dataset, steps):
    for features, labels in strategy.experimental_distribute_dataset(dataset).take(steps):
        train_step(features, labels)
    return global_step.numpy()
''',
    "trainer/callbacks.py": '''\
"""Keras callbacks used by the trainer."""
import tensorflow as tf

from proj.utils.logging_utils import get_logger

log = get_logger(__name__)


class LogEvery(tf.keras.callbacks.Callback):
    def __init__(self, every=100):
        super().__init__()
        self.every = every

    def on_train_batch_end(self, batch, logs=None):
        if batch % self.every == 0:
            log.info("batch %d: %s", batch, logs)


def default_callbacks(checkpoint_dir):
    return [LogEvery(), tf.keras.callbacks.ModelCheckpoint(checkpoint_dir + "/ckpt-{epoch}")]
''',
    "trainer/checkpoint.py": '''\
"""Checkpoints of a model and its optimizer."""
import tensorflow as tf


def manager(model, optimizer, directory, keep=3):
    checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer)
    return tf.train.CheckpointManager(checkpoint, directory, max_to_keep=keep)


def restore_latest(mgr):
    if mgr.latest_checkpoint:
        mgr.checkpoint.restore(mgr.latest_checkpoint).expect_partial()
        return True
    return False
''',
    "trainer/schedule.py": '''\
"""Learning-rate schedules."""
import tensorflow as tf


class WarmupCosine(tf.keras.optimizers.schedules.LearningRateSchedule):
    def __init__(self, peak, warmup_steps, total_steps):
        self.peak = peak
        self.warmup_steps = warmup_steps
        self.total_steps = total_steps

    def __call__(self, step):
        step = tf.cast(step, tf.float32)
        warm = self.peak * step / self.warmup_steps
        progress = (step - self.warmup_steps) / max(1, self.total_steps - self.warmup_steps)
        cosine = 0.5 * self.peak * (1.0 + tf.cos(3.14159265 * tf.minimum(progress, 1.0)))
        return tf.where(step < self.warmup_steps, warm, cosine)


def warmup_schedule(peak=1e-3, warmup_steps=1000, total_steps=100000):
    return WarmupCosine(peak, warmup_steps, total_steps)
''',
    "trainer/distribute.py": '''\
"""Which strategy the trainer runs under."""
import os

import tensorflow as tf


def make_strategy():
    if os.environ.get("TPU_NAME"):
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver(os.environ["TPU_NAME"])
        tf.config.experimental_connect_to_cluster(resolver)
        tf.tpu.experimental.initialize_tpu_system(resolver)
        return tf.distribute.TPUStrategy(resolver)
    if len(tf.config.list_physical_devices("GPU")) > 1:
        return tf.distribute.MirroredStrategy()
    return tf.distribute.get_strategy()
''',
    "trainer/optimizer.py": '''\
"""The optimizer and its schedule."""
import tensorflow as tf

from proj.trainer.schedule import warmup_schedule
from proj.utils.config import TrainConfig


def make_optimizer(config=None):
    config = config or TrainConfig()
    schedule = warmup_schedule(config.learning_rate, config.warmup_steps)
    return tf.keras.optimizers.Adam(schedule, clipnorm=1.0)
''',
    "data/pipeline.py": '''\
"""The input pipeline: records to batches."""
import functools

import tensorflow as tf

from proj.data.augment import augment
from proj.utils.io import parse_record


def records(pattern, width, batch_size, training=True):
    files = tf.data.Dataset.list_files(pattern, shuffle=training)
    ds = files.interleave(tf.data.TFRecordDataset, num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.map(functools.partial(parse_record, width=width), num_parallel_calls=tf.data.AUTOTUNE)
    if training:
        ds = ds.map(augment, num_parallel_calls=tf.data.AUTOTUNE).shuffle(8192)
    return ds.batch(batch_size, drop_remainder=training).prefetch(tf.data.AUTOTUNE)
''',
    "data/augment.py": '''\
"""Augmentations of feature vectors."""
import tensorflow as tf


def augment(features, labels):
    noise = tf.random.normal(tf.shape(features), stddev=0.01)
    scale = tf.random.uniform([], 0.9, 1.1)
    return features * scale + noise, labels
''',
}

_INITS = {
    "__init__.py": '"""A TF/Keras project as the server benchmark edits it."""\n',
    "layers/__init__.py": "".join(f"from proj.layers.{m} import {c}\n" for m, c, *_ in _LAYERS),
    "models/__init__.py": "".join(f"from proj.models.{m} import {c}\n" for m, c, *_ in _MODELS),
    "trainer/__init__.py": "from proj.trainer.loop import train\n",
    "utils/__init__.py": "from proj.utils.metrics import Counter, Meter\n",
    "data/__init__.py": "from proj.data.pipeline import records\n",
}


def modules() -> dict[str, str]:
    """The 39 modules besides the training file, by path relative to the workspace."""
    out = {f"{PACKAGE}/{k}": v for k, v in {**_INITS, **_FILES}.items()}
    out[f"{PACKAGE}/layers/base.py"] = _BASE
    for i, (module, name, doc, activation, helper) in enumerate(_LAYERS):
        out[f"{PACKAGE}/layers/{module}.py"] = _LAYER.format(
            name=name, doc=doc, activation=activation, helper=helper, units=32 * (1 + i % 4),
            short=module)
    for module, name, doc, first, second in _MODELS:
        classes = dict((m, c) for m, c, *_ in _LAYERS)
        out[f"{PACKAGE}/models/{module}.py"] = _MODEL.format(
            name=name, doc=doc, first=first, First=classes[first], second=second,
            Second=classes[second], short=module)
    return out


def write_workspace(root: Path) -> Path:
    """The 40 files under `root`; returns the training file's path."""
    files = modules()
    files[TRAIN] = train_text(0)
    assert len(files) == 40, len(files)
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root / TRAIN
