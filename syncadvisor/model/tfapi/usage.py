"""How variables are updated and read, and which calls run code per replica."""
from __future__ import annotations

from typing import Dict, FrozenSet, Optional, Tuple

from .enums import (AGG_MEAN, AGG_ONLY_FIRST_REPLICA, AGG_SUM)
from .apis import (KERAS3, LAYER, METRIC, OPTIMIZER)
from .strategies import (CENTRAL_STORAGE, MIRRORED, MULTI_WORKER)


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
# Decorators that make a function a graph TensorFlow traces (AutoGraph converts it), and
# their arguments that compile it with XLA instead, which traces differently (variable
# creation there is "UnimplementedError: We failed to lift variable creations").
TRACING_DECORATORS = frozenset({"tensorflow.function", "tensorflow.compat.v1.function"})
XLA_COMPILE_ARGUMENTS = frozenset({"jit_compile", "experimental_compile"})
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
# The aggregations whose replica-context update goes through `merge_call` (an AUTO/ON_WRITE
# variable's, and under CentralStorage, which ignores ON_READ, any variable's).
MERGING_AGGREGATIONS = frozenset({AGG_SUM, AGG_MEAN, AGG_ONLY_FIRST_REPLICA})
# Strategies under which such an update inside a branch or loop body of traced replica code
# (MERGE_CALL_REFUSING_CALLS, or AutoGraph's `if`/`while` on a tensor) raises
# MERGE_CALL_REFUSED_ERROR: observed on TF 2.21 with MirroredStrategy over 1 and 2 logical
# CPUs, MultiWorkerMirroredStrategy as one local worker and CentralStorageStrategy over 2;
# OneDeviceStrategy, and any strategy run eagerly, run it clean (tests/runtime/snippets/
# TFS110_*). TPUStrategy and ParameterServerStrategy were not run: not here.
MERGE_CALL_BRANCH_STRATEGIES = (MIRRORED, MULTI_WORKER, CENTRAL_STORAGE)
# ... and those among them that ignore ON_READ: an ON_READ variable with an aggregation
# raises there too (observed under CentralStorageStrategy; it runs under MirroredStrategy).
ON_READ_IGNORED_STRATEGIES = (CENTRAL_STORAGE,)


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

# The steps among them that Keras 3 `fit`/`evaluate`/`predict` run in `strategy.run` inside a
# `tf.function` (unless the model is compiled with `run_eagerly=True`): traced replica code,
# where a synchronization point inside a branch raises as in a custom loop's step (seen for
# `train_step`: tests/runtime/test_keras_fit_steps.py).
KERAS_TRACED_STEP_METHODS = frozenset({"train_step", "test_step", "predict_step"})

# Private methods TensorFlow and Keras call on a subclass with each replica's values (the
# gradients): their callers are not in the subclass's file, whatever calls it shows.
FRAMEWORK_CALLED_METHODS = frozenset({
    "_resource_apply_dense", "_resource_apply_sparse",
    "_resource_apply_sparse_duplicate_indices", "_apply_dense", "_apply_sparse",
    "_apply_sparse_duplicate_indices", "_distributed_apply", "_update_step",
    "_update_step_xla", "_backend_update_step", "_prepare_local", "_finish"})

# Optimizer methods that make or update its variables under the strategy current then.
OPTIMIZER_USE_METHODS = frozenset({"apply_gradients", "build", "minimize"})
# Optimizer methods whose first call builds a Keras 3 optimizer that is not built yet: it
# makes its slot variables then, under the strategy and in the context of that call
# (keras/src/optimizers/base_optimizer.py `apply`, which `apply_gradients` calls).
OPTIMIZER_APPLY_METHODS = frozenset({"apply_gradients", "apply", "minimize"})
# The method that builds one on purpose: `optimizer.build(model.trainable_variables)`.
OPTIMIZER_BUILD_METHOD = "build"
# Object methods worth recording for TFS105/TFS108/TFS109.
# `model.compile(optimizer=..., metrics=...)`: where a Keras object is handed to a model.
COMPILE_METHOD = "compile"
OBJECT_USE_METHODS = frozenset({"compile", "fit", "evaluate", "predict", "update_state",
                                "train_on_batch", "test_on_batch"}) | OPTIMIZER_USE_METHODS \
    | OPTIMIZER_APPLY_METHODS
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

