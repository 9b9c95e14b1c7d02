"""The notebook the server benchmark edits: a training tutorial as a notebook holds it,
`CODE_CELLS` code cells (markdown between them) of a few lines each, as the
tf.distribute tutorials have them, with IPython's syntax where notebooks use it.

Cell 2 makes the strategy; the last code cell makes a variable in its scope that a
MirroredStrategy refuses (TFS101), so the notebook's one finding needs its cells linked.
The cell that is edited is the learning-rate cell (`EDITED`, 0-based in `cells()`).
"""
from __future__ import annotations

from typing import List, Tuple

CODE_CELLS = 100
MARKDOWN_EVERY = 5  # a markdown cell after every 5th code cell
EDITED = 2

_HEAD = [
    "%matplotlib inline\n!pip install -q tensorflow-datasets\nimport functools\nimport os\n\n"
    "import numpy as np\nimport tensorflow as tf\n",
    "strategy = tf.distribute.MirroredStrategy()\n"
    "print(f'replicas: {strategy.num_replicas_in_sync}')\n"
    "BATCH = 64 * strategy.num_replicas_in_sync\n",
    "LEARNING_RATE = 0.001\n",
    "class Scale(tf.keras.layers.Layer):\n"
    "    def build(self, shape):\n"
    "        self.scale = self.add_weight(name=\"scale\", shape=(shape[-1],),\n"
    "                                     initializer=\"ones\")\n"
    "        self.calls = self.add_weight(name=\"calls\", shape=(), trainable=False,\n"
    "                                     dtype=tf.int64, initializer=\"zeros\")\n\n"
    "    def call(self, x):\n"
    "        self.calls.assign_add(1)\n"
    "        return x * self.scale\n",
    "def make_model():\n"
    "    return tf.keras.Sequential([tf.keras.layers.Dense(32), Scale(),\n"
    "                                tf.keras.layers.Dense(1)])\n",
    "with strategy.scope():\n"
    "    model = make_model()\n"
    "    optimizer = tf.keras.optimizers.Adam(LEARNING_RATE)\n"
    "    loss_total = tf.Variable(0.0, synchronization=tf.VariableSynchronization.ON_READ,\n"
    "                             aggregation=tf.VariableAggregation.SUM)\n",
    "@tf.function\n"
    "def train_step(inputs):\n"
    "    features, labels = inputs\n\n"
    "    def step(features, labels):\n"
    "        with tf.GradientTape() as tape:\n"
    "            loss = tf.reduce_mean(tf.square(model(features) - labels))\n"
    "        grads = tape.gradient(loss, model.trainable_variables)\n"
    "        optimizer.apply_gradients(zip(grads, model.trainable_variables))\n"
    "        loss_total.assign_add(loss)\n"
    "        return loss\n\n"
    "    return strategy.run(step, args=(features, labels))\n",
]

# The cells in between, in turn: a preprocessing function, its dataset, a look at it.
_BODY = [
    "def preprocess_{i}(features, labels):\n"
    "    \"\"\"Scale and shift the inputs of batch kind {i}.\"\"\"\n"
    "    features = tf.cast(features, tf.float32) / 255.0\n"
    "    features = features - tf.reduce_mean(features, axis=0, keepdims=True)\n"
    "    labels = tf.cast(labels, tf.float32)\n"
    "    return features, labels\n",
    "def dataset_{i}(path=os.path.join(\"data\", \"part-{i}\")):\n"
    "    data = np.load(path)\n"
    "    ds = tf.data.Dataset.from_tensor_slices((data[\"x\"], data[\"y\"]))\n"
    "    ds = ds.map(functools.partial(preprocess_{i}), num_parallel_calls=tf.data.AUTOTUNE)\n"
    "    return ds.shuffle(1024).batch(BATCH).prefetch(2)\n",
    "%%time\nds_{i} = strategy.experimental_distribute_dataset(dataset_{i}())\n"
    "for batch in ds_{i}.take(2):\n    train_step(batch)\nprint(loss_total.numpy())\n",
]

_TAIL = ("with strategy.scope():\n"
         "    steps = tf.Variable(0, synchronization=tf.VariableSynchronization.NONE)\n")


def cells() -> List[Tuple[str, str]]:
    """The notebook's cells in order: ("code" or "markdown", text)."""
    code = list(_HEAD)
    i = 0
    while len(code) < CODE_CELLS - 1:
        code.append(_BODY[i % len(_BODY)].format(i=i // len(_BODY)))
        i += 1
    code.append(_TAIL)
    out: List[Tuple[str, str]] = []
    for n, text in enumerate(code, start=1):
        out.append(("code", text))
        if n % MARKDOWN_EVERY == 0 and n < len(code):
            out.append(("markdown", f"## Step {n // MARKDOWN_EVERY}\n\nWhat the cells below do.\n"))
    return out


def learning_rate(edit: int) -> str:
    """The edited cell's text after `edit` edits."""
    return f"LEARNING_RATE = 0.001 * {edit}\n"
