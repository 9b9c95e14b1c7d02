"""Creation calls -> normalised variable sites.

A `VariableSite` says, for one call that creates a variable, which API it is,
what synchronization, aggregation, trainable and dtype it ends up with, how each
was written (keyword, position, default), and under which strategy contexts it
runs.
"""
from __future__ import annotations

from typing import Callable, Dict, FrozenSet, List, Optional, Sequence, Tuple

from ..records import field, record
from . import creators as creator_programs
from . import tfapi
from .contexts import Context, Creator, Strategies
from .index import ProjectIndex
from .facts import (
    BOOL, CALL, FLOAT, INT, NONE, QNAME, STR, Argument, Bound, CreationCall, FileModel, Value,
)

# (a receiver, the path of its file) -> the classes it may be an instance of.
Instances = Callable[[Bound, str], Sequence[str]]

# How a setting was written.
DEFAULT = "default"  # not written: the API's default applies
ENUM = "enum"  # a member of the right TF enum class
KERAS_STRING = "keras-string"  # a valid Keras 3 lowercase string
STRING = "string"  # any other string
INTEGER = "int"
NONE_VALUE = "none"
TF_ENUM_IN_KERAS3 = "tf-enum"  # a TF enum member given to a Keras 3 API
WRONG_ENUM = "wrong-enum"  # e.g. a VariableSynchronization member as aggregation
UNKNOWN_MEMBER = "unknown-member"  # e.g. VariableSynchronization.DEFAULT
UNKNOWN = "unknown"  # an expression we cannot evaluate, or hidden in **kwargs


@record
class Setting:
    """A normalised synchronization or aggregation."""

    member: Optional[str]  # AUTO/NONE/ON_WRITE/ON_READ or NONE/SUM/MEAN/ONLY_FIRST_REPLICA
    form: str
    arg: Optional[Argument] = None
    positional: bool = False
    # The member an invalid value evidently means ("ON_READ" for the string "on_read"),
    # for fixes; `member` stays None because TensorFlow rejects the value.
    intended: Optional[str] = None
    # The variable creator in effect that rewrites the member (`tf.variable_creator_scope`)
    # and the member before it did: `member` is what the strategy and the variable get,
    # `written_member` what the API itself sees (tf_keras checks ON_READ + trainable there).
    creator: Optional[Creator] = None
    before_creator: Optional[str] = None

    @property
    def written(self) -> bool:
        return self.arg is not None

    @property
    def written_member(self) -> Optional[str]:
        return self.before_creator if self.creator is not None else self.member


@record
class VariableSite:
    path: str
    call: CreationCall
    api: tfapi.ApiSpec
    sync: Setting
    agg: Setting
    trainable: Optional[bool]  # None: cannot tell
    trainable_arg: Optional[Argument]
    dtype: Optional[str]  # e.g. "int32"; None: cannot tell
    dtype_source: Optional[Value]
    contexts: FrozenSet[Context]
    # Arguments for parameters the API does not have (e.g. Keras 3 synchronization).
    unexpected: Dict[str, Argument] = field(default_factory=dict)
    index: int = -1  # position in FileModel.creations
    updates: list = field(default_factory=list)  # UpdateInfo, filled in by linking
    reads: list = field(default_factory=list)  # ReadInfo, filled in by linking
    # What the API itself takes `trainable` for, before any variable creator runs (tf_keras
    # checks ON_READ + trainable there); `trainable` is what the variable gets.
    written_trainable: Optional[bool] = None

    @property
    def key(self):
        return (self.path, self.index)

    @property
    def name(self) -> str:
        """How the code refers to it: `self.total`, `step`, or the call itself."""
        return self.call.target or self.call.func_text + "(...)"

    @property
    def family(self) -> str:
        return self.api.family


