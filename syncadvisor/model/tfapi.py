"""TensorFlow and Keras knowledge, as data.

Every fact here was observed on TensorFlow 2.21, Keras 3.15 and tf_keras 2.21
(see ../shared/research/tf-2.21-sync-semantics.md). Rules read these tables;
they never spell a TensorFlow name themselves.
"""
from __future__ import annotations

from ..records import field, record
from typing import Dict, FrozenSet, Mapping, Optional, Tuple

# --- the enums -------------------------------------------------------------

SYNC = "synchronization"
AGG = "aggregation"

# The enums' members. NONE is a member of both: a constant's prefix says which enum it
# means, and its value is the member's name either way (models hold these strings, and
# are pickled and cached).
SYNC_AUTO = "AUTO"
SYNC_NONE = "NONE"
SYNC_ON_WRITE = "ON_WRITE"
SYNC_ON_READ = "ON_READ"
AGG_NONE = "NONE"
AGG_SUM = "SUM"
AGG_MEAN = "MEAN"
AGG_ONLY_FIRST_REPLICA = "ONLY_FIRST_REPLICA"
# tf.compat.v1.VariableAggregation's TF 1 name for ONLY_FIRST_REPLICA.
AGG_ONLY_FIRST_TOWER = "ONLY_FIRST_TOWER"

SYNC_MEMBERS: Tuple[str, ...] = (SYNC_AUTO, SYNC_NONE, SYNC_ON_WRITE, SYNC_ON_READ)
AGG_MEMBERS: Tuple[str, ...] = (AGG_NONE, AGG_SUM, AGG_MEAN, AGG_ONLY_FIRST_REPLICA)
MEMBERS = {SYNC: SYNC_MEMBERS, AGG: AGG_MEMBERS}

# Plain enum.Enum values; tf.Variable converts valid ints without a strategy.
MEMBER_BY_INT = {
    SYNC: {0: SYNC_AUTO, 1: SYNC_NONE, 2: SYNC_ON_WRITE, 3: SYNC_ON_READ},
    AGG: {0: AGG_NONE, 1: AGG_SUM, 2: AGG_MEAN, 3: AGG_ONLY_FIRST_REPLICA},
}

# Keras 3 spells the members as lowercase strings.
KERAS3_STRING = {
    SYNC: {"auto": SYNC_AUTO, "none": SYNC_NONE, "on_write": SYNC_ON_WRITE,
           "on_read": SYNC_ON_READ},
    AGG: {"none": AGG_NONE, "sum": AGG_SUM, "mean": AGG_MEAN,
          "only_first_replica": AGG_ONLY_FIRST_REPLICA},
}


@record(frozen=True)
class EnumClass:
    """A TensorFlow enum class: which setting it spells, and its members."""

    setting: str  # SYNC or AGG
    members: Tuple[str, ...]
    # Deprecated spellings that exist on this class only: name -> member.
    aliases: Mapping[str, str] = field(default_factory=dict)
    # Well-known wrong spellings: name -> (member, fix is safe).
    known_mistakes: Mapping[str, str] = field(default_factory=dict)


_SYNC_ENUM = EnumClass(SYNC, SYNC_MEMBERS, known_mistakes={"DEFAULT": SYNC_AUTO})
_AGG_V2_ENUM = EnumClass(
    AGG, AGG_MEMBERS,
    known_mistakes={AGG_ONLY_FIRST_TOWER: AGG_ONLY_FIRST_REPLICA, "DEFAULT": AGG_NONE}
)
# tf.compat.v1.VariableAggregation still has ONLY_FIRST_TOWER (== ONLY_FIRST_REPLICA).
_AGG_V1_ENUM = EnumClass(
    AGG,
    AGG_MEMBERS,
    aliases={AGG_ONLY_FIRST_TOWER: AGG_ONLY_FIRST_REPLICA},
    known_mistakes={"DEFAULT": AGG_NONE},
)

ENUM_CLASSES: Dict[str, EnumClass] = {
    "tensorflow.VariableSynchronization": _SYNC_ENUM,
    "tensorflow.compat.v1.VariableSynchronization": _SYNC_ENUM,
    "tensorflow.python.ops.variables.VariableSynchronization": _SYNC_ENUM,
    "tensorflow.VariableAggregation": _AGG_V2_ENUM,
    "tensorflow.python.ops.variables.VariableAggregationV2": _AGG_V2_ENUM,
    "tensorflow.compat.v1.VariableAggregation": _AGG_V1_ENUM,
    "tensorflow.python.ops.variables.VariableAggregation": _AGG_V1_ENUM,
}

# The public spelling a fix writes, relative to the `tensorflow` module.
ENUM_PUBLIC_PATH = {SYNC: "VariableSynchronization", AGG: "VariableAggregation"}
# How messages name each enum class.
ENUM_TITLE = {setting: "tf." + path for setting, path in ENUM_PUBLIC_PATH.items()}
# Modules a fix may spell an enum member through (`<their local name>.<ENUM_PUBLIC_PATH>`),
# in order of preference, where the file has a module-level name for one.
ENUM_MODULES = ("tensorflow", "tensorflow.compat.v1", "tensorflow.compat.v2")
# What a fix inserts where the file has no name for any of them, and the name it binds.
TENSORFLOW_IMPORT = "import tensorflow as tf"
TENSORFLOW_IMPORTED_AS = "tf"


