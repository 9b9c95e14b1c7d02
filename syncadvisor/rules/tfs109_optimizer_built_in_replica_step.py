from __future__ import annotations

from typing import Iterator, List, Optional, Tuple

from ..findings import Edit, Finding
from ..model import tfapi
from ..model.contexts import IN_STRATEGY, Context
from ..model.facts import BOUND_CALL, BOUND_NAMES, Bound, ObjectUse, ScopeEntry, Span
from ..model.usage import REPLICA
from .base import ERROR, UNSAFE, Expect, Invalid, Rule, RuleContext, judge, make_fix, snippet
from .keras_objects import literal, makes_slots, model_family, object_kind

class OptimizerBuiltInReplicaStep(Rule):
    """
    ## What it does
    Flags a Keras 3 optimizer that keeps variables of its own -- slot variables (Adam,
    AdamW, RMSprop, Adagrad, Nadam, Lion, ...; SGD only with `momentum` or `use_ema`), or
    LossScaleOptimizer's scale -- made in a strategy's
    scope, when every call that could build it is an `apply_gradients` (or `apply`) inside
    the function given to `strategy.run`, in code that runs traced: `strategy.run` called
    inside a `tf.function`, or the step itself a `tf.function`. Nothing builds it before:
    no `optimizer.build(...)` anywhere, no `model.compile(optimizer=...)` (whose `fit`
    builds it), no `apply_gradients` run eagerly. The finding is on the line that makes the
    optimizer (the name's assignment in the scope), and names the `apply_gradients` and
    the `strategy.run`.

    Not flagged: tf_keras optimizers (they make their slots as TF 1 code did, and train),
    SGD without momentum (no slot variables), `strategy.run` called eagerly, Keras' `fit`
    (it builds the optimizer itself), an optimizer the code builds, subclasses of the
    Keras optimizers (their `build` is theirs), and an optimizer given
    `gradient_accumulation_steps`: it applies its update under a cond, and that step
    raises the `merge_call` RuntimeError whether the optimizer is built or not. Only under MirroredStrategy with its
    default cross-device ops over two devices or more, where it was seen to raise: over one
    device, with `cross_device_ops=` given, under CentralStorageStrategy and under
    MultiWorkerMirroredStrategy (two workers of one CPU each) the same step trains.

    ## Why is this bad?
    A Keras 3 optimizer makes its slot variables lazily, in its first `apply_gradients`.
    Inside `strategy.run` in a `tf.function` that is replica context in a graph being
    traced, and the first distributed step fails with ``InvalidArgumentError: Graph
    execution error: ... You must feed a value for placeholder tensor`` (TensorFlow 2.21,
    Keras 3.15, MirroredStrategy over two devices; keras-team/keras#19246). TensorFlow's
    own tutorial "Custom training with tf.distribute.Strategy" is written this way. It
    runs with one replica, under OneDeviceStrategy, run eagerly, and under `fit`; a
    tf_keras optimizer trains; building the optimizer in the scope fixes it.

    ## Example
    ```python
    with strategy.scope():
        model = create_model()
        optimizer = tf.keras.optimizers.Adam()

    def train_step(inputs):
        ...
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))

    @tf.function
    def distributed_train_step(inputs):
        return strategy.run(train_step, args=(inputs,))
    ```
    Use instead (with a model that is built, e.g. whose first layer is a `keras.Input`):
    ```python
    with strategy.scope():
        model = create_model()
        optimizer = tf.keras.optimizers.Adam()
        optimizer.build(model.trainable_variables)
    ```

    ## Fix safety
    Unsafe: it adds `optimizer.build(model.trainable_variables)` to the
    `with strategy.scope():` block, after the statements that make the optimizer and the
    model, where the model is built by then -- its first layer a `keras.Input`/
    `InputLayer` or a layer given `input_shape=`/`input_dim=`, a functional
    `Model(inputs, outputs)`, or a `model.build(...)` in the block. The optimizer then
    makes its variables there, in cross-replica context. Where the model is built only by
    its first call (its input shape is not in the code), there is no fix: the message says
    to build the model first (`model.build(input_shape)` or a `keras.Input`), then the
    optimizer.
    """

    code = "TFS109"
    name = "optimizer-built-in-replica-step"
    severity = ERROR
    summary = ("a Keras 3 optimizer with slot variables first built by `apply_gradients` "
               "inside `strategy.run` in a `tf.function`")
    fix_availability = "unsafe"

    VALID = [
        snippet("""
            import keras
            import tensorflow as tf
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
                optimizer = keras.optimizers.Adam()
                optimizer.build(model.trainable_variables)
            def step(x):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_sum(model(x))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
            @tf.function
            def train(x):
                strategy.run(step, args=(x,))
        """),
        snippet("""
            import keras
            import tensorflow as tf
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
                optimizer = keras.optimizers.SGD(0.1)  # no momentum: no slot variables
            def step(x):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_sum(model(x))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
            @tf.function
            def train(x):
                strategy.run(step, args=(x,))
        """),
        snippet("""
            import keras
            import tensorflow as tf
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
                optimizer = keras.optimizers.Adam()
            def step(x):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_sum(model(x))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
            strategy.run(step, args=(tf.ones((2, 4)),))  # eager: runs
        """),
        snippet("""
            import keras
            import tensorflow as tf
            strategy = tf.distribute.MirroredStrategy(  # no collective all-reduce: it runs
                cross_device_ops=tf.distribute.ReductionToOneDevice())
            with strategy.scope():
                model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
                optimizer = keras.optimizers.Adam()
            def step(x):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_sum(model(x))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
            @tf.function
            def train(x):
                strategy.run(step, args=(x,))
        """),
        snippet("""
            import keras
            import tensorflow as tf
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
                optimizer = keras.optimizers.Adam()
                model.compile(optimizer=optimizer, loss="mse")  # `fit` builds it
            def step(x):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_sum(model(x))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
            @tf.function
            def train(x):
                strategy.run(step, args=(x,))
        """),
        snippet("""
            import tensorflow as tf
            import tf_keras
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                model = tf_keras.Sequential([tf_keras.layers.Dense(1)])
                optimizer = tf_keras.optimizers.Adam()
            def step(x):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_sum(model(x))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
            @tf.function
            def train(x):
                strategy.run(step, args=(x,))
        """),
    ]
    INVALID = [
        Invalid(
            snippet("""
                import keras
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
                    optimizer = keras.optimizers.Adam()
                def step(x):
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_sum(model(x))
                    grads = tape.gradient(loss, model.trainable_variables)
                    optimizer.apply_gradients(zip(grads, model.trainable_variables))
                @tf.function
                def train(x):
                    strategy.run(step, args=(x,))
            """),
            (Expect(6, 17, ERROR),),
            unsafe_fixed=snippet("""
                import keras
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
                    optimizer = keras.optimizers.Adam()
                    optimizer.build(model.trainable_variables)
                def step(x):
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_sum(model(x))
                    grads = tape.gradient(loss, model.trainable_variables)
                    optimizer.apply_gradients(zip(grads, model.trainable_variables))
                @tf.function
                def train(x):
                    strategy.run(step, args=(x,))
            """),
        ),
        Invalid(  # the model is built only by its first call: no fix, the message says what
            snippet("""
                import keras
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    model = keras.Sequential([keras.layers.Dense(1)])
                    optimizer = keras.optimizers.SGD(0.1, momentum=0.9)
                @tf.function
                def step(x):
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_sum(model(x))
                    grads = tape.gradient(loss, model.trainable_variables)
                    optimizer.apply_gradients(zip(grads, model.trainable_variables))
                strategy.run(step, args=(tf.ones((2, 4)),))
            """),
            (Expect(6, 17, ERROR),),
        ),
        Invalid(  # built by `model.build(...)` in the block: the optimizer is built after it
            snippet("""
                import keras
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    optimizer = keras.optimizers.RMSprop()
                    model = keras.Sequential([keras.layers.Dense(1)])
                    model.build((None, 4))
                def step(x):
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_sum(model(x))
                    grads = tape.gradient(loss, model.trainable_variables)
                    optimizer.apply_gradients(zip(grads, model.trainable_variables))
                @tf.function
                def train(x):
                    strategy.run(step, args=(x,))
            """),
            (Expect(5, 17, ERROR),),
            unsafe_fixed=snippet("""
                import keras
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    optimizer = keras.optimizers.RMSprop()
                    model = keras.Sequential([keras.layers.Dense(1)])
                    model.build((None, 4))
                    optimizer.build(model.trainable_variables)
                def step(x):
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_sum(model(x))
                    grads = tape.gradient(loss, model.trainable_variables)
                    optimizer.apply_gradients(zip(grads, model.trainable_variables))
                @tf.function
                def train(x):
                    strategy.run(step, args=(x,))
            """),
        ),
    ]

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for (made_path, made), (obj, calls) in ctx.object_calls().items():
            # reported where it is made or where a call on it names it (`_reported_at`)
            if made_path != ctx.path and all(path != ctx.path for _, path, _, _ in calls):
                continue
            uses = [(use, path, count) for use, path, count, handed in calls
                    if not handed or use.method == tfapi.COMPILE_METHOD]
            finding = self._finding(ctx, obj, made_path, made, uses)
            if finding is not None:
                yield finding

    def _finding(self, ctx: RuleContext, obj, made_path: str, made: Span,
                 uses: List[Tuple[ObjectUse, str, int]]) -> Optional[Finding]:
        key = str(obj.key)
        family, kind, cls = object_kind(key, ctx)
        if kind != tfapi.OPTIMIZER or family != tfapi.KERAS3 or not key.startswith(tfapi.KERAS3_PREFIX):
            return None
        if cls not in tfapi.KERAS3_OPTIMIZERS_WITH_SLOTS and not (
                cls in tfapi.KERAS3_SLOT_OPTIONS and
                makes_slots(ctx.construction_at(made_path, made), cls) is True):
            return None
        if _accumulates(ctx.construction_at(made_path, made)):
            return None  # its step raises, built or not: not the failure this rule describes
        if any(use.method not in tfapi.OPTIMIZER_APPLY_METHODS for use, _, _ in uses):
            return None  # built, compiled (and so built by `fit`), or used as we cannot tell
        ways = [_traced_ways(ctx, use) for use, _, _ in uses]
        if not uses or any(w is None for w in ways):
            return None  # some call may build it eagerly, or where nothing is seen
        made_in = ctx.creation_contexts(*obj.origin)
        if not made_in or any(c.kind != IN_STRATEGY for c in made_in):
            return None  # made outside the scope: TFS108's
        sole = [(use, path, w) for (use, path, count), w in zip(uses, ways) if count == 1]
        if not sole:
            return None
        use, path, wheres = sole[0]
        where = wheres[0]
        at, fix_at = _reported_at(use, path, made_path, made)
        if at[0] != ctx.path:
            return None
        if not all(_collective_replicas(ctx, w.strategy) for w in wheres):
            return None
        contexts = [Context(IN_STRATEGY, w.strategy) for w in wheres if w.strategy is not None]
        verdict = judge(contexts, tfapi.OPTIMIZER_BUILT_IN_STEP_STRATEGIES, ctx.path,
                        ctx.settings.assume_strategy, ctx.note)
        if verdict is None:
            return None
        name = use.receiver.text
        applied = ctx.at(f"`.{use.method}(...)`", path, use.span)
        entered = ctx.at(where.via, *where.at)
        fix, advice = _fix(ctx, use, path, fix_at)
        message = (f"`{name}` (Keras 3 {cls}) is first built by {applied} in traced replica "
                   f"code ({entered}): raises {tfapi.OPTIMIZER_BUILT_IN_STEP_ERROR} "
                   f"{verdict.where} with more than one replica; {advice}")
        return ctx.finding(at[1], message, verdict.severity, fix)


