"""What the profiler measures: a pattern per variable site (pure Python, no TensorFlow).

A `Pattern` is what one variable does per training step, reduced to what the
synchronization/aggregation choice can change: its shape and dtype, whether it is
trainable, and its updates (method, kind of value, replica or cross-replica context).
The measurement (`measure.py`) replays a pattern under every choice.

Where the code does not say, these documented defaults apply (each one is named in the
pattern's `notes`, so a report never passes a default off as the code's):

- shape: `DEFAULT_SHAPE`; a shape the code does say but with more than `MAX_ELEMENTS`
  elements is replaced by the default too (the profile is about the choice, not memory).
- dtype: float32 (what TensorFlow and Keras default to).
- trainable: True unless synchronization is ON_READ (tf.Variable's own default).
- initial value: the literal number the code gives (`tf.Variable(1.0)`), else zeros.
- updates: when the usage model found none, a trainable variable is measured as a weight
  trained with gradients (`GRADIENT`: each replica computes a gradient, the optimizer
  sums them across replicas in cross-replica context and updates the variable, as Keras
  optimizers do), and a non-trainable one as an accumulator: one `assign_add` of a
  per-replica value in replica context per step.
- an update whose value the usage model found the same on every replica (a read of a
  variable kept in sync, an `all_reduce` result) is measured as a constant tensor; one
  whose value kind is unknown is measured with a per-replica value (values that
  differ between replicas are where the aggregation matters); an update whose context is
  unknown is measured in replica context.
- cross-replica updates with a per-replica value are measured as `strategy.reduce(SUM, ...)`
  of the step's per-replica value, applied after `strategy.run`; cross-replica updates
  with a Python number or a constant are applied before it (resets, schedules).

The reference choice, against which "values agree" is judged, is the one that keeps every
copy equal after every write with the aggregation the updates imply (`reference_choice`).
"""
from __future__ import annotations

import ast
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from ..records import field, record
from ..model import tfapi
from ..model.facts import BOOL, CALL, FLOAT, INT, OTHER
from ..model.usage import REPLICA_INVARIANT
from ..model.tfapi import (AGG_MEAN, AGG_NONE, AGG_ONLY_FIRST_REPLICA, AGG_SUM, SYNC_AUTO,
                           SYNC_NONE, SYNC_ON_READ, SYNC_ON_WRITE)

SYNC_CHOICES: Tuple[str, ...] = (SYNC_AUTO, SYNC_ON_WRITE, SYNC_ON_READ, SYNC_NONE)
AGG_CHOICES: Tuple[str, ...] = (AGG_NONE, AGG_SUM, AGG_MEAN, AGG_ONLY_FIRST_REPLICA)
CHOICES: Tuple[Tuple[str, str], ...] = tuple((s, a) for s in SYNC_CHOICES for a in AGG_CHOICES)

DEFAULT_SHAPE: Tuple[int, ...] = (16, 16)
MAX_ELEMENTS = 1 << 22
DEFAULT_DTYPE = "float32"
MAX_UPDATES = 6

# Update methods
# optimizer-style: a gradient reduced across replicas, applied in cross-replica context
GRADIENT = "gradient"
ADDITIVE = frozenset({"assign_add", "assign_sub"})
SCATTERS = frozenset({"scatter_add", "scatter_sub", "scatter_update", "scatter_max", "scatter_min",
                      "scatter_mul", "scatter_div"})
SUPPORTED = frozenset({"assign"}) | ADDITIVE | SCATTERS | {GRADIENT}
# Methods replayed with their nearest supported relative.
NEAREST = {
    "scatter_nd_add": "scatter_add", "scatter_nd_sub": "scatter_sub",
    "scatter_nd_update": "scatter_update", "scatter_nd_max": "scatter_max",
    "scatter_nd_min": "scatter_min", "batch_scatter_update": "scatter_update",
}

