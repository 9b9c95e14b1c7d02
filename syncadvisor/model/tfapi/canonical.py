"""The canonical spelling of qualified names (tf.keras -> keras or tf_keras, aliases)."""
from __future__ import annotations

from typing import Tuple

from .versions import KERAS3_FROM_TENSORFLOW
from .apis import (KERAS2_PREFIX, KERAS3_PREFIX)


# Prefix rewrites applied to every resolved qualified name (longest first).
_PREFIX_REWRITES_COMMON = (
    ("tensorflow.compat.v2.", "tensorflow."),
    ("tensorflow._api.v2.compat.v1.", "tensorflow.compat.v1."),
    ("tensorflow._api.v2.", "tensorflow."),
    ("tensorflow.python.keras.", "tf_keras."),
    ("tf_keras.src.", "tf_keras."),
)


def prefix_rewrites(tf_keras_is_keras3: bool, keras_is_keras3: bool = True
                    ) -> Tuple[Tuple[str, str], ...]:
    """Rewrites for this run; `tf.keras` is Keras 3 from TensorFlow 2.16 on, and the
    `keras` package is Keras 2 where the project installs keras 2.x (`keras.src.` too:
    keras 2.13-2.15 keep their code there, as tf_keras does)."""
    keras = "keras." if tf_keras_is_keras3 else "tf_keras."
    package = () if keras_is_keras3 else ((KERAS3_PREFIX, KERAS2_PREFIX),)
    return package + _PREFIX_REWRITES_COMMON + (
        ("tensorflow.keras.", keras),
        ("tensorflow.compat.v1.keras.", keras),
    )


def tf_keras_is_keras3(target_tensorflow: Tuple[int, int], keras: str) -> bool:
    if keras == "2":
        return False
    if keras == "3":
        return True
    return target_tensorflow >= KERAS3_FROM_TENSORFLOW


def keras_is_keras3(target_tensorflow: Tuple[int, int], keras_package: str) -> bool:
    """Whether the `keras` package is Keras 3: as the project's keras pin says, else the
    keras that TensorFlow itself requires (keras 2.x up to TensorFlow 2.15)."""
    if keras_package in ("2", "3"):
        return keras_package == "3"
    return target_tensorflow >= KERAS3_FROM_TENSORFLOW