# --- variable-creating APIs ------------------------------------------------

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


# --- dtypes ----------------------------------------------------------------

INTEGER_DTYPES = frozenset(
    {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool",
     "qint8", "qint16", "qint32", "quint8", "quint16"}
)
FLOAT_DTYPES = frozenset({"float16", "bfloat16", "float32", "float64", "half", "double",
                          "complex64", "complex128"})
# Modules whose attributes name dtypes: tf.int32, tf.dtypes.int32, np.int32.
DTYPE_MODULES = ("tensorflow.", "tensorflow.dtypes.", "tensorflow.compat.v1.", "numpy.",
                 "keras.ops.", "tensorflow.experimental.numpy.")
# Tensor constructors whose dtype says the variable's dtype:
# qualified name -> (positional index of dtype, keyword).
TENSOR_FACTORIES: Dict[str, int] = {
    "tensorflow.zeros": 1,
    "tensorflow.ones": 1,
    "tensorflow.constant": 1,
    "tensorflow.convert_to_tensor": 1,
    "tensorflow.cast": 1,
    "tensorflow.fill": -1,  # dtype follows the value
    "tensorflow.zeros_like": 1,
    "tensorflow.ones_like": 1,
    "tensorflow.range": -1,
    "numpy.zeros": 1,
    "numpy.ones": 1,
    "numpy.array": 1,
    "numpy.asarray": 1,
    "keras.ops.zeros": 1,
    "keras.ops.ones": 1,
}
# Tensor constructors whose dtype, when not given, is a literal value's: qualified
# name -> the argument that holds the value (0: the first, -1: the last).
VALUE_DTYPE_FACTORIES: Dict[str, int] = {
    "tensorflow.constant": 0,
    "tensorflow.convert_to_tensor": 0,
    "numpy.array": 0,
    "numpy.asarray": 0,
    "tensorflow.fill": -1,  # fill(dims, value)
    "tensorflow.range": 0,
}
# Tensor constructors whose dtype, when not given, is float32.
FLOAT32_FACTORIES = frozenset({"tensorflow.zeros", "tensorflow.ones", "keras.ops.zeros",
                               "keras.ops.ones"})
# Tensor constructors whose result is the same tensor on every replica when their
# arguments are literals or names.
CONSTANT_FACTORIES = frozenset({"tensorflow.constant", "tensorflow.ones", "tensorflow.zeros",
                                "tensorflow.fill", "tensorflow.cast"})
# Tensor constructors that take a shape: qualified name -> position of the shape argument.
SHAPE_FACTORIES: Dict[str, int] = {
    "tensorflow.zeros": 0, "tensorflow.ones": 0, "tensorflow.fill": 0, "tensorflow.empty": 0,
    "tensorflow.random.normal": 0, "tensorflow.random.uniform": 0,
    "tensorflow.random.truncated_normal": 0, "tensorflow.compat.v1.random_normal": 0,
    "tensorflow.compat.v1.zeros": 0, "tensorflow.compat.v1.ones": 0,
    "numpy.zeros": 0, "numpy.ones": 0, "numpy.full": 0, "numpy.empty": 0,
    "keras.ops.zeros": 0, "keras.ops.ones": 0, "keras.ops.full": 0,
}
# Tensor constructors whose shape is that of their first argument, a (nested) literal.
LITERAL_FACTORIES = frozenset({"tensorflow.constant", "tensorflow.convert_to_tensor",
                               "numpy.array", "numpy.asarray", "keras.ops.array"})


# --- strategies ------------------------------------------------------------

MIRRORED = "MirroredStrategy"
MULTI_WORKER = "MultiWorkerMirroredStrategy"
TPU = "TPUStrategy"
CENTRAL_STORAGE = "CentralStorageStrategy"
PARAMETER_SERVER = "ParameterServerStrategy"
ONE_DEVICE = "OneDeviceStrategy"
ANY_STRATEGY = "an unidentified strategy"  # a scope whose strategy we cannot name


@record(frozen=True)
class StrategyTraits:
    """What a strategy does with variables (research §3.1, §3.3)."""

    # AUTO becomes ON_WRITE; NONE sync, MEAN on ints, int/None values all raise.
    mirrors: bool
    # One aggregating copy: ON_READ is ignored, NONE-aggregation replica updates raise.
    aggregates_on_write: bool
    multi_replica: bool


