"""TensorFlow and Keras knowledge, as data: one module per kind of fact, read as one
namespace (`tfapi.SYNC_ON_READ`, `tfapi.STRATEGY_CONSTRUCTORS`).

Every fact here was observed on TensorFlow 2.21, Keras 3.15 and tf_keras 2.21
(see ../shared/research/tf-2.21-sync-semantics.md). Rules read these tables;
they never spell a TensorFlow name themselves.
"""
from .enums import *  # noqa: F401,F403
from .versions import *  # noqa: F401,F403
from .apis import *  # noqa: F401,F403
from .dtypes import *  # noqa: F401,F403
from .strategies import *  # noqa: F401,F403
from .canonical import *  # noqa: F401,F403
from .usage import *  # noqa: F401,F403