def api_for(call: CreationCall, fm: FileModel, index: ProjectIndex,
            instances: Optional[Instances] = None) -> Optional[tfapi.ApiSpec]:
    """The API a creation call is, or None where it creates no variable we know of.
    `instances(bound, path)` names the classes a receiver may be an instance of."""
    if call.method is None:
        callee = call.callee or ""
        api = tfapi.FUNCTION_APIS.get(callee)
        if api is None and callee:
            api = tfapi.FUNCTION_APIS.get(index.external_name(callee))
        return api
    if call.on_self and call.klass is not None:
        family, kind = keras_class_kind(call.klass, fm, index)
    elif call.receiver is not None and instances is not None:
        family, kind = receiver_kind(instances(call.receiver, fm.path), call.method, index)
    else:
        return None
    if family is None or kind is None:
        return None
    return tfapi.METHOD_APIS.get((family, kind, call.method))


def receiver_kind(classes: Sequence[str], method: str,
                  index: ProjectIndex) -> Tuple[Optional[str], Optional[str]]:
    """(family, kind) of what `x` in `x.add_weight(...)` is an instance of: a project
    class by its Keras bases, a Keras class by its module (`tf_keras.layers.Dense`).
    Nothing where it may be an instance of no Keras class, or of classes that disagree:
    `add_weight` on a layer and on a metric make different variables; a project class
    that defines the method itself is not Keras's."""
    kinds = set()
    for cid in classes:
        fm = index.class_file(cid)
        if fm is not None:
            own = index.method(cid, method) is not None
            kinds.add((None, None) if own else keras_class_kind(cid, fm, index))
            continue
        kinds.add(_library_class_kind(index.external_name(cid)))
    if len(kinds) != 1:
        return None, None
    return kinds.pop()


def instance_kind(class_id: str, index: ProjectIndex) -> Tuple[Optional[str], Optional[str]]:
    """(family, kind) of an instance of a class: a project class by its Keras bases, a
    library class by its module."""
    fm = index.class_file(class_id)
    if fm is not None:
        return keras_class_kind(class_id, fm, index)
    return _library_class_kind(index.external_name(class_id))


def _library_class_kind(qname: str) -> Tuple[Optional[str], Optional[str]]:
    for prefix, family in tfapi.KERAS_FAMILY_PREFIXES:
        if qname.startswith(prefix):
            segments = qname.split(".")
            if segments[-1] in tfapi.MODEL_CLASS_NAMES:
                return family, tfapi.LAYER
            for segment, kind in tfapi.KERAS_INSTANCE_KIND_SEGMENTS:
                if segment in segments:
                    return family, kind
    return None, None


def keras_class_kind(class_id: str, fm: FileModel,
                     index: ProjectIndex) -> Tuple[Optional[str], Optional[str]]:
    """(family, kind) of a class from its Keras base classes. The project's own classes
    count too: checking Keras itself, `keras.src.metrics.metric.Metric` is one of them."""
    index.read(fm)
    for base in index.mro(class_id) + index.external_bases(class_id):
        for prefix, family in tfapi.KERAS_FAMILY_PREFIXES:
            if base.startswith(prefix):
                segments = base.split(".")
                kind = next((k for seg, k in tfapi.KERAS_KIND_SEGMENTS if seg in segments),
                            tfapi.LAYER)
                return family, kind
    # The base is not visible (a third-party layer): trust the file's one Keras import.
    if len(fm.keras_families) == 1:
        return fm.keras_families[0], tfapi.LAYER
    return None, None


def family_evidence(site: VariableSite) -> Optional[str]:
    """The Keras family a call's own arguments show it was written for (tfapi.KERAS2 or
    KERAS3), where its API exists in both: an argument only one of them takes, a name
    where Keras 3 wants a shape; None where they show nothing."""
    if site.family not in (tfapi.KERAS2, tfapi.KERAS3):
        return None
    if site.api.title in tfapi.FAMILY_ONLY_APIS:
        return site.family
    keywords = {arg.keyword for arg in site.call.args if arg.keyword is not None}
    if keywords & tfapi.KERAS3_ONLY_KEYWORDS:
        return tfapi.KERAS3
    if keywords & tfapi.KERAS2_ONLY_KEYWORDS:
        return tfapi.KERAS2
    first = site.call.args[0] if site.call.args else None
    if site.api.title in tfapi.SHAPE_FIRST_APIS and first is not None and \
            first.keyword is None and not first.star and first.value.kind == STR:
        return tfapi.KERAS2
    return None