def _accumulates(construction) -> bool:
    """Whether an optimizer's construction gives `gradient_accumulation_steps` a value that
    may accumulate (anything but a literal None or 0)."""
    if construction is None:
        return False
    for argument in construction.args:
        if argument.keyword == tfapi.KERAS3_GRADIENT_ACCUMULATION_ARGUMENT:
            known, value = literal(argument.value)
            return not known or value not in tfapi.KERAS3_NO_ACCUMULATION_VALUES
    return False


def _traced_ways(ctx: RuleContext, use: ObjectUse):
    """The ways into the function of `use`, sorted, when each is a `strategy.run` that
    runs it traced; None when some way in is not (eager, cross-replica, Keras's own, or
    none seen)."""
    wheres = sorted(ctx.where_at(use.function),
                    key=lambda w: (w.at[0], w.at[1].line, w.at[1].column) if w.at else ("", 0, 0))
    if not wheres or any(w.kind != REPLICA or w.at is None or w.strategy is None or
                         not ctx.traced_path(w, use.function) for w in wheres):
        return None
    return wheres


def _collective_replicas(ctx: RuleContext, strategy) -> bool:
    """Whether no MirroredStrategy the strategy may be is made with its own
    `cross_device_ops` (the default, collective all-reduce, is where the step raises; with
    ReductionToOneDevice or HierarchicalCopyAllReduce it runs) or with a literal list of
    fewer than two devices (one replica: it runs)."""
    for option in strategy.options:
        if option.kind != tfapi.MIRRORED or option.path is None:
            continue
        for construction in ctx.model_at(option.path).constructions:
            if construction.span.line != option.line or \
                    tfapi.STRATEGY_CONSTRUCTORS.get(construction.callee.qname or "") != tfapi.MIRRORED:
                continue
            if _argument(construction, tfapi.STRATEGY_CROSS_DEVICE_OPS_ARGUMENT) is not None:
                return False
            devices = _argument(construction, tfapi.STRATEGY_DEVICES_ARGUMENT)
            if devices is not None and devices.value.args and len(devices.value.args) < 2:
                return False
    return True