# Value kinds (the usage model's names)
PYTHON_NUMBER = "python-number"  # the same non-tensor on every replica
CONSTANT = "constant"  # the same tensor on every replica
PER_REPLICA = "per-replica"  # differs between replicas
VALUE_KINDS = (PYTHON_NUMBER, CONSTANT, PER_REPLICA)

INTEGER_DTYPES = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                            "uint64", "bool"})


@record(frozen=True)
class Update:
    method: str
    value: str  # one of VALUE_KINDS
    replica_context: bool
    decay: Optional[float] = None  # assign only: v <- decay * v + (1 - decay) * x

    def describe(self) -> str:
        if self.method == GRADIENT:
            return ("gradient step (per-replica gradient, summed across replicas by an "
                    "optimizer-style update in cross-replica context)")
        what = {PER_REPLICA: "a per-replica value", CONSTANT: "a constant tensor",
                PYTHON_NUMBER: "a Python number"}[self.value]
        where = "replica context" if self.replica_context else "cross-replica context"
        if self.decay is not None:
            return f"assign(v * {self.decay} + {what} * {1 - self.decay:g}) in {where}"
        return f"{self.method}({what}) in {where}"

    def to_json(self) -> Dict[str, Any]:
        data: Dict[str, Any] = {"method": self.method, "value": self.value,
                                "replica_context": self.replica_context}
        if self.decay is not None:
            data["decay"] = self.decay
        return data


@record(frozen=True)
class Pattern:
    kind: str  # a canonical kind, or "site"
    title: str
    shape: Tuple[int, ...]
    dtype: str
    trainable: bool
    updates: Tuple[Update, ...]
    reference: Tuple[str, str]
    initial: float = 0.0
    source: str = "code"  # "code": the usage model; "default": no update was found; "canonical"
    notes: Tuple[str, ...] = ()

    def key(self) -> tuple:
        """Two sites with the same key are measured once."""
        return (self.shape, self.dtype, self.trainable, self.updates, self.reference, self.initial)

    def to_json(self) -> Dict[str, Any]:
        return {
            "kind": self.kind, "title": self.title, "trainable": self.trainable,
            "initial_value": self.initial,
            "updates_per_step": [u.to_json() for u in self.updates],
            "updates_from": self.source,
            "reference": {"synchronization": self.reference[0], "aggregation": self.reference[1]},
            "notes": list(self.notes),
        }


@record(frozen=True)
class FindingRef:
    code: str
    line: int
    severity: str
    message: str

    def to_json(self) -> Dict[str, Any]:
        return {"code": self.code, "line": self.line, "severity": self.severity,
                "message": self.message}


@record
class SiteSpec:
    """One site to profile: where it is, what it does, what the code chose, what the linter said."""

    path: Optional[str]
    line: Optional[int]
    name: str
    pattern: Pattern
    current: Tuple[Optional[str], Optional[str]]  # the code's (synchronization, aggregation)
    api: Optional[str] = None
    family: Optional[str] = None
    findings: List[FindingRef] = field(default_factory=list)
    example: Optional[str] = None  # canonical patterns: the code as commonly written
    explicit: bool = False  # the code spells a synchronization or an aggregation
    key: Optional[str] = None  # `--run`: the child's id of the site
    # Sites of variables that library code made on a line of the program (`--run` only):
    library: Optional[str] = None  # who made them, and what the user can change there
    settings: Tuple[str, ...] = ()  # what is measured instead of choices (synchronized=True)

    @property
    def label(self) -> str:
        if self.path is None:
            return f"canonical: {self.pattern.title}"
        return f"{self.path}:{self.line} {self.name}"


# A run's choice at a site: (synchronization, aggregation), or (SETTING, what is set) where
# the line takes no synchronization or aggregation but an argument that decides them.
SETTING = "setting"
AS_WRITTEN = "as written"
# What is measured on a Keras BatchNormalization layer's line: its copies of the moving
# statistics kept in step by the layer itself, the one thing the user chooses there.
SYNCHRONIZED = "synchronized=True"
NOT_SYNCHRONIZED = "synchronized=False"


