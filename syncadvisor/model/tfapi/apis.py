"""The APIs that create variables, and what each takes and defaults to, per Keras family."""
from __future__ import annotations

from typing import Dict, FrozenSet, Optional, Tuple

from ...records import record
from .enums import (AGG_NONE, AGG_SUM, SYNC_AUTO, SYNC_ON_READ)


TF = "tf"  # TF core: tf.Variable, compat.v1.*
KERAS2 = "keras2"  # tf_keras (and tf.keras before TF 2.16)
KERAS3 = "keras3"  # keras >= 3 (and tf.keras from TF 2.16)
FAMILY_TITLE = {TF: "TensorFlow", KERAS2: "Keras 2 (tf_keras)", KERAS3: "Keras 3"}

# Families whose variables' `assign_add(x)`/`assign_sub(x)` is `assign(v + x)`/`assign(v - x)`:
# Keras 3 (keras/src/backend/common/variables.py). On an ON_WRITE variable in replica context
# every replica then assigns its whole new value, so SUM gives v <- R*v + sum(x) (the value
# grows R-fold each step) and MEAN gives v + mean(x); an accumulator needs ON_READ + SUM,
# which adds locally and sums when read (what Keras 3's own metrics use). Measured by
# `syncadvisor profile --run examples/train_fit.py` and tests/profile/test_run.py.
READ_MODIFY_WRITE_ADDS = frozenset({KERAS3})
# Families whose variables' `assign`, `assign_add` and `assign_sub` convert the value to a
# tensor before the strategy sees it (Keras 3: `assign` starts with `_convert_to_tensor`), so
# a Python number there never reaches SUM's "non-DistributedValues" ValueError.
ASSIGN_CONVERTS_TO_TENSOR = frozenset({KERAS3})

ENUM_VALUES = "enum"  # tf.VariableSynchronization.X members
STRING_VALUES = "keras3-strings"  # "on_read", "sum", ...

TRAINABLE_TRUE = "true"
TRAINABLE_FALSE = "false"
TRAINABLE_NOT_ON_READ = "not-on-read"  # tf.Variable: True unless ON_READ


@record(frozen=True)
class ApiSpec:
    """How one variable-creating callable takes its arguments."""

    title: str  # what messages call it
    family: str
    positional: Tuple[str, ...]  # parameter names that can be passed by position
    keyword_only: FrozenSet[str] = frozenset()
    accepts_any_keyword: bool = False  # **kwargs
    values: str = ENUM_VALUES
    # What the variable gets when the argument is not written (or cannot be).
    sync_default: Optional[str] = SYNC_AUTO
    agg_default: Optional[str] = AGG_NONE
    sync_forced: Optional[str] = None  # e.g. Keras 3 metric variables are always ON_READ
    trainable_default: str = TRAINABLE_NOT_ON_READ
    has_trainable: bool = True
    # tf_keras add_weight refuses ON_READ + trainable=True with a ValueError.
    on_read_trainable_raises: bool = False
    # get_variable converts int/None values before the strategy sees them.
    converts_values: bool = False
    initial_value_param: Optional[str] = None
    dtype_param: Optional[str] = "dtype"
    initializer_param: Optional[str] = None

    def parameters(self) -> FrozenSet[str]:
        return frozenset(self.positional) | self.keyword_only

    def has_parameter(self, name: str) -> bool:
        return name in self.positional or name in self.keyword_only

    def position_of(self, name: str) -> Optional[int]:
        return self.positional.index(name) if name in self.positional else None


TF_VARIABLE = ApiSpec(
    "tf.Variable",
    TF,
    ("initial_value", "trainable", "validate_shape", "caching_device", "name", "variable_def",
     "dtype", "import_scope", "constraint", "synchronization", "aggregation", "shape",
     "experimental_enable_variable_lifting"),
    initial_value_param="initial_value",
)
TF_V1_VARIABLE = ApiSpec(
    "tf.compat.v1.Variable",
    TF,
    ("initial_value", "trainable", "collections", "validate_shape", "caching_device", "name",
     "variable_def", "dtype", "expected_shape", "import_scope", "constraint", "use_resource",
     "synchronization", "aggregation", "shape"),
    initial_value_param="initial_value",
)
TF_RESOURCE_VARIABLE = ApiSpec(
    "ResourceVariable",
    TF,
    ("initial_value", "trainable", "collections", "validate_shape", "caching_device", "name",
     "dtype", "variable_def", "import_scope", "constraint", "distribute_strategy",
     "synchronization", "aggregation", "shape", "handle", "experimental_enable_variable_lifting"),
    initial_value_param="initial_value",
)
_GET_VARIABLE_PARAMS = (
    "name", "shape", "dtype", "initializer", "regularizer", "trainable", "collections",
    "caching_device", "partitioner", "validate_shape", "use_resource", "custom_getter",
    "constraint", "synchronization", "aggregation",
)
TF_GET_VARIABLE = ApiSpec(
    "tf.compat.v1.get_variable", TF, _GET_VARIABLE_PARAMS, converts_values=True,
    initializer_param="initializer",
)
TF_GET_LOCAL_VARIABLE = ApiSpec(
    "tf.compat.v1.get_local_variable", TF, _GET_VARIABLE_PARAMS, converts_values=True,
    trainable_default=TRAINABLE_FALSE, initializer_param="initializer",
)