def _argument(construction, spec: Tuple[str, int]):
    """The argument given for a parameter (keyword, position), or None."""
    keyword, position = spec
    for i, argument in enumerate(construction.args):
        if argument.star:
            return argument  # `*args`/`**kwargs` may hold it: taken as given
        if argument.keyword == keyword or (argument.keyword is None and i == position):
            return argument
    return None


def _binding(bound: Bound) -> Optional[Bound]:
    """The one call a plain name is bound to (`optimizer` of `optimizer = Adam()`)."""
    if bound.kind != BOUND_NAMES or len(bound.options) != 1 or not bound.text.isidentifier():
        return None
    option = bound.options[0]
    return option if option.kind == BOUND_CALL and option.span is not None else None


def _reported_at(use: ObjectUse, path: str, made_path: str, made: Span
                 ) -> Tuple[Tuple[str, Span], Optional[Span]]:
    """Where the finding goes: the call the optimizer's name is bound to in the module of
    the step that names it (the statement a fix adds to the scope after), else the call
    that makes it; and that binding, if there is one."""
    binding = _binding(use.receiver)
    if binding is None or binding.span is None:
        return (made_path, made), None
    return (path, binding.span), binding.span


def _fix(ctx: RuleContext, use: ObjectUse, path: str, optimizer_at: Optional[Span]):
    """The fix (None where there is none) and what the message advises."""
    models = [b for _, b in use.passed]
    model = _binding(models[0]) if len(models) == 1 else None
    name = use.receiver.text
    model_name = models[0].text if len(models) == 1 else "the model"
    build = f"{name}.build({model_name}.{tfapi.TRAINABLE_VARIABLES})"
    advice = (f"in the scope, build `{model_name}` (`{model_name}.build(input_shape)` or a "
              f"`keras.Input` first), then `{build}`")
    if optimizer_at is None or model is None or model.span is None or path != ctx.path:
        return None, advice
    objects = ctx.constructions(models[0], path)
    if len(objects) != 1 or model_family(str(objects[0].key), ctx) != tfapi.KERAS3:
        return None, advice
    entry, statements = _block(ctx, [optimizer_at, model.span])
    if entry is None:
        return None, advice
    built = _built_after(ctx, objects[0], entry, path, models[0])
    if built is None:
        return None, advice
    after = max(statements + ([built] if built is not True else []),
                key=lambda s: (s.end_line, s.end_column))
    indent = " " * entry.statements[0].column
    edit = Edit(after.end_line + 1, 1, after.end_line + 1, 1,
                f"{indent}{build}{ctx.model.newline}")
    fix = make_fix(UNSAFE, f"Build the optimizer in the scope: add `{build}` after line "
                           f"{after.end_line}", edit)
    return fix, f"add `{build}` to the scope"