STRATEGY_TRAITS: Dict[str, StrategyTraits] = {
    MIRRORED: StrategyTraits(mirrors=True, aggregates_on_write=False, multi_replica=True),
    MULTI_WORKER: StrategyTraits(mirrors=True, aggregates_on_write=False, multi_replica=True),
    TPU: StrategyTraits(mirrors=True, aggregates_on_write=False, multi_replica=True),
    CENTRAL_STORAGE: StrategyTraits(mirrors=False, aggregates_on_write=True, multi_replica=True),
    PARAMETER_SERVER: StrategyTraits(mirrors=False, aggregates_on_write=True, multi_replica=True),
    ONE_DEVICE: StrategyTraits(mirrors=False, aggregates_on_write=False, multi_replica=False),
}
MIRRORING_STRATEGIES = tuple(k for k, t in STRATEGY_TRAITS.items() if t.mirrors)
AGGREGATING_STRATEGIES = tuple(k for k, t in STRATEGY_TRAITS.items() if t.aggregates_on_write)
# `tf.Variable(..., per_worker_variable=True)` under ParameterServerStrategy: one copy per
# worker by design (ps_values.PerWorkerVariable), updated without aggregation.
PER_WORKER_VARIABLE_ARG = "per_worker_variable"


def _strategy_names() -> Dict[str, str]:
    table: Dict[str, str] = {}
    public = {
        "distribute.MirroredStrategy": MIRRORED,
        "distribute.MultiWorkerMirroredStrategy": MULTI_WORKER,
        "distribute.experimental.MultiWorkerMirroredStrategy": MULTI_WORKER,
        "distribute.TPUStrategy": TPU,
        "distribute.experimental.TPUStrategy": TPU,
        "distribute.experimental.CentralStorageStrategy": CENTRAL_STORAGE,
        "distribute.experimental.ParameterServerStrategy": PARAMETER_SERVER,
        "distribute.ParameterServerStrategy": PARAMETER_SERVER,
        "distribute.OneDeviceStrategy": ONE_DEVICE,
    }
    for path, kind in public.items():
        table["tensorflow." + path] = kind
        table["tensorflow.compat.v1." + path] = kind
        table["tensorflow.contrib." + path.replace("experimental.", "")] = kind
    internal = {
        "mirrored_strategy.MirroredStrategy": MIRRORED,
        "mirrored_strategy.MirroredStrategyV1": MIRRORED,
        "collective_all_reduce_strategy.CollectiveAllReduceStrategy": MULTI_WORKER,
        "collective_all_reduce_strategy.CollectiveAllReduceStrategyV1": MULTI_WORKER,
        "tpu_strategy.TPUStrategy": TPU,
        "tpu_strategy.TPUStrategyV2": TPU,
        "central_storage_strategy.CentralStorageStrategy": CENTRAL_STORAGE,
        "parameter_server_strategy_v2.ParameterServerStrategyV2": PARAMETER_SERVER,
        "parameter_server_strategy.ParameterServerStrategyV1": PARAMETER_SERVER,
        "one_device_strategy.OneDeviceStrategy": ONE_DEVICE,
    }
    for path, kind in internal.items():
        table["tensorflow.python.distribute." + path] = kind
    return table


STRATEGY_CONSTRUCTORS: Dict[str, str] = _strategy_names()
# Calls that return "the current strategy": whatever scope they run in.
CURRENT_STRATEGY_CALLS = frozenset(
    {"tensorflow.distribute.get_strategy", "tensorflow.compat.v1.distribute.get_strategy"}
)
# `with tf.variable_creator_scope(creator):` -- every variable created while it is entered
# goes through `creator(next_creator, **kwargs)`, which may rewrite the keyword arguments
# before it calls `next_creator(**kwargs)`. Entered inside a strategy's scope, the
# creator runs before the strategy's own creator, so the strategy sees (and validates)
# what it rewrote; entered outside, it runs after: the strategy has already decided.
VARIABLE_CREATOR_SCOPES = frozenset({
    "tensorflow.variable_creator_scope", "tensorflow.compat.v1.variable_creator_scope",
    "tensorflow.python.ops.variable_scope.variable_creator_scope"})
VARIABLE_CREATOR_SCOPE_NAMES = frozenset(q.rpartition(".")[2] for q in VARIABLE_CREATOR_SCOPES)
# The keyword arguments a creator may rewrite that decide the choice the rules judge:
# the two settings, given enum members, and `trainable`, given a literal.
TRAINABLE = "trainable"
CREATOR_SETTINGS = (SYNC, AGG, TRAINABLE)
# A literal a creator may give `trainable`, as its program holds it: True, False, or None,
# which `tf.Variable` settles after the creators ran (trainable unless ON_READ).
CREATOR_LITERALS: Dict[str, Dict[object, str]] = {
    TRAINABLE: {True: TRAINABLE_TRUE, False: TRAINABLE_FALSE, None: TRAINABLE_NOT_ON_READ}}
# `tf.Variable` (and every Keras API, which ends in it) passes all three to the creators
# whether written or not (AUTO, NONE and None by default): `kwargs.setdefault(...)` in a
# creator never changes them.
CREATOR_KWARGS_ALWAYS_PASSED = frozenset(CREATOR_SETTINGS)
# A strategy's method that enters its scope: a subclass that overrides it may enter a
# variable creator scope there (sonnet's `Replicator.scope`).
STRATEGY_SCOPE_METHOD = "scope"
# A variable creator's program (creators.py): ("set", setting, member) and
# ("if", ((setting, member, equal), ...), then, else).
CREATOR_SET = "set"
CREATOR_IF = "if"