KERAS2_LAYER_ADD_WEIGHT = ApiSpec(
    "Layer.add_weight (tf_keras)",
    KERAS2,
    ("name", "shape", "dtype", "initializer", "regularizer", "trainable", "constraint",
     "use_resource", "synchronization", "aggregation"),
    accepts_any_keyword=True,
    on_read_trainable_raises=True,
    initializer_param="initializer",
)
KERAS2_METRIC_ADD_WEIGHT = ApiSpec(
    "Metric.add_weight (tf_keras)",
    KERAS2,
    ("name", "shape", "aggregation", "synchronization", "initializer", "dtype"),
    sync_default=SYNC_ON_READ,
    agg_default=AGG_SUM,
    trainable_default=TRAINABLE_FALSE,
    has_trainable=False,
    initializer_param="initializer",
)
KERAS2_OPTIMIZER_ADD_WEIGHT = ApiSpec(
    "Optimizer.add_weight (tf_keras legacy)",
    KERAS2,
    ("name", "shape", "dtype", "initializer", "trainable", "synchronization", "aggregation"),
    on_read_trainable_raises=True,
    initializer_param="initializer",
)
KERAS3_VARIABLE = ApiSpec(
    "keras.Variable",
    KERAS3,
    ("initializer", "shape", "dtype", "trainable", "autocast", "aggregation",
     "synchronization", "name", "layout"),
    accepts_any_keyword=True,
    values=STRING_VALUES,
    sync_default=SYNC_AUTO,
    trainable_default=TRAINABLE_TRUE,
    initial_value_param="initializer",
    initializer_param="initializer",
)
KERAS3_LAYER_ADD_WEIGHT = ApiSpec(
    "Layer.add_weight (Keras 3)",
    KERAS3,
    ("shape", "initializer", "dtype"),
    keyword_only=frozenset({"trainable", "autocast", "regularizer", "constraint", "aggregation",
                            "overwrite_with_gradient", "name"}),
    values=STRING_VALUES,
    trainable_default=TRAINABLE_TRUE,
    initializer_param="initializer",
)
KERAS3_METRIC_ADD_VARIABLE = ApiSpec(
    "Metric.add_variable (Keras 3)",
    KERAS3,
    ("shape", "initializer", "dtype", "aggregation", "name"),
    values=STRING_VALUES,
    sync_forced=SYNC_ON_READ,
    agg_default=AGG_SUM,
    trainable_default=TRAINABLE_FALSE,
    has_trainable=False,
    initializer_param="initializer",
)
KERAS3_METRIC_ADD_WEIGHT = ApiSpec(
    "Metric.add_weight (Keras 3)",
    KERAS3,
    ("shape", "initializer", "dtype", "name"),
    values=STRING_VALUES,
    sync_forced=SYNC_ON_READ,
    agg_default=AGG_SUM,  # it calls add_variable, whose default is "sum"
    trainable_default=TRAINABLE_FALSE,
    has_trainable=False,
    initializer_param="initializer",
)
KERAS3_OPTIMIZER_ADD_VARIABLE = ApiSpec(
    "Optimizer.add_variable (Keras 3)",
    KERAS3,
    ("shape", "initializer", "dtype", "aggregation", "layout", "name"),
    values=STRING_VALUES,
    trainable_default=TRAINABLE_FALSE,
    has_trainable=False,
    initializer_param="initializer",
)
# Keras 3 `Layer.add_variable`: `add_weight` by position, without `aggregation`
# (keras/src/layers/layer.py).
KERAS3_LAYER_ADD_VARIABLE = ApiSpec(
    "Layer.add_variable (Keras 3)",
    KERAS3,
    ("shape", "initializer", "dtype", "trainable", "autocast", "regularizer", "constraint",
     "name"),
    values=STRING_VALUES,
    trainable_default=TRAINABLE_TRUE,
    initializer_param="initializer",
)
# Keras 3 `Optimizer.add_variable_from_reference`: `add_variable` with the reference's
# shape and dtype and the default aggregation "none" (keras/src/optimizers/base_optimizer.py).
KERAS3_OPTIMIZER_ADD_VARIABLE_FROM_REFERENCE = ApiSpec(
    "Optimizer.add_variable_from_reference (Keras 3)",
    KERAS3,
    ("reference_variable", "name", "initializer"),
    values=STRING_VALUES,
    trainable_default=TRAINABLE_FALSE,
    has_trainable=False,
    dtype_param=None,
    initializer_param="initializer",
)
# tf_keras optimizers make a plain `tf.Variable(..., trainable=False)`: AUTO and NONE, no
# parameter for either. The optimizer of tf_keras.optimizers (optimizer.py):
KERAS2_OPTIMIZER_ADD_VARIABLE = ApiSpec(
    "Optimizer.add_variable (tf_keras)",
    KERAS2,
    ("shape", "dtype", "initializer", "name"),
    trainable_default=TRAINABLE_FALSE,
    has_trainable=False,
    initializer_param="initializer",
)
KERAS2_OPTIMIZER_ADD_VARIABLE_FROM_REFERENCE = ApiSpec(
    "Optimizer.add_variable_from_reference (tf_keras)",
    KERAS2,
    ("model_variable", "variable_name", "shape", "initial_value"),
    trainable_default=TRAINABLE_FALSE,
    has_trainable=False,
    dtype_param=None,
    initial_value_param="initial_value",
)
# ... and the legacy one (tf_keras.optimizers.legacy, optimizer_v2.py).
KERAS2_OPTIMIZER_ADD_SLOT = ApiSpec(
    "Optimizer.add_slot (tf_keras legacy)",
    KERAS2,
    ("var", "slot_name", "initializer", "shape"),
    trainable_default=TRAINABLE_FALSE,
    has_trainable=False,
    dtype_param=None,
    initializer_param="initializer",
)