# Keras 3 optimizers that make variables when they are built, whatever their options (slot
# variables; LossScaleOptimizer its step counter and scale): each was seen doing so, and
# raising when it was first built in traced replica code, on TF 2.21 (TFS109). SGD makes
# some only with the options of KERAS3_SLOT_OPTIONS.
KERAS3_OPTIMIZERS_WITH_SLOTS = frozenset({
    "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax", "Ftrl", "Lamb", "Lion",
    "LossScaleOptimizer", "Muon", "Nadam", "RMSprop"})
# A Keras 3 optimizer first built inside `strategy.run` in a traced function raises under
# MirroredStrategy over more than one device with its default cross-device ops (collective
# all-reduce). It ran over one device, with ReductionToOneDevice or HierarchicalCopyAllReduce,
# and under OneDeviceStrategy, CentralStorageStrategy (one device or two) and
# MultiWorkerMirroredStrategy (one local worker, and two workers of one CPU each) (TF 2.21,
# 2 logical CPUs).
OPTIMIZER_BUILT_IN_STEP_STRATEGIES = (MIRRORED,)
OPTIMIZER_BUILT_IN_STEP_ERROR = ("InvalidArgumentError (\"You must feed a value for placeholder "
                                 "tensor\")")
# Keras 3 models built where they are made, whose variables exist for `optimizer.build`:
# a Sequential whose first layer is one of KERAS_INPUT_CALLS or a layer given one of
# KERAS3_LAYER_INPUT_SHAPE_ARGUMENTS (Sequential adds an InputLayer of that shape: the
# legacy form, which Keras 3.15 warns about and builds), and a functional Model given its
# inputs and outputs (as the first two arguments, or by these keywords).
KERAS_SEQUENTIAL_CLASSES = frozenset({"keras.Sequential", "keras.models.Sequential"})
KERAS_INPUT_CALLS = frozenset({"keras.Input", "keras.layers.Input", "keras.layers.InputLayer"})
KERAS3_LAYER_INPUT_SHAPE_ARGUMENTS = frozenset({"input_shape", "input_dim"})
# A Keras 3 optimizer given `gradient_accumulation_steps` applies its update under `ops.cond`
# (BaseOptimizer._backend_apply_gradients): inside `strategy.run` in a traced function that
# branch holds a synchronization point, and the step raises MERGE_CALL_REFUSED_ERROR whether
# the optimizer was built or not (TF 2.21, Keras 3.15, MirroredStrategy over 2 logical CPUs;
# SGD and Adam). Building it does not help there: TFS109 leaves such an optimizer alone.
KERAS3_GRADIENT_ACCUMULATION_ARGUMENT = "gradient_accumulation_steps"
KERAS3_NO_ACCUMULATION_VALUES: FrozenSet[object] = frozenset({None, 0})  # the default; off
# Keywords that make the builder record a call as a construction (with its arguments' keywords)
# though it hands nothing over: what TFS109 reads of a layer or an optimizer.
RECORDED_CONSTRUCTION_KEYWORDS = KERAS3_LAYER_INPUT_SHAPE_ARGUMENTS | {
    KERAS3_GRADIENT_ACCUMULATION_ARGUMENT}
KERAS_FUNCTIONAL_CLASSES = frozenset({"keras.Model", "keras.models.Model"})
FUNCTIONAL_MODEL_ARGUMENTS = ("inputs", "outputs")
# What the variables of a model are called in `optimizer.build(...)`.
TRAINABLE_VARIABLES = "trainable_variables"

BATCH_NORMALIZATION_NAMES = frozenset({"BatchNormalization"})

# Keras 3's stateless API: updates inside `with StatelessScope(...)` only record new
# values in the scope (the JAX-style path); they do not touch the variable.
STATELESS_SCOPE_NAMES = frozenset({"StatelessScope"})
