"""The tf.distribute strategies: their classes, traits, creators and library subclasses."""
from __future__ import annotations

from typing import Dict, Tuple

from ...records import record
from .enums import (AGG, AGG_NONE, AGG_ONLY_FIRST_REPLICA, SYNC, SYNC_AUTO, SYNC_ON_READ)
from .apis import (TRAINABLE_FALSE, TRAINABLE_NOT_ON_READ, TRAINABLE_TRUE)


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
# Strategy classes whose constructions the model keeps with their arguments, by last name,
# and those arguments, as (keyword, position): MirroredStrategy's `devices` (how many
# replicas) and `cross_device_ops` (None: collective all-reduce, TF 2.21's default).
STRATEGY_ARGUMENT_CLASSES = frozenset({"MirroredStrategy"})
STRATEGY_DEVICES_ARGUMENT = ("devices", 0)
STRATEGY_CROSS_DEVICE_OPS_ARGUMENT = ("cross_device_ops", 1)
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