@record(frozen=True)
class LibraryStrategy:
    """A strategy class of a well-known library: the tf.distribute strategy it derives
    from, and the variable creators its `scope()` enters inside that one's (innermost
    first), each as (its name in the library, its program). Known here so that a run
    that does not see the library's code (a pre-commit hook's isolated environment)
    finds what the editor finds."""

    kind: str
    module: str  # where it is defined, for messages
    creators: Tuple[Tuple[str, tuple], ...] = ()


# dm-sonnet 2.0.2, sonnet/src/distribute/replicator.py `replica_local_creator`: a variable
# left at AUTO becomes ON_READ, with ONLY_FIRST_REPLICA where its aggregation is NONE, and
# trainable where `trainable` was left out.
_SONNET_REPLICA_LOCAL = (
    (CREATOR_IF, ((SYNC, SYNC_AUTO, True),),
     ((CREATOR_SET, SYNC, SYNC_ON_READ),
      (CREATOR_IF, ((AGG, AGG_NONE, True),), ((CREATOR_SET, AGG, AGG_ONLY_FIRST_REPLICA),), ()),
      (CREATOR_IF, ((TRAINABLE, TRAINABLE_NOT_ON_READ, True),),
       ((CREATOR_SET, TRAINABLE, TRAINABLE_TRUE),), ())),
     ()),
)
_SONNET_MODULE = "sonnet.src.distribute.replicator"
_REPLICATOR = LibraryStrategy(MIRRORED, _SONNET_MODULE,
                              (("replica_local_creator", _SONNET_REPLICA_LOCAL),))
_TPU_REPLICATOR = LibraryStrategy(TPU, _SONNET_MODULE,
                                  (("replica_local_creator", _SONNET_REPLICA_LOCAL),))
# Qualified name (as a file imports it) -> the strategy. `Replicator` is a
# MirroredStrategy and `TpuReplicator` a TPUStrategy whose `scope()` enters that creator.
LIBRARY_STRATEGIES: Dict[str, LibraryStrategy] = {
    "sonnet.distribute.Replicator": _REPLICATOR,
    _SONNET_MODULE + ".Replicator": _REPLICATOR,
    "sonnet.distribute.TpuReplicator": _TPU_REPLICATOR,
    _SONNET_MODULE + ".TpuReplicator": _TPU_REPLICATOR,
}

# A `.scope()` on a receiver whose name matches this is taken for a strategy
# scope even when the strategy object itself is not visible.
STRATEGY_NAME_HINTS = ("strateg", "distribution")
# Receivers under these prefixes have a `.scope()` that is not tf.distribute's.
NOT_STRATEGY_PREFIXES = ("keras.distribution.",)


# --- canonical names -------------------------------------------------------

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


# --- released versions (what a project's declared range can resolve to) ------

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
KERAS3_MODULE = KERAS_MODULES[0]
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


# --- usage -------------------------------------------------------------------

ASSIGN_METHODS = frozenset({"assign", "assign_add", "assign_sub"})
SCATTER_METHODS = frozenset({
    "scatter_add", "scatter_sub", "scatter_mul", "scatter_div", "scatter_min", "scatter_max",
    "scatter_update", "batch_scatter_update", "scatter_nd_add", "scatter_nd_sub",
    "scatter_nd_update", "scatter_nd_max", "scatter_nd_min",
})
UPDATE_METHODS = ASSIGN_METHODS | SCATTER_METHODS
# Scatter ops a MirroredVariable refuses unless its aggregation is NONE or
# ONLY_FIRST_REPLICA (values.MirroredVariable.scatter_min/max/update); the others
# go through the normal aggregated update.
SCATTER_NEEDS_NONE_AGGREGATION = frozenset({"scatter_min", "scatter_max", "scatter_update"})
# Module functions that update their first argument: tf.compat.v1.assign(ref, value).
UPDATE_FUNCTIONS: Dict[str, str] = {}
for _module in ("tensorflow", "tensorflow.compat.v1", "tensorflow.python.ops.state_ops"):
    for _name in ("assign", "assign_add", "assign_sub", "scatter_add", "scatter_sub",
                  "scatter_update", "scatter_nd_update", "scatter_nd_add", "scatter_mul",
                  "scatter_div", "scatter_min", "scatter_max"):
        UPDATE_FUNCTIONS[f"{_module}.{_name}"] = _name
UPDATE_CALLEE_NAMES = frozenset(UPDATE_METHODS)