def normalized(choice: Sequence[Optional[str]]) -> Tuple[str, str]:
    """The code's spelling -> the choice that runs: unset is AUTO + NONE, and AUTO is
    ON_WRITE under the mirrored strategies (which is all `--run` measures)."""
    if choice[0] == SETTING:
        return (SETTING, str(choice[1]))
    sync = choice[0] or SYNC_AUTO
    agg = choice[1] or AGG_NONE
    return (SYNC_ON_WRITE if sync == SYNC_AUTO else sync, agg)


def choice_name(choice: Sequence[Optional[str]], written: Sequence[Optional[str]]) -> str:
    """A run's choice as every part of the report names it (progress, verdicts, tables,
    plot): in the code's terms, so ON_WRITE is AUTO where the code leaves it AUTO."""
    if choice[0] == SETTING:
        return str(choice[1])
    sync, agg = choice[0] or SYNC_AUTO, choice[1] or AGG_NONE
    if sync == SYNC_ON_WRITE and (written[0] or SYNC_AUTO) == SYNC_AUTO:
        sync = SYNC_AUTO
    return f"{sync} + {agg}"


def is_integer(dtype: str) -> bool:
    return dtype in INTEGER_DTYPES


def reference_choice(updates: Sequence[Update], dtype: str,
                     family: Optional[str] = None,
                     written: Optional[str] = None) -> Tuple[str, str]:
    """The choice that keeps every copy equal after every write, with the aggregation the
    updates imply: SUM for accumulations of per-replica values, MEAN for per-replica
    assignments (statistics; ONLY_FIRST_REPLICA on integers, where MEAN is refused),
    ONLY_FIRST_REPLICA for per-replica scatters (the only aggregation MirroredVariable
    scatters accept besides NONE) and for values that are the same on every replica
    (counters), and the default AUTO/NONE when every write happens in cross-replica context
    or through an optimizer. Where every replica writes the same value, which
    aggregation is right is the author's intent (SUM counts each replica's share, as an
    examples-seen total of equal batches does; MEAN or ONLY_FIRST_REPLICA keep one), so
    an aggregation the code writes (`written`) is the reference there; ONLY_FIRST_REPLICA
    otherwise. Where `assign_add` is a read-modify-write assign
    (`tfapi.READ_MODIFY_WRITE_ADDS`: Keras 3), an accumulator's is ON_READ + SUM."""
    replica = [u for u in updates if u.replica_context and u.method != GRADIENT]
    if not replica:
        return (SYNC_AUTO, AGG_NONE)
    per_replica = [u for u in replica if u.value == PER_REPLICA]
    if not per_replica:
        if written in (AGG_SUM, AGG_MEAN, AGG_ONLY_FIRST_REPLICA):
            return (SYNC_ON_WRITE, written)
        return (SYNC_ON_WRITE, AGG_ONLY_FIRST_REPLICA)
    if any(u.method in SCATTERS for u in per_replica):
        return (SYNC_ON_WRITE, AGG_ONLY_FIRST_REPLICA)
    if all(u.method in ADDITIVE for u in per_replica):
        if family in tfapi.READ_MODIFY_WRITE_ADDS:
            return (SYNC_ON_READ, AGG_SUM)
        return (SYNC_ON_WRITE, AGG_SUM)
    return (SYNC_ON_WRITE, AGG_ONLY_FIRST_REPLICA if is_integer(dtype) else AGG_MEAN)


# --- the canonical patterns ------------------------------------------------------------------

_HEADER = (
    "import tensorflow as tf\n\n"
    "strategy = tf.distribute.MirroredStrategy()\n"
    "with strategy.scope():\n"
)


@record(frozen=True)
class Canonical:
    kind: str
    title: str
    shape: Tuple[int, ...]
    dtype: str
    trainable: bool
    updates: Tuple[Update, ...]
    current: Tuple[str, str]  # as commonly written (the example)
    example: str