# Variable-creating functions and classes, by canonical qualified name.
FUNCTION_APIS: Dict[str, ApiSpec] = {
    "tensorflow.Variable": TF_VARIABLE,
    "tensorflow.python.ops.variables.Variable": TF_VARIABLE,
    "tensorflow.compat.v1.Variable": TF_V1_VARIABLE,
    "tensorflow.python.ops.variable_v1.VariableV1": TF_V1_VARIABLE,
    "tensorflow.python.ops.variables.VariableV1": TF_V1_VARIABLE,
    "tensorflow.compat.v1.ResourceVariable": TF_RESOURCE_VARIABLE,
    "tensorflow.python.ops.resource_variable_ops.ResourceVariable": TF_RESOURCE_VARIABLE,
    "tensorflow.compat.v1.get_variable": TF_GET_VARIABLE,
    "tensorflow.get_variable": TF_GET_VARIABLE,  # TF 1.x spelling
    "tensorflow.python.ops.variable_scope.get_variable": TF_GET_VARIABLE,
    "tensorflow.compat.v1.get_local_variable": TF_GET_LOCAL_VARIABLE,
    "tensorflow.get_local_variable": TF_GET_LOCAL_VARIABLE,
    "tensorflow.python.ops.variable_scope.get_local_variable": TF_GET_LOCAL_VARIABLE,
    "keras.Variable": KERAS3_VARIABLE,
    "keras.src.backend.Variable": KERAS3_VARIABLE,
    "keras.src.backend.KerasVariable": KERAS3_VARIABLE,
    "keras.src.backend.tensorflow.Variable": KERAS3_VARIABLE,
    "keras.src.backend.tensorflow.core.Variable": KERAS3_VARIABLE,
    "keras.src.backend.common.KerasVariable": KERAS3_VARIABLE,
    "keras.src.backend.common.variables.Variable": KERAS3_VARIABLE,
    "keras.src.backend.common.variables.KerasVariable": KERAS3_VARIABLE,
}

