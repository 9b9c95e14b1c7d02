"""The tf.Variable enums: their members, spellings, and how fixes write them."""
from __future__ import annotations

from typing import Dict, Mapping, Tuple

from ...records import field, record


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