CANONICAL: Tuple[Canonical, ...] = (
    Canonical(
        "trainable-weight", "trainable weight with gradients", (32, 32), "float32", True,
        (Update(GRADIENT, PER_REPLICA, True),), (SYNC_AUTO, AGG_NONE),
        _HEADER
        + "    kernel = tf.Variable(tf.zeros([32, 32]))\n\n\n"
        "@tf.function\n"
        "def train_step(x):\n"
        "    def step_fn(x):\n"
        "        with tf.GradientTape() as tape:\n"
        "            loss = tf.reduce_mean(tf.square(kernel - x))\n"
        "        grad = tape.gradient(loss, kernel)\n"
        "        optimizer.apply_gradients([(grad, kernel)])\n\n"
        "    strategy.run(step_fn, args=(x,))\n",
    ),
    Canonical(
        "metric-accumulator", "metric accumulator", (), "float32", False,
        (Update("assign_add", PER_REPLICA, True),), (SYNC_AUTO, AGG_SUM),
        _HEADER
        + "    total = tf.Variable(0.0, trainable=False, "
        "aggregation=tf.VariableAggregation.SUM)\n\n\n"
        "@tf.function\n"
        "def eval_step(batch):\n"
        "    def step_fn(x):\n"
        "        total.assign_add(tf.reduce_sum(x))\n\n"
        "    strategy.run(step_fn, args=(batch,))\n",
    ),
    Canonical(
        "step-counter", "step counter", (), "int64", False,
        (Update("assign_add", PYTHON_NUMBER, True),), (SYNC_AUTO, AGG_NONE),
        _HEADER
        + "    step = tf.Variable(0, dtype=tf.int64, trainable=False)\n\n\n"
        "@tf.function\n"
        "def train_step(batch):\n"
        "    def step_fn(x):\n"
        "        step.assign_add(1)\n\n"
        "    strategy.run(step_fn, args=(batch,))\n",
    ),
    Canonical(
        "moving-statistic", "moving statistic", (32,), "float32", False,
        (Update("assign", PER_REPLICA, True, decay=0.9),), (SYNC_AUTO, AGG_NONE),
        _HEADER
        + "    moving_mean = tf.Variable(tf.zeros([32]), trainable=False)\n\n\n"
        "@tf.function\n"
        "def train_step(batch):\n"
        "    def step_fn(x):\n"
        "        moving_mean.assign(moving_mean * 0.9 + tf.reduce_mean(x, axis=0) * 0.1)\n\n"
        "    strategy.run(step_fn, args=(batch,))\n",
    ),
    Canonical(
        "gradient-accumulator", "gradient accumulator", (32, 32), "float32", False,
        (Update("assign_add", PER_REPLICA, True),), (SYNC_AUTO, AGG_NONE),
        _HEADER
        + "    accumulated = tf.Variable(tf.zeros([32, 32]), trainable=False)\n\n\n"
        "@tf.function\n"
        "def accumulate(batch):\n"
        "    def step_fn(x):\n"
        "        with tf.GradientTape() as tape:\n"
        "            loss = tf.reduce_mean(tf.square(x))\n"
        "        accumulated.assign_add(tape.gradient(loss, x))\n\n"
        "    strategy.run(step_fn, args=(batch,))\n",
    ),
)


def canonical_sites(findings_for_source=None) -> List[SiteSpec]:
    """The built-in patterns. `findings_for_source(text)` gives the static findings of each
    pattern's example (the code as commonly written), if a checker is passed."""
    sites = []
    # Every example creates its variable with tf.Variable, spelled as the API's title.
    creates = tfapi.TF_VARIABLE.title + "("
    for c in CANONICAL:
        pattern = Pattern(
            kind=c.kind, title=c.title, shape=c.shape, dtype=c.dtype, trainable=c.trainable,
            updates=c.updates, reference=reference_choice(c.updates, c.dtype), source="canonical",
        )
        line = next(i for i, text in enumerate(c.example.splitlines(), 1) if creates in text)
        findings = list(findings_for_source(c.example)) if findings_for_source else []
        sites.append(SiteSpec(path=None, line=line, name=c.kind, pattern=pattern,
                              current=c.current, api=tfapi.TF_VARIABLE.title, family=tfapi.TF,
                              findings=findings, example=c.example))
    return sites