def _bind_arguments(call: CreationCall, api: tfapi.ApiSpec
                    ) -> Tuple[Dict[str, Tuple[Argument, bool]], Dict[str, Argument], bool]:
    """parameter -> (argument, passed by position); unexpected keywords; any *args/**kwargs."""
    bound: Dict[str, Tuple[Argument, bool]] = {}
    unexpected: Dict[str, Argument] = {}
    unpacked = False
    position = 0
    for arg in call.args:
        if arg.star:
            unpacked = True
            continue
        if arg.keyword is None:
            if position < len(api.positional):
                bound[api.positional[position]] = (arg, True)
            position += 1
        elif api.has_parameter(arg.keyword):
            bound[arg.keyword] = (arg, False)
        else:
            unexpected[arg.keyword] = arg
    return bound, unexpected, unpacked


def _enum_member(value: Value, setting: str) -> Tuple[Optional[str], str]:
    """(member, form) for a TF enum reference."""
    qname = value.qname or ""
    enum_class, _, member = qname.rpartition(".")
    spec = tfapi.ENUM_CLASSES.get(enum_class)
    if spec is None:
        return None, UNKNOWN
    if spec.setting != setting:
        return None, WRONG_ENUM
    if member in spec.members:
        return member, ENUM
    if member in spec.aliases:
        return spec.aliases[member], ENUM
    return None, UNKNOWN_MEMBER


def _setting(api: tfapi.ApiSpec, name: str, passed: Optional[Tuple[Argument, bool]],
             unpacked: bool) -> Setting:
    default = api.sync_default if name == tfapi.SYNC else api.agg_default
    forced = api.sync_forced if name == tfapi.SYNC else None
    if passed is None:
        if forced is not None:
            return Setting(forced, DEFAULT)
        if unpacked:
            return Setting(None, UNKNOWN)
        return Setting(default, DEFAULT)
    arg, positional = passed
    value = arg.value
    keras3 = api.values == tfapi.STRING_VALUES
    member: Optional[str] = None
    if value.kind == QNAME:
        member, form = _enum_member(value, name)
        if keras3 and form in (ENUM, UNKNOWN_MEMBER, WRONG_ENUM):
            form = TF_ENUM_IN_KERAS3
    elif value.kind == STR:
        literal = str(value.literal)
        if keras3 and literal in tfapi.KERAS3_STRING[name]:
            member, form = tfapi.KERAS3_STRING[name][literal], KERAS_STRING
        else:
            form = STRING
            member = tfapi.KERAS3_STRING[name].get(literal.lower())
            if member is None and literal.upper() in tfapi.MEMBERS[name]:
                member = literal.upper()
    elif value.kind == INT:
        number = value.literal
        member = tfapi.MEMBER_BY_INT[name].get(number) if isinstance(number, int) else None
        form = INTEGER
        if keras3:
            member = None  # Keras 3 takes strings only
    elif value.kind == NONE:
        form = NONE_VALUE
        if keras3 or name == tfapi.AGG:
            # Keras 3 maps None to "none"; tf.Variable resets it to NONE
            member = tfapi.AGG_NONE if name == tfapi.AGG else tfapi.SYNC_NONE
        else:
            member = tfapi.SYNC_AUTO  # tf.Variable(synchronization=None) means AUTO
    else:
        form = UNKNOWN
    intended = member
    if form in (STRING, TF_ENUM_IN_KERAS3) or (keras3 and form == INTEGER):
        member = None  # rejected whatever the strategy
    if forced is not None:
        member = forced
    return Setting(member, form, arg, positional, intended)


def _trainable(api: tfapi.ApiSpec, passed: Optional[Tuple[Argument, bool]], sync: Setting,
               unpacked: bool) -> Optional[bool]:
    if passed is not None:
        value = passed[0].value
        return bool(value.literal) if value.kind == BOOL else None
    if not api.has_trainable:
        return False
    if unpacked:
        return None
    if api.trainable_default == tfapi.TRAINABLE_TRUE:
        return True
    if api.trainable_default == tfapi.TRAINABLE_FALSE:
        return False
    if sync.member is None:
        return None
    return sync.member != tfapi.SYNC_ON_READ