# What `self.<method>(...)` creates, by the Keras family and kind of the class.
LAYER = "layer"
METRIC = "metric"
# What a Keras metric's `result()`, called in replica context (in `strategy.run`, a
# `train_step`), reports of a NONE-aggregation variable the metric holds whose copies
# diverged under a mirroring strategy (TF 2.21, run: tests/runtime/snippets/
# TFS201_tf_keras_metric_state_result.py and TFS201_keras3_metric_state_result.py):
# tf_keras wraps `result` in a `merge_call`, so it is computed once, in cross-replica
# context, from replica 0's copy, and every replica gets that; Keras 3 computes it in each
# replica, from the replica's own copy.
METRIC_RESULT_OF_DIVERGED = {
    KERAS2: ("its copies silently diverge: reads and checkpoints see replica 0's copy, and "
             "whatever the metric's `result()` computes from it, tf_keras computes once, in "
             "cross-replica context (`merge_call`), from replica 0's copy and hands to every "
             "replica"),
    KERAS3: ("its copies silently diverge: whatever the metric's `result()` computes from it, "
             "Keras 3 computes in each replica from that replica's own copy, while "
             "cross-replica reads and checkpoints see replica 0's"),
}
OPTIMIZER = "optimizer"
METHOD_APIS: Dict[Tuple[str, str, str], ApiSpec] = {
    (KERAS2, LAYER, "add_weight"): KERAS2_LAYER_ADD_WEIGHT,
    (KERAS2, LAYER, "add_variable"): KERAS2_LAYER_ADD_WEIGHT,  # deprecated alias
    (KERAS2, METRIC, "add_weight"): KERAS2_METRIC_ADD_WEIGHT,
    (KERAS2, OPTIMIZER, "add_weight"): KERAS2_OPTIMIZER_ADD_WEIGHT,
    (KERAS3, LAYER, "add_weight"): KERAS3_LAYER_ADD_WEIGHT,
    (KERAS3, METRIC, "add_weight"): KERAS3_METRIC_ADD_WEIGHT,
    (KERAS3, METRIC, "add_variable"): KERAS3_METRIC_ADD_VARIABLE,
    (KERAS3, OPTIMIZER, "add_variable"): KERAS3_OPTIMIZER_ADD_VARIABLE,
    (KERAS3, LAYER, "add_variable"): KERAS3_LAYER_ADD_VARIABLE,
    (KERAS3, OPTIMIZER, "add_variable_from_reference"):
        KERAS3_OPTIMIZER_ADD_VARIABLE_FROM_REFERENCE,
    (KERAS2, OPTIMIZER, "add_variable"): KERAS2_OPTIMIZER_ADD_VARIABLE,
    (KERAS2, OPTIMIZER, "add_variable_from_reference"):
        KERAS2_OPTIMIZER_ADD_VARIABLE_FROM_REFERENCE,
    (KERAS2, OPTIMIZER, "add_slot"): KERAS2_OPTIMIZER_ADD_SLOT,
}
CREATION_METHODS = frozenset(m for _, _, m in METHOD_APIS)

# What a creating call's own arguments say about the Keras it was written for, where the
# project leaves the Keras major open (`Target.keras_settled`). Keyword arguments tf_keras'
# `Layer.add_weight` takes (its parameters and allowed **kwargs) that Keras 3's refuses with
# TypeError (keras/src/layers/layer.py: no **kwargs) -- not `synchronization`, the one the
# rules judge -- and the one Keras 3 takes that tf_keras refuses ("Unknown keyword
# argument"). Read with inspect.signature on Keras 3.15 and tf_keras 2.21.
KERAS2_ONLY_KEYWORDS = frozenset({
    "experimental_autocast", "use_resource", "caching_device", "partitioner", "getter",
    "collections", "experimental_enable_variable_lifting"})
KERAS3_ONLY_KEYWORDS = frozenset({"overwrite_with_gradient"})
# Keras 3 APIs whose first positional parameter is the shape where tf_keras' is the name:
# a string there is a Keras 2 call (Keras 3 raises "`name` must be passed as a keyword
# argument").
SHAPE_FIRST_APIS = frozenset({KERAS3_LAYER_ADD_WEIGHT.title, KERAS3_LAYER_ADD_VARIABLE.title,
                              KERAS3_METRIC_ADD_WEIGHT.title})
# APIs only one Keras has (Keras 2 has no `keras.Variable`).
FAMILY_ONLY_APIS = frozenset({KERAS3_VARIABLE.title})

# Last names that make a call worth recording while walking the tree.
CREATION_CALLEE_NAMES = frozenset(
    {q.rsplit(".", 1)[1] for q in FUNCTION_APIS} | CREATION_METHODS
)

# The top-level module of each Keras family, after canonicalisation.
KERAS2_MODULE = "tf_keras"
KERAS3_MODULE = "keras"
# A file that imports one of these modules (or anything under it) uses that family.
KERAS_IMPORT_FAMILIES = ((KERAS2_MODULE, KERAS2), (KERAS3_MODULE, KERAS3))
# Module prefixes of each Keras family, after canonicalisation.
KERAS2_PREFIX = KERAS2_MODULE + "."
KERAS3_PREFIX = KERAS3_MODULE + "."
KERAS_FAMILY_PREFIXES = ((KERAS2_PREFIX, KERAS2), (KERAS3_PREFIX, KERAS3))
# tf_keras' own metric classes: their weights are ON_READ + SUM, their `update_state`
# assigns with `assign_add`.
KERAS2_METRICS_PREFIX = "tf_keras.metrics."
# Class-kind by a segment of the base class's qualified name.
KERAS_KIND_SEGMENTS = (("metrics", METRIC), ("optimizers", OPTIMIZER))
# The kind of an instance of a Keras class (`tf_keras.layers.Dense(3)`), by a segment of
# the class's qualified name; a class under none of them (an initializer, a callback) has
# no `add_weight` of these kinds.
KERAS_INSTANCE_KIND_SEGMENTS = KERAS_KIND_SEGMENTS + (("layers", LAYER), ("models", LAYER))