# --- sites found in the user's files -----------------------------------------------------------

def _literal(text: Optional[str]):
    if text is None:
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _as_shape(obj) -> Optional[Tuple[int, ...]]:
    if isinstance(obj, bool):
        return None
    if isinstance(obj, int):
        return (obj,) if obj >= 0 else None
    if isinstance(obj, (list, tuple)) and all(isinstance(d, int) and not isinstance(d, bool)
                                              and d >= 0 for d in obj):
        return tuple(obj)
    return None


def _nested_shape(obj) -> Optional[Tuple[int, ...]]:
    """[[1, 2], [3, 4]] -> (2, 2); 1.0 -> ()."""
    if isinstance(obj, (int, float, bool)):
        return ()
    if isinstance(obj, (list, tuple)):
        if not obj:
            return (0,)
        inner = [_nested_shape(x) for x in obj]
        if inner[0] is None or any(i != inner[0] for i in inner):
            return None
        return (len(obj),) + inner[0]
    return None


def _argument(site, name: str):
    """The argument bound to parameter `name`, by keyword or by position."""
    position = None
    api = getattr(site, "api", None)
    if api is not None and hasattr(api, "position_of"):
        position = api.position_of(name)
    index = 0
    for arg in site.call.args:
        if getattr(arg, "star", ""):
            continue
        if arg.keyword is None:
            if position is not None and index == position:
                return arg.value
            index += 1
        elif arg.keyword == name:
            return arg.value
    return None


def _initial_value(site):
    api = getattr(site, "api", None)
    names = [getattr(api, "initial_value_param", None), getattr(api, "initializer_param", None)]
    for name in names:
        if name:
            value = _argument(site, name)
            if value is not None:
                return value
    return None


def static_shape(site) -> Optional[Tuple[int, ...]]:
    """The shape the code says: `shape=`, or the initial value's, else None."""
    shape_arg = _argument(site, "shape")
    if shape_arg is not None:
        return _as_shape(_literal(shape_arg.text))
    initial = _initial_value(site)
    if initial is None:
        return None
    if initial.kind in (INT, FLOAT, BOOL):
        return ()
    if initial.kind == CALL:
        qname = initial.qname or ""
        if qname in tfapi.SHAPE_FACTORIES:
            shape_value = initial.kwarg("shape") or initial.kwarg("dims")
            position = tfapi.SHAPE_FACTORIES[qname]
            if shape_value is None and len(initial.args) > position:
                shape_value = initial.args[position]
            return _as_shape(_literal(shape_value.text)) if shape_value is not None else None
        if qname in tfapi.LITERAL_FACTORIES and initial.args:
            return _nested_shape(_literal(initial.args[0].text))
    if initial.kind == OTHER:
        return _nested_shape(_literal(initial.text))
    return None


def _initial_number(site) -> Optional[float]:
    initial = _initial_value(site)
    if initial is None:
        return None
    if initial.kind in (INT, FLOAT) and isinstance(initial.literal, (int, float)):
        return float(initial.literal)
    return None