def _block(ctx: RuleContext, spans: List[Span]) -> Tuple[Optional[ScopeEntry], List[Span]]:
    """The strategy scope of this file whose block holds each of `spans` in a statement of
    its own level, and those statements."""
    for entry in ctx.model.scopes:
        if entry.creator != -1 or not entry.statements:
            continue
        held = [_statement(entry, span) for span in spans]
        if all(s is not None for s in held):
            return entry, [s for s in held if s is not None]
    return None, []


def _statement(entry: ScopeEntry, span: Span) -> Optional[Span]:
    for statement in entry.statements:
        if (statement.line, statement.column) <= (span.line, span.column) and \
                (span.end_line, span.end_column) <= (statement.end_line, statement.end_column):
            return statement
    return None


def _built_after(ctx: RuleContext, model, entry: ScopeEntry, path: str, bound: Bound):
    """True where the model is built when it is made (a Sequential whose first layer is an
    input, a functional Model); the statement of the block that builds it
    (`model.build(...)`); None where neither is seen."""
    made, made_path = model.origin
    key = str(model.key)
    if key in tfapi.KERAS_SEQUENTIAL_CLASSES and made.span is not None:
        inside = [edge for edge in ctx.model_at(made_path).calls
                  if edge.span != made.span and _within(edge.span, made.span)]
        if inside:
            first = min(inside, key=lambda e: (e.span.line, e.span.column))
            if first.callee.qname in tfapi.KERAS_INPUT_CALLS:
                return True
            layer = ctx.construction_at(made_path, first.span)
            if layer is not None and any(a.keyword in tfapi.KERAS3_LAYER_INPUT_SHAPE_ARGUMENTS
                                         for a in layer.args):
                return True
    if key in tfapi.KERAS_FUNCTIONAL_CLASSES and made.span is not None:
        construction = ctx.construction_at(made_path, made.span)
        if construction is not None:
            keywords = {a.keyword for a in construction.args}
            positional = sum(1 for a in construction.args if a.keyword is None and not a.star)
            if positional >= 2 or set(tfapi.FUNCTIONAL_MODEL_ARGUMENTS) <= keywords:
                return True
    for use in ctx.model.uses:
        if use.method == tfapi.OPTIMIZER_BUILD_METHOD and use.receiver.text == bound.text:
            objects = ctx.constructions(use.receiver, path)
            if len(objects) == 1 and objects[0].origin == model.origin:
                statement = _statement(entry, use.span)
                if statement is not None:
                    return statement
    return None


def _within(inner: Span, outer: Span) -> bool:
    return (outer.line, outer.column) <= (inner.line, inner.column) and \
        (inner.end_line, inner.end_column) <= (outer.end_line, outer.end_column)

