"""Released TensorFlow and Keras versions: what a project's declared range can resolve to."""
from __future__ import annotations

from typing import Tuple


# TensorFlow 2.16 made tf.keras Keras 3 and requires keras>=3.0 (2.6-2.15 require keras
# 2.x of their own minor).
KERAS3_FROM_TENSORFLOW = (2, 16)
# The distributions that install TensorFlow's `tensorflow` package (names normalised as
# PEP 503 does), and those of Keras.
TENSORFLOW_DISTRIBUTIONS = frozenset({"tensorflow", "tensorflow-cpu", "tensorflow-gpu",
                                      "tensorflow-macos", "tensorflow-intel"})
KERAS_DISTRIBUTION = "keras"
TF_KERAS_DISTRIBUTION = "tf-keras"
# The import names of the Keras packages, whose global state (`backend.clear_session()`,
# `utils.set_random_seed`) the profiler resets between runs of a program.
KERAS_MODULES = ("keras", "tf_keras")
# The Keras model methods whose test or predict function runs `strategy.run` without being a
# training step (`fit`'s validation calls `evaluate`): the profiler does not count them.
KERAS_EVALUATION_METHODS = frozenset({"evaluate", "predict", "test_on_batch",
                                      "predict_on_batch"})
# A word every one of these distributions' names holds (a quick test of a file's text).
DISTRIBUTION_WORDS = ("tensorflow", "keras")
# Released TensorFlow 2 minors and the last patch of each; a declared range resolves to
# the newest (minor, patch) it allows.
TENSORFLOW_RELEASES: Tuple[Tuple[int, int, int], ...] = (
    (2, 0, 4), (2, 1, 4), (2, 2, 3), (2, 3, 4), (2, 4, 4), (2, 5, 3), (2, 6, 5), (2, 7, 4),
    (2, 8, 4), (2, 9, 3), (2, 10, 1), (2, 11, 1), (2, 12, 1), (2, 13, 1), (2, 14, 1),
    (2, 15, 1), (2, 16, 2), (2, 17, 1), (2, 18, 1), (2, 19, 1), (2, 20, 0), (2, 21, 0))
# TensorFlow 2.16 and later make `tf.keras` tf_keras (Keras 2) where this environment
# variable holds one of these values when `tf.keras` is first loaded (tensorflow/__init__.py
# and python/util/lazy_loader.py read `os.environ`): a project that sets it in `os.environ`
# before it touches `tf.keras` gets Keras 2 there. Observed on TF 2.21: `os.environ[...] =`,
# `.setdefault` and `.update` switch it, before `import tensorflow` or after it as long as
# `tf.keras` was not loaded yet (naming it loads nothing; its first attribute read,
# `import tensorflow.keras` and `from tensorflow.keras import` do: engine/legacy.py);
# `os.putenv` does not (`os.environ` never sees it), nor "0".
TENSORFLOW_MODULE = "tensorflow"
LEGACY_KERAS_VARIABLE = "TF_USE_LEGACY_KERAS"
LEGACY_KERAS_VALUES = frozenset({"true", "True", "1"})
ENVIRON_MODULE = "os"
ENVIRON_NAME = "environ"
ENVIRON_SETTERS = frozenset({"setdefault", "update"})
# Released keras minors (2.x: Keras 2, TensorFlow's own from 2.6; 3.x: Keras 3): only the
# major of the newest one a range allows decides anything, so every patch level is 0.
KERAS_RELEASES: Tuple[Tuple[int, int, int], ...] = tuple(
    [(2, minor, 0) for minor in range(0, 16)] + [(3, minor, 0) for minor in range(0, 16)])