def _updates_of(site, dtype: str, trainable: bool) -> Tuple[Tuple[Update, ...], str, List[str]]:
    notes: List[str] = []
    updates: List[Update] = []
    for info in getattr(site, "updates", None) or []:
        method = getattr(info, "method", None) or "assign"
        if method not in SUPPORTED:
            nearest = NEAREST.get(method, "assign")
            notes.append(f"`{method}` is measured as `{nearest}`")
            method = nearest
        kind = getattr(info, "value_kind", None)
        if kind == REPLICA_INVARIANT:  # the same on every replica, as a constant is
            kind = CONSTANT
        elif kind not in VALUE_KINDS:
            kind = PER_REPLICA
        context = getattr(info, "replica_context", None)
        if context is None:
            notes.append(f"the context of `{method}` is unknown: measured in replica context")
            context = True
        update = Update(method, kind, bool(context))
        if update not in updates:
            updates.append(update)
    if len(updates) > MAX_UPDATES:
        notes.append(f"{len(updates)} distinct updates: the first {MAX_UPDATES} are measured")
        updates = updates[:MAX_UPDATES]
    if updates:
        return tuple(updates), "code", notes
    if trainable and not is_integer(dtype):
        notes.append("no update seen in the code: measured as a weight trained with gradients")
        return (Update(GRADIENT, PER_REPLICA, True),), "default", notes
    notes.append("no update seen in the code: measured as one assign_add of a per-replica "
                 "value in replica context per step")
    return (Update("assign_add", PER_REPLICA, True),), "default", notes


def site_spec(site, findings: Iterable[FindingRef] = ()) -> SiteSpec:
    """A statically found `VariableSite` -> what to measure."""
    notes: List[str] = []
    shape = static_shape(site)
    if shape is None:
        shape = DEFAULT_SHAPE
        notes.append(f"shape not in the code: default {list(DEFAULT_SHAPE)}")
    else:
        elements = 1
        for d in shape:
            elements *= d
        if elements > MAX_ELEMENTS:
            notes.append(f"shape {list(shape)} has more than {MAX_ELEMENTS} elements: "
                         f"measured with {list(DEFAULT_SHAPE)}")
            shape = DEFAULT_SHAPE
    dtype = getattr(site, "dtype", None)
    if not dtype:
        dtype = DEFAULT_DTYPE
        notes.append(f"dtype not in the code: default {DEFAULT_DTYPE}")
    sync_member = getattr(getattr(site, "sync", None), "member", None)
    agg_member = getattr(getattr(site, "agg", None), "member", None)
    trainable = getattr(site, "trainable", None)
    if trainable is None:
        trainable = sync_member != SYNC_ON_READ
        notes.append(f"trainable not known from the code: measured as {trainable}")
    updates, source, update_notes = _updates_of(site, dtype, trainable)
    notes.extend(update_notes)
    if any(u.method in SCATTERS for u in updates) and len(shape) == 0:
        shape = (4,)
        notes.append("a scatter needs a rank-1 or higher variable: measured with shape [4]")
    initial = _initial_number(site)
    api = getattr(site, "api", None)
    pattern = Pattern(
        kind="site", title=_title(updates, trainable), shape=tuple(shape), dtype=dtype,
        trainable=bool(trainable), updates=updates,
        reference=reference_choice(updates, dtype, getattr(api, "family", None),
                                   agg_member if getattr(site.agg, "written", False) else None),
        initial=initial if initial is not None else 0.0, source=source, notes=tuple(notes),
    )
    name = getattr(site, "name", None)
    if not isinstance(name, str):
        name = site.call.target or site.call.func_text + "(...)"
    return SiteSpec(
        path=site.path, line=site.call.span.line, name=name, pattern=pattern,
        current=(sync_member, agg_member), api=getattr(api, "title", None),
        family=getattr(api, "family", None), findings=list(findings),
        explicit=any(getattr(getattr(site, k, None), "written", False) for k in ("sync", "agg")),
    )


def _title(updates: Sequence[Update], trainable: bool) -> str:
    if any(u.method == GRADIENT for u in updates):
        return "trainable weight with gradients"
    return "; ".join(u.describe() for u in updates)


def site_lines(site) -> Tuple[int, int, List[int]]:
    """(first line, last line) of the creation call, and the lines of its updates."""
    span = site.call.span
    update_lines = []
    for info in getattr(site, "updates", None) or []:
        span_u = getattr(info, "span", None)
        if span_u is not None and getattr(info, "path", site.path) == site.path:
            update_lines.append(span_u.line)
    return span.line, span.end_line, update_lines