def dtype_name(value: Optional[Value]) -> Optional[str]:
    """"int32" for `tf.int32`, `tf.dtypes.int32`, `np.int32` or "int32"."""
    if value is None:
        return None
    name: Optional[str] = None
    if value.kind == QNAME and value.qname:
        for prefix in tfapi.DTYPE_MODULES:
            if value.qname.startswith(prefix):
                name = value.qname[len(prefix):]
                break
    elif value.kind == STR:
        name = str(value.literal)
    if name in tfapi.INTEGER_DTYPES or name in tfapi.FLOAT_DTYPES:
        return name
    return None


def _literal_dtype(value: Value) -> Optional[str]:
    if value.kind == INT:
        return "int32"
    if value.kind == FLOAT:
        return "float32"
    if value.kind == BOOL:
        return "bool"
    return None


def infer_dtype(value: Optional[Value]) -> Optional[str]:
    """The dtype an initial value gives: `0` -> int32, `tf.zeros((), tf.int64)` -> int64."""
    if value is None:
        return None
    literal = _literal_dtype(value)
    if literal is not None or value.kind != CALL:
        return literal
    position = tfapi.TENSOR_FACTORIES.get(value.qname or "")
    if position is None:
        return None
    explicit = value.kwarg("dtype")
    if explicit is None and 0 <= position < len(value.args):
        explicit = value.args[position]
    if explicit is not None:
        return dtype_name(explicit)
    source = tfapi.VALUE_DTYPE_FACTORIES.get(value.qname or "")
    if source is not None and value.args:
        return _literal_dtype(value.args[source])
    if value.qname in tfapi.FLOAT32_FACTORIES:
        return "float32"
    return None


def _chains(context: Context) -> List[Tuple[Creator, ...]]:
    """The creators a variable created in `context` goes through, first to run first: one
    chain per way the strategy may have been made."""
    if context.strategy is None:
        return [context.creators]
    return [context.creators + option.creators for option in context.strategy.options]


def _with_creators(sync: Setting, agg: Setting, trainable: Optional[str],
                   contexts: FrozenSet[Context]) -> Tuple[Setting, Setting, Optional[str]]:
    """The settings the strategy sees once the variable creators in effect have run, and
    the `trainable` the variable gets (as tfapi.CREATOR_LITERALS holds it; `trainable`:
    what the API hands the creators): where every context that has readable creators
    agrees with every other (one without any passes the written choice on), their
    result; else the choice as written. A creator the run cannot read leaves it as
    written (`unread_creator` makes the verdict a warning)."""
    written = {tfapi.SYNC: sync.member, tfapi.AGG: agg.member, tfapi.TRAINABLE: trainable}
    if sync.member is None or agg.member is None:
        return sync, agg, trainable  # a value the API rejects before any creator runs
    results = set()
    trainables = set()
    changed_by: Optional[Creator] = None
    for context in contexts:
        for chain in _chains(context):
            if any(c.ops is None for c in chain):
                continue
            choice: Optional[Dict[str, Optional[str]]] = written
            for creator in chain:
                before = choice
                choice = creator_programs.run(creator.ops or (), choice) if choice else None
                if choice is not None and choice != before and changed_by is None:
                    changed_by = creator
            results.add(None if choice is None else (choice[tfapi.SYNC], choice[tfapi.AGG]))
            trainables.add(None if choice is None else choice.get(tfapi.TRAINABLE))
    after = trainables.pop() if len(trainables) == 1 else None
    if changed_by is None or len(results) != 1:
        return sync, agg, trainable if changed_by is None else after
    result = results.pop()
    if result is None:
        return sync, agg, after
    return _rewritten(sync, result[0], changed_by), _rewritten(agg, result[1], changed_by), \
        after