# Values that differ between replicas whatever they are computed from: random ops, by a
# word in any part of their dotted name (`tf.random.uniform`, `tf.compat.v1.random_uniform`,
# `tf.keras.backend.random_normal`, `tf.truncated_normal`, `np.random.rand`, dropout,
# `Dataset.shuffle`), and the replica's id.
PER_REPLICA_CALL_WORDS = ("random", "dropout", "truncated_normal", "shuffle")
PER_REPLICA_ATTRIBUTES = frozenset({"replica_id_in_sync_group"})
# Attributes of a tensor that every replica's share of a batch has alike: its dtype and its
# number of dimensions. (Not `shape` as a whole: an uneven last batch gives replicas
# different sizes along axis 0; see SHAPE_*.)
REPLICA_INVARIANT_ATTRIBUTES = frozenset({"dtype", "ndim", "rank", "base_dtype"})
# What gives a tensor's shape: `x.shape`, and calls by their last name (`tf.shape(x)`,
# `keras.ops.shape(x)`, `tf_keras.backend.int_shape(x)`, `x.get_shape()`, `x.shape.as_list()`,
# and transformers' own `shape_list(x)`). Where the batch is one global batch split along
# axis 0 between replicas (Keras `fit`, `experimental_distribute_dataset`), every replica's
# share has the global batch's other dimensions: an index >= 1 of a shape (a padded
# length, a feature count) is the same on every replica; axis 0 is not (an uneven last
# batch). Observed on TF 2.21, MirroredStrategy over 2 CPUs
# (tests/runtime/snippets/TFS201_padded_length_table.py).
SHAPE_ATTRIBUTES = frozenset({"shape"})
SHAPE_CALL_NAMES = frozenset({"shape", "shape_list", "int_shape", "get_shape"})
SHAPE_LIST_METHODS = frozenset({"as_list"})
# Replica-context calls whose result is the same on every replica. (`Strategy.reduce`,
# `StrategyExtended.reduce_to`/`batch_reduce_to` raise RuntimeError in replica context:
# their results reach it only through `merge_call` or outside state.)
REPLICA_INVARIANT_RESULTS = frozenset({"all_reduce", "all_gather", "merge_call"})
# Objects each replica keeps its own state in, by (family, kind): a Keras 3 metric's
# variables are ON_READ, and its `result()` in replica context reads the replica's own
# (tf_keras wraps `result()` in `merge_call`: every replica gets the whole's).
REPLICA_LOCAL_OBJECTS = frozenset({(KERAS3, METRIC)})
# Parameters every replica is handed the same value for: Keras' `training` flag (a
# Python bool, or one tensor for the whole step).
REPLICA_INVARIANT_PARAMETERS = frozenset({"training"})

# Reads that reduce an ON_READ variable in cross-replica context.
READ_METHODS = frozenset({"numpy", "read_value", "value"})
# Calls whose result is a sum of their arguments' terms, or one of them unchanged
# (`tf.add(total, x)`, `tf.add_n([total, x])`, `tf.cast(total + x, dtype)`), by last name:
# `v.assign(tf.add(v, x))` keeps a running sum of `v`.
SUM_PRESERVING_CALL_NAMES = frozenset({"add", "add_n", "cast", "identity"})
# Calls whose result is a statistic that does not add up across replicas (the sum of the
# replicas' maxima is not the maximum), by last name: `tf.maximum`, `tf.reduce_max`,
# `keras.ops.max`, `np.mean`, ...
STATISTIC_CALL_NAMES = frozenset({
    "maximum", "minimum", "reduce_max", "reduce_min", "reduce_mean", "max", "min", "amax",
    "amin", "mean", "average", "median", "reduce_std", "std", "reduce_variance", "var",
})
# ... of them, the means: MEAN aggregation combines those (equal batches), no gather needed.
MEAN_CALL_NAMES = frozenset({"reduce_mean", "mean", "average"})
CHECKPOINT_CLASSES = frozenset({"tensorflow.train.Checkpoint",
                                "tensorflow.compat.v1.train.Checkpoint",
                                "tensorflow.python.checkpoint.checkpoint.Checkpoint"})
SAVE_FUNCTIONS = frozenset({"tensorflow.saved_model.save", "tensorflow.compat.v1.saved_model.save",
                            "keras.saving.save_model", "keras.models.save_model",
                            "tf_keras.models.save_model"})
SAVE_METHODS = frozenset({"save", "save_weights"})
# What saves a `tf.train.Checkpoint` besides `save`: its `write`.
CHECKPOINT_SAVE_METHODS = frozenset({"write"})

# strategy.run(fn) and friends: fn runs once per replica.
REPLICA_RUN_METHODS = frozenset({"run", "experimental_run_v2", "experimental_run"})
REPLICA_CALL_METHODS = frozenset({"call_for_each_replica"})  # on strategy.extended
# fn runs in cross-replica context: merge_call(fn), extended.update(var, fn).
CROSS_REPLICA_FN_METHODS = {"merge_call": 0, "update": 1}
# Wrappers whose first argument is the function that really runs.
FUNCTION_WRAPPERS = frozenset({"tensorflow.function", "tensorflow.compat.v1.function",
                               "functools.partial",
                               "tensorflow.autograph.experimental.do_not_convert"})