def _passed_trainable(api: tfapi.ApiSpec, passed: Optional[Tuple[Argument, bool]],
                      sync: Setting, unpacked: bool) -> Optional[str]:
    """What the API hands the variable creators for `trainable` (tfapi.CREATOR_LITERALS'
    form): a literal written, None left out of `tf.Variable` (settled after them), else
    the API's own default; None (not the literal) where it is not known."""
    literals = tfapi.CREATOR_LITERALS[tfapi.TRAINABLE]
    if passed is not None:
        value = passed[0].value
        return literals[bool(value.literal)] if value.kind == BOOL else None
    if api.family == tfapi.TF and not api.converts_values and not unpacked and \
            api.trainable_default == tfapi.TRAINABLE_NOT_ON_READ:
        return literals[None]
    default = _trainable(api, None, sync, unpacked)
    return None if default is None else literals[default]


def _settled_trainable(after: Optional[str], sync: Setting) -> Optional[bool]:
    """The trainable a variable gets from what the creators pass on (`_passed_trainable`'s
    form): None -- left for `tf.Variable` to settle -- is trainable unless ON_READ."""
    if after == tfapi.TRAINABLE_TRUE:
        return True
    if after == tfapi.TRAINABLE_FALSE:
        return False
    if after == tfapi.TRAINABLE_NOT_ON_READ and sync.member is not None:
        return sync.member != tfapi.SYNC_ON_READ
    return None


def _rewritten(setting: Setting, member: Optional[str], creator: Creator) -> Setting:
    if member == setting.member:
        return setting
    return Setting(member, setting.form, setting.arg, setting.positional, setting.intended,
                   creator, setting.member)


def normalise(call: CreationCall, fm: FileModel, index: ProjectIndex,
              contexts: Strategies,
              instances: Optional[Instances] = None) -> Optional[VariableSite]:
    api = api_for(call, fm, index, instances)
    if api is None:
        return None
    bound, unexpected, unpacked = _bind_arguments(call, api)
    sync = _setting(api, tfapi.SYNC, bound.get(tfapi.SYNC), unpacked)
    agg = _setting(api, tfapi.AGG, bound.get(tfapi.AGG), unpacked)
    site_contexts = contexts.contexts_at(fm.path, call.function, call.scopes)
    written_sync = sync
    trainable_passed = bound.get("trainable")
    # What the API takes trainable for: a Keras API settles a trainable left out from the
    # synchronization written, before any creator runs.
    written_trainable = _trainable(api, trainable_passed, written_sync, unpacked)
    passed = _passed_trainable(api, trainable_passed, written_sync, unpacked)
    after = passed
    if any(c.creators or (c.strategy is not None and any(o.creators for o in c.strategy.options))
           for c in site_contexts):
        sync, agg, after = _with_creators(sync, agg, passed, site_contexts)
    # tf.Variable settles a trainable left out from the synchronization it is given in
    # the end (after the creators); a creator may set it itself.
    trainable = _trainable(api, trainable_passed, sync if api.family == tfapi.TF
                           else written_sync, unpacked)
    if after != passed:
        trainable = _settled_trainable(after, sync)
    dtype_value = bound.get(api.dtype_param or "")
    dtype_source: Optional[Value] = dtype_value[0].value if dtype_value else None
    dtype = dtype_name(dtype_source)
    if dtype is None and dtype_source is None and api.initial_value_param:
        initial = bound.get(api.initial_value_param)
        if initial is not None:
            dtype_source = initial[0].value
            dtype = infer_dtype(dtype_source)
    if dtype is None and dtype_source is None and not unpacked and api.initial_value_param is None:
        dtype = "float32"  # get_variable and Keras weights default to float32
    return VariableSite(
        path=fm.path, call=call, api=api, sync=sync, agg=agg, trainable=trainable,
        trainable_arg=trainable_passed[0] if trainable_passed else None,
        dtype=dtype, dtype_source=dtype_source,
        contexts=site_contexts,
        unexpected=unexpected,
        written_trainable=written_trainable,
    )


def variable_sites(fm: FileModel, index: ProjectIndex, contexts: Strategies,
                   instances: Optional[Instances] = None) -> List[VariableSite]:
    sites = []
    for i, call in enumerate(fm.creations):
        site = normalise(call, fm, index, contexts, instances)
        if site is not None:
            site.index = i
            sites.append(site)
    return sites