# `partial(fn, *args, **kwargs)`: a callable that calls `fn` with these arguments first.
PARTIAL_CALLS = frozenset({"functools.partial"})
# What `strategy.run(fn, args, kwargs)` and friends call `fn` with, by method: (position of
# `args`, position of `kwargs`, how many values TensorFlow passes before `*args`):
# `merge_call`'s fn gets the strategy first, `extended.update`'s the variable's copy.
ENTRY_ARGUMENTS: Dict[str, Tuple[int, int, int]] = {
    "run": (1, 2, 0), "experimental_run_v2": (1, 2, 0), "experimental_run": (1, 2, 0),
    "call_for_each_replica": (1, 2, 0), "merge_call": (1, 2, 1), "update": (2, 3, 1),
}
# Top-level modules whose functions and methods have no parameter a project's object can be
# followed into: a call of one is not recorded as handing its arguments over (unless the
# file checked is part of that module: checking Keras itself).
LIBRARY_MODULES = frozenset({
    "tensorflow", "keras", "tf_keras", "numpy", "jax", "torch", "scipy", "pandas", "math",
    "os", "sys", "re", "json", "logging", "time", "random", "itertools", "collections",
    "typing", "warnings", "absl", "six", "copy", "inspect", "contextlib", "string", "pathlib",
    "functools", "openvino", "ml_dtypes", "optree", "tree", "h5py", "onnx", "onnxruntime",
    "PIL", "sklearn", "matplotlib", "cv2", "yaml", "requests", "tqdm", "rich", "packaging",
    "flax", "optax", "transformers", "tensorflow_datasets", "tensorflow_hub", "unittest",
    "pytest", "shutil", "io", "threading", "multiprocessing", "subprocess", "dataclasses",
    "enum", "abc", "operator", "builtins", "types", "weakref",
})
# `functools.partial(f, ...)` handed to a higher-order call: `f` is what runs.
PARTIAL_NAME = "partial"

# Higher-order calls: the callables they are given run where they are called, in the
# caller's strategy and replica context (TensorFlow traces a `tf.cond` branch, a
# `while_loop` body, a `map_fn`/`vectorized_map` fn and a `Dataset.map` fn on the
# caller's thread, inheriting its distribution strategy stack: inside `strategy.run` they
# see the run's replica context). Qualified name -> the arguments that hold callables, as
# (position, keyword); an argument may also be a list, tuple or dict of them, or of
# `(predicate, fn)` pairs (`tf.case`). Not here: `tf.py_function`/`numpy_function`/
# `py_func` (the Python function runs later, eagerly, under the default strategy:
# observed on TF 2.21), and `tf.function` (wrapping runs nothing; FUNCTION_WRAPPERS).
CallableSlots = Tuple[Tuple[Optional[int], str], ...]
_COND: CallableSlots = ((1, "true_fn"), (2, "false_fn"))
_LOOP: CallableSlots = ((0, "cond"), (1, "body"))
_FN_FIRST: CallableSlots = ((0, "fn"),)
HIGHER_ORDER_CALLS: Dict[str, CallableSlots] = {
    "tensorflow.cond": _COND,
    "tensorflow.compat.v1.cond": _COND + ((None, "fn1"), (None, "fn2")),
    "tensorflow.case": ((0, "pred_fn_pairs"), (1, "default")),
    "tensorflow.compat.v1.case": ((0, "pred_fn_pairs"), (1, "default")),
    "tensorflow.switch_case": ((1, "branch_fns"), (2, "default")),
    "tensorflow.compat.v1.switch_case": ((1, "branch_fns"), (2, "default")),
    "tensorflow.python.framework.smart_cond.smart_cond": _COND,
    "tensorflow.__internal__.smart_cond.smart_cond": _COND,
    "tf_keras.utils.control_flow_util.smart_cond": _COND,
    "tf_keras.backend.switch": ((1, "then_expression"), (2, "else_expression")),
    "tensorflow.while_loop": _LOOP,
    "tensorflow.compat.v1.while_loop": _LOOP,
    "tensorflow.map_fn": _FN_FIRST,
    "tensorflow.compat.v1.map_fn": _FN_FIRST,
    "tensorflow.scan": _FN_FIRST,
    "tensorflow.compat.v1.scan": _FN_FIRST,
    "tensorflow.foldl": _FN_FIRST,
    "tensorflow.compat.v1.foldl": _FN_FIRST,
    "tensorflow.foldr": _FN_FIRST,
    "tensorflow.compat.v1.foldr": _FN_FIRST,
    "tensorflow.vectorized_map": _FN_FIRST,
    "tensorflow.compat.v1.vectorized_map": _FN_FIRST,
    # Keras 3's ops run their callables in place on the TensorFlow backend too.
    "keras.ops.cond": _COND,
    "keras.ops.while_loop": _LOOP,
    "keras.ops.fori_loop": ((2, "body_fun"),),
    "keras.ops.switch": ((1, "branches"),),
    "keras.ops.map": ((0, "f"),),
    "keras.ops.scan": ((0, "f"),),
    "keras.ops.associative_scan": ((0, "f"),),
    "keras.ops.vectorized_map": ((0, "function"),),
}
# `Dataset` methods, matched by name on any receiver (what a dataset is, is not tracked).
HIGHER_ORDER_METHODS: Dict[str, CallableSlots] = {
    "map": ((0, "map_func"),),
    "flat_map": ((0, "map_func"),),
    "interleave": ((0, "map_func"),),
    "filter": ((0, "predicate"),),
    "reduce": ((1, "reduce_func"),),
    "scan": ((1, "scan_func"),),
    "apply": ((0, "transformation_func"),),
}

# Higher-order calls whose callables TensorFlow builds as a graph branch or loop body:
# in replica context, a `merge_call` there -- which an update of a variable with an
# aggregation makes, as does `all_reduce` -- raises RuntimeError ("`merge_call` called
# while defining a new graph or a tf.function"). Qualified name -> True where it always
# does (`cond`, `case`, `switch_case`, `while_loop`, and `map_fn`/`scan`/`foldl`/`foldr`
# and Keras 3's loops, which build a while loop), False where only a tensor predicate
# makes a branch (`smart_cond`, `keras.ops.cond`: a Python bool calls the function
# directly). Observed on TF 2.21 with MirroredStrategy (tests/runtime/
# test_control_flow.py); `vectorized_map` ran such updates clean, and is not here.
MERGE_CALL_REFUSING_CALLS: Dict[str, bool] = {
    **dict.fromkeys((
        "tensorflow.cond", "tensorflow.compat.v1.cond", "tensorflow.case",
        "tensorflow.compat.v1.case", "tensorflow.switch_case",
        "tensorflow.compat.v1.switch_case", "tensorflow.while_loop",
        "tensorflow.compat.v1.while_loop", "tensorflow.map_fn", "tensorflow.compat.v1.map_fn",
        "tensorflow.scan", "tensorflow.compat.v1.scan", "tensorflow.foldl",
        "tensorflow.compat.v1.foldl", "tensorflow.foldr", "tensorflow.compat.v1.foldr",
        "keras.ops.while_loop", "keras.ops.fori_loop", "keras.ops.switch", "keras.ops.map",
        "keras.ops.scan"), True),
    **dict.fromkeys((
        "tensorflow.python.framework.smart_cond.smart_cond",
        "tensorflow.__internal__.smart_cond.smart_cond",
        "tf_keras.utils.control_flow_util.smart_cond", "keras.ops.cond"), False),
}
# What makes AutoGraph turn a Python `if`/`while` into `tf.cond`/`tf.while_loop` in a
# function it converts (a `tf.function`, what one calls, Keras' steps under `fit`): a
# test that is a tensor -- a variable's value, or the result of one of these calls
# (qualified names, and prefixes ending in "."), or a comparison or `not` of such. An
# update inside then refuses an aggregation as MERGE_CALL_REFUSING_CALLS' entries do;
# run eagerly (`strategy.run` outside any `tf.function`), the `if` is plain Python.
# Observed on TF 2.21 (tests/runtime/test_control_flow.py).
TENSOR_VALUED_CALLS = frozenset({
    "tensorflow.reduce_all", "tensorflow.reduce_any", "tensorflow.reduce_sum",
    "tensorflow.reduce_mean", "tensorflow.reduce_max", "tensorflow.reduce_min",
    "tensorflow.equal", "tensorflow.not_equal", "tensorflow.greater",
    "tensorflow.greater_equal", "tensorflow.less", "tensorflow.less_equal",
    "tensorflow.logical_and", "tensorflow.logical_or", "tensorflow.logical_not",
    "tensorflow.cast", "tensorflow.size", "tensorflow.rank", "tensorflow.norm",
    "tensorflow.constant", "tensorflow.identity", "tensorflow.convert_to_tensor",
    "tensorflow.math.", "tensorflow.compat.v1.math.", "tensorflow.random.",
    "keras.ops.", "tf_keras.backend.",
})
# ... except these, which return a Python value.
PYTHON_VALUED_CALLS = frozenset({"keras.ops.is_tensor", "tf_keras.backend.is_keras_tensor",
                                 "tf_keras.backend.is_sparse", "tf_keras.backend.ndim",
                                 "tf_keras.backend.int_shape", "tf_keras.backend.floatx",
                                 "tf_keras.backend.image_data_format",
                                 "tf_keras.backend.learning_phase"})
MERGE_CALL_REFUSED_ERROR = ("RuntimeError (\"`merge_call` called while defining a new graph "
                            "or a tf.function\")")


def _slots_by_name() -> Dict[str, CallableSlots]:
    """Last name -> the slots of every higher-order callee of that name: what a call
    must pass before its callee is resolved."""
    table: Dict[str, CallableSlots] = {}
    for qname, slots in HIGHER_ORDER_CALLS.items():
        last = qname.rpartition(".")[2]
        table[last] = tuple(dict.fromkeys(table.get(last, ()) + slots))
    for last, slots in HIGHER_ORDER_METHODS.items():
        table[last] = tuple(dict.fromkeys(table.get(last, ()) + slots))
    return table


HIGHER_ORDER_SLOTS_BY_NAME: Dict[str, CallableSlots] = _slots_by_name()

# Modules whose classes are plain Python objects, not TensorFlow trackables: what an instance of
# a class derived only from these (and `object`) holds on `self` is out of a checkpoint's reach
# (`tf.train.Checkpoint` refuses such an object, and a Keras layer or `tf.Module` holding one
# does not track what it holds).
PLAIN_BASE_MODULES = frozenset({"abc", "builtins", "collections", "dataclasses", "enum", "typing"})
# Keras classes, by a segment of their qualified name, that are plain Python objects in
# both families, not TensorFlow trackables: `tf.train.Checkpoint` refuses a loss or a
# callback, and a model does not track one (observed on Keras 3.15 and tf_keras 2.21:
# `issubclass(keras.losses.Loss, Trackable)` is False, as for callbacks, initializers,
# regularizers and constraints; Layer, Model and Optimizer are trackables).
UNTRACKED_KERAS_SEGMENTS = frozenset({"losses", "callbacks", "initializers", "regularizers",
                                      "constraints"})

# Methods Keras runs once per replica under fit/evaluate/predict with a strategy,
# by the kind of class that defines them.
KERAS_REPLICA_METHODS: Dict[str, FrozenSet[str]] = {
    LAYER: frozenset({"call", "train_step", "test_step", "predict_step"}),
    METRIC: frozenset({"update_state"}),
    OPTIMIZER: frozenset({"apply_gradients"}),
}

# Private methods TensorFlow and Keras call on a subclass with each replica's values (the
# gradients): their callers are not in the subclass's file, whatever calls it shows.
FRAMEWORK_CALLED_METHODS = frozenset({
    "_resource_apply_dense", "_resource_apply_sparse",
    "_resource_apply_sparse_duplicate_indices", "_apply_dense", "_apply_sparse",
    "_apply_sparse_duplicate_indices", "_distributed_apply", "_update_step",
    "_update_step_xla", "_backend_update_step", "_prepare_local", "_finish"})

# Optimizer methods that make or update its variables under the strategy current then.
OPTIMIZER_USE_METHODS = frozenset({"apply_gradients", "build", "minimize"})
# Object methods worth recording for TFS105/TFS108.
OBJECT_USE_METHODS = frozenset({"compile", "fit", "evaluate", "predict", "update_state",
                                "train_on_batch", "test_on_batch"}) | OPTIMIZER_USE_METHODS
# `model.compile(...)` arguments that hand over objects with variables: keyword ->
# position (None: keyword only). Keras 3 and tf_keras alike.
COMPILE_OBJECT_ARGUMENTS: Dict[str, Optional[int]] = {
    "optimizer": 0, "metrics": None, "weighted_metrics": None}
# Optimizer methods handed a model's variables, and the argument that carries them:
# method -> (keyword, position). `apply_gradients(zip(grads, model.trainable_variables))`,
# `minimize(loss, var_list=model.trainable_variables)`; the optimizer makes its slots
# colocated with them under the strategy current then.
OPTIMIZER_VARIABLE_ARGUMENTS: Dict[str, Tuple[str, int]] = {
    "apply_gradients": ("grads_and_vars", 0), "minimize": ("var_list", 1)}
# Attributes of a Keras model or layer that are lists of its own variables.
MODEL_VARIABLE_ATTRIBUTES = frozenset({"trainable_variables", "trainable_weights", "variables",
                                       "weights"})
# Builtins that pair gradients with variables or copy the list, keeping which variables
# they are: `zip(grads, v)`, `list(zip(...))`.
VARIABLE_LIST_CALLS = frozenset({"zip", "list", "tuple"})
MODEL_TRAINING_METHODS = frozenset({"compile", "fit", "evaluate", "predict", "train_on_batch",
                                    "test_on_batch"})
# Keras model constructors outside the project (user classes are found by their bases).
MODEL_CLASS_NAMES = frozenset({"Sequential", "Model", "Functional"})
MODEL_MODULE_SEGMENTS = frozenset({"applications"})
# Classes under `optimizers`/`metrics` that hold no strategy-bound variables.
NOT_STATEFUL_OBJECT_SEGMENTS = frozenset({"schedules"})
# Keras 3 optimizers whose `build` may create no slot variables, with the constructor
# arguments that make some: argument -> (its position in the signature, the values that
# make none). Made outside the scope they are used in, they raise only once they have
# slots (`TFOptimizer.add_variable_from_reference` enters `colocate_vars_with` of the
# strategy captured in `__init__`). keras/src/optimizers/sgd.py: `SGD(learning_rate,
# momentum, nesterov, weight_decay, clipnorm, clipvalue, global_clipnorm, use_ema,
# ema_momentum, ema_overwrite_frequency, loss_scale_factor, gradient_accumulation_steps,
# ...)`; `build` adds "momentum" slots only if `momentum != 0` (`nesterov` alone adds
# none); `BaseOptimizer.build` adds "average" slots with `use_ema` and
# "gradient_accumulator" slots with `gradient_accumulation_steps`.
KERAS3_SLOT_OPTIONS: Dict[str, Dict[str, Tuple[int, FrozenSet[object]]]] = {
    "SGD": {"momentum": (1, frozenset({0})),  # 0 == 0.0 == False
            "use_ema": (7, frozenset({False})),
            "gradient_accumulation_steps": (11, frozenset({None, 0}))},
}

BATCH_NORMALIZATION_NAMES = frozenset({"BatchNormalization"})

# Keras 3's stateless API: updates inside `with StatelessScope(...)` only record new
# values in the scope (the JAX-style path); they do not touch the variable.
STATELESS_SCOPE_NAMES = frozenset({"StatelessScope"})
