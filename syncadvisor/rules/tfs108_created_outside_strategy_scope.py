from __future__ import annotations

from typing import Any, Iterator, List, Optional, Set, Tuple

from ..findings import UNSAFE, Edit, Finding, Fix
from ..model import tfapi
from ..model.contexts import (IN_STRATEGY, NO_STRATEGY, UNKNOWN, Context, Pair, Placed,
                              Strategy, paired)
from ..model.usage import REPLICA
from ..model.facts import BOUND_CALL, BOUND_NAMES, Bound, Span
from .base import ERROR, WARNING, Expect, Invalid, Rule, RuleContext, runs_it, snippet
from .keras_objects import makes_slots, model_family, object_kind


def _objects_differ(a: Strategy, b: Strategy) -> bool:
    """Two strategy objects are surely different when every way of building them differs."""
    if tfapi.ANY_STRATEGY in a.kinds or tfapi.ANY_STRATEGY in b.kinds:
        return False
    ours = {(o.path, o.line) for o in a.options}
    theirs = {(o.path, o.line) for o in b.options}
    return not ours & theirs and None not in {o.line for o in a.options + b.options}


def _tpu_raw_assign(site, made: Strategy, used: Strategy) -> bool:
    """A TPU variable assigned inside a TPU computation skips the strategy check.

    tensorflow/python/distribute/tpu_values.py: `TPUMirroredVariable.assign`/`assign_add`/
    `assign_sub` (and `TPUOnWritePolicy`'s), inside `tpu_util.enclosing_tpu_context()` and
    with aggregation NONE, and `TPUSyncOnReadVariable`'s (and `TPUOnReadPolicy`'s) always,
    call `tpu_util.make_raw_assign_fn(...)` on the handle instead of `var._update`, so
    `distribute_lib.enter_or_assert_strategy` -- which raises "Mixing different
    tf.distribute.Strategy objects" -- never runs."""
    if tfapi.TPU not in made.kinds or tfapi.TPU not in used.kinds:
        return False
    return site.sync.member == tfapi.SYNC_ON_READ or site.agg.member == tfapi.AGG_NONE


def _outer_call(bound: Bound, depth: int = 0) -> Optional[Bound]:
    """The call a name was last bound to in the code that uses it (`model = build()`)."""
    if bound.kind == BOUND_CALL and bound.span is not None:
        return bound
    if bound.kind == BOUND_NAMES and depth < 4:
        for option in bound.options:
            found = _outer_call(option, depth + 1)
            if found is not None:
                return found
    return None


def _move_into_scope(ctx: RuleContext, call: Bound, use) -> Optional[Fix]:
    """Move `name = <call>` into the `with X.scope():` block around `use`, where the
    statement is in that block's own list before it, alone on its lines, and nothing
    between them reads or rebinds `name` or rebinds what the call reads."""
    span = call.span
    fm = ctx.model
    if span is None:
        return None
    entry = next((fm.scopes[i] for i in reversed(use.scopes) if fm.scopes[i].creator == -1
                  and ctx.scope_context(fm.path, (i,)) is not None), None)
    if entry is None or entry.body is None:
        return None
    preceding = entry.preceding
    k = next((k for k, p in enumerate(preceding)
              if p.target is not None and p.value == (span.line, span.column)), None)
    if k is None:
        return None
    moved = preceding[k]
    name, reads = moved.target, set(moved.reads)
    if name in entry.item_reads or '"""' in moved.text or "'''" in moved.text:
        return None
    for between in preceding[k + 1:]:
        if name in between.reads or name in between.binds or reads & set(between.binds):
            return None
    line, prefix = entry.body
    lines = moved.text.splitlines()
    indent = min(len(t) - len(t.lstrip()) for t in lines if t.strip())
    newline = fm.newline  # (the file's own: a CRLF file is fixed as its LF twin is)
    text = "".join(prefix + t[indent:] + newline if t.strip() else newline for t in lines)
    return Fix(UNSAFE, f"Move `{name} = ...` into `with {entry.text}.scope():`",
               (Edit(moved.line, 1, moved.end_line + 1, 1, ""), Edit(line, 1, line, 1, text)))


class CreatedOutsideStrategyScope(Rule):
    """
    ## What it does
    Flags a Keras model built outside the `strategy.scope()` in which it is then compiled
    or trained, or whose variables are handed to an optimizer
    (`apply_gradients(zip(grads, model.trainable_variables))`, `minimize(loss,
    var_list=model.trainable_weights)`) under a strategy it was not built under -- the
    one of the `strategy.run` or scope that runs the call, else, for a Keras 3 optimizer,
    the scope the optimizer was made in; a Keras optimizer or metric made outside the scope in which it is handed
    to `model.compile(optimizer=..., metrics=[...])` or used by `optimizer.build`,
    `apply_gradients` or `minimize` (in the scope, in a function called from it, or in a
    function given to `strategy.run`); and a variable created outside the scope (or under
    another strategy) of the `strategy.run` that updates it. The object is followed
    through names, `self` attributes, module globals, return values and the parameters
    of a project class's `__init__`: an optimizer handed to `Trainer(model, optimizer)`
    (by position or keyword, to the class or a subclass that inherits its `__init__`)
    and stored as `self.optimizer` is flagged where a method uses `self.optimizer` that
    way; the strategy is the one of the `strategy.run` or scope the method runs under,
    or, when nothing in the run calls the method, the scope the trainer is constructed
    in. An object a trainer only keeps (never compiled with, built or applied) is not
    flagged. A model's variables are seen only as its `trainable_variables`,
    `trainable_weights`, `variables` or `weights` written in the call's argument (through
    `zip`, `list`, `tuple`, `+` and list displays), not through a name bound to them
    first. Not followed yet: the parameters of a plain function or method (an
    optimizer handed to `train(model, optimizer)` is never flagged), arguments given
    through `*args`/`**kwargs` or as other expressions than a name or attribute, and a
    parameter copied to a local name before it is stored (`opt = optimizer`).

    Each object is judged on the paths it can take. A helper that makes and uses an
    object runs under each caller's scope: called under two strategies, or outside any
    scope and never handed to a strategy there, it is two correct runs (no finding). A
    factory's object is judged at the call that makes it for the code that uses it,
    and the finding goes to the outermost call made outside the scope (`opt =
    build_optimizer()`), where `with strategy.scope():` goes. Where the calls of a
    function give it different contexts, an error names the call it fails on ("when
    `train(...)` at line 28 runs it"); where the run cannot tell which of several
    contexts made the object that is used, it makes no claim.

    ## Why is this bad?
    A model's variables belong to the strategy that was current when they were made.
    tf_keras refuses it in `compile`: ``ValueError: Variable (...) was not created in the
    distribution strategy scope of (...)``. Keras 3 compiles it and then fails in `fit`
    (a bare `AssertionError`, or ``ValueError: `colocate_vars_with` must only be passed a
    variable created in this tf.distribute.Strategy.scope()``). Handed to an optimizer's
    `apply_gradients` (or `minimize`) under a strategy, the variables of a model built
    outside it make either family raise that ValueError when the optimizer makes its
    slot variables beside them (transformers' TFTrainer, #4456); a Keras 3 optimizer
    with no slot variables (SGD without momentum) fails instead with a bare
    AssertionError in `extended.update` for a model built outside any scope, and runs
    with one built under another strategy object (not flagged). A Keras 3 optimizer
    keeps the strategy current in its `__init__`: made outside, `optimizer = Adam()` then
    `model.compile(optimizer=optimizer)` inside the scope raises ``RuntimeError: Mixing
    different tf.distribute.Strategy objects`` in `fit`, when it builds its slot
    variables. Keras 3's SGD has slots only with `momentum` other than 0, `use_ema` or
    `gradient_accumulation_steps` (keras/src/optimizers/sgd.py `build`; `nesterov` alone
    adds none): given as a non-zero literal or as anything but a literal (by keyword or
    by position), it raises as any other optimizer (an error); left out or written as
    0/False/None, it runs (a warning that adding one makes it raise). A tf_keras optimizer
    made outside runs (it makes its slots under the strategy current when it builds), so
    it is not flagged. A tf_keras metric made outside raises
    ``ValueError: Metric (...) passed to `model.compile` was created inside a different
    distribution strategy scope``; a Keras 3 metric made outside runs (not flagged). An
    optimizer, metric or variable made under another strategy object raises
    ``RuntimeError: Mixing different tf.distribute.Strategy objects`` -- except a
    replica-context assign of a TPU variable (ON_READ, or aggregation NONE) inside
    another TPUStrategy's `run`: `TPUMirroredVariable.assign*` and
    `TPUSyncOnReadVariable.assign*` in tensorflow/python/distribute/tpu_values.py assign
    through `tpu_util.make_raw_assign_fn` there, never reaching the strategy check
    (`distribute_lib.enter_or_assert_strategy`), so nothing raises and nothing is
    claimed. A plain `tf.Variable` made outside any scope raises nothing: the replicas
    share it and update it one after the other, and the result depends on their order.

    ## Example
    ```python
    model = build_model()
    optimizer = keras.optimizers.SGD(0.1, momentum=0.9)
    with strategy.scope():
        model.compile(optimizer=optimizer, loss="mse")
    model.fit(dataset)
    ```
    Use instead:
    ```python
    with strategy.scope():
        model = build_model()
        optimizer = keras.optimizers.SGD(0.1, momentum=0.9)
        model.compile(optimizer=optimizer, loss="mse")
    model.fit(dataset)
    ```
    The same holds for `trainer = Trainer(model, optimizer)` under the scope, with an
    optimizer made outside it, once the trainer's step applies gradients; and for
    `Trainer(model, args)` with the model built outside any scope, when the trainer makes
    its optimizer under `args.strategy.scope()` and its `strategy.run` step applies
    gradients to `self.model.trainable_variables`.

    ## Fix safety
    Unsafe: where the outermost call made outside the scope is a statement `name =
    call(...)` of its own, in the same block of the same function as the `with
    strategy.scope():` that uses it, and nothing between them reads or rebinds `name`
    or rebinds a name the call reads, the fix moves that statement to the top of the
    `with` block. It changes where the object's variables live, which is the point, and
    moves the call past the statements between, which may do something it depends on
    (set a mixed-precision policy, seed a generator): hence unsafe. Elsewhere the message
    names both places (and the constructor an object is handed to).
    """

    code = "TFS108"
    name = "created-outside-strategy-scope"
    severity = ERROR
    summary = ("a model, optimizer, metric or variable created outside the strategy scope "
               "(or under another strategy) it is used in")
    fix_availability = "unsafe"

    VALID = [
        snippet("""
            import tensorflow as tf
            first = tf.distribute.MirroredStrategy()
            second = tf.distribute.MirroredStrategy()
            def build_and_compile():
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile(optimizer=tf.keras.optimizers.Adam(), loss='mse')
                return model
            with first.scope():
                one = build_and_compile()
            with second.scope():
                two = build_and_compile()
        """),
        snippet("""
            import keras
            import tensorflow as tf
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                model = keras.Sequential([keras.layers.Dense(1)])
                model.compile(loss='mse')
            model.fit([[1.]], [[1.]])
        """),
        snippet("""
            import tensorflow as tf
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                optimizer = tf.keras.optimizers.Adam()
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                model.compile(optimizer=optimizer, loss='mse')
            model.fit([[1.]], [[1.]])
        """),
        snippet("""
            import tf_keras
            import tensorflow as tf
            strategy = tf.distribute.MirroredStrategy()
            optimizer = tf_keras.optimizers.Adam()  # tf_keras makes its slots when it builds
            with strategy.scope():
                model = tf_keras.Sequential([tf_keras.layers.Dense(1)])
                model.compile(optimizer=optimizer, loss='mse')
            model.fit([[1.]], [[1.]])
        """),
        snippet("""
            import tensorflow as tf
            train = tf.distribute.TPUStrategy(resolver)
            evaluate = tf.distribute.TPUStrategy(resolver)
            with train.scope():
                seen = tf.Variable(0.)
            def step(x):
                seen.assign_add(x)  # raw TPU assign: no strategy check
            evaluate.run(step, args=(1.,))
        """),
    ]
    VALID += [
        snippet("""
            import keras
            import tensorflow as tf
            class Recorder:
                def __init__(self, optimizer):
                    self.optimizer = optimizer  # kept for its config, never trained with
            strategy = tf.distribute.MirroredStrategy()
            optimizer = keras.optimizers.Adam()
            with strategy.scope():
                recorder = Recorder(optimizer)
        """),
    ]
    VALID += [
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
            strategy.run(step, args=([[1.]],))
        """),
    ]
    INVALID = [
        Invalid(
            snippet("""
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                def build_optimizer():
                    return tf.keras.optimizers.Adam()
                optimizer = build_optimizer()
                with strategy.scope():
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.compile(optimizer=optimizer, loss='mse')
            """),
            (Expect(5, 13, ERROR),),
            unsafe_fixed=snippet("""
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                def build_optimizer():
                    return tf.keras.optimizers.Adam()
                with strategy.scope():
                    optimizer = build_optimizer()
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.compile(optimizer=optimizer, loss='mse')
            """),
        ),
        Invalid(
            snippet("""
                import keras
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                model = keras.Sequential([keras.layers.Dense(1)])
                with strategy.scope():
                    model.compile(loss='mse')
                    model.fit([[1.]], [[1.]])
            """),
            (Expect(4, 9, ERROR),),
        ),
        Invalid(
            snippet("""
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                total = tf.Variable(0.)
                def step(x):
                    total.assign_add(x)
                strategy.run(step, args=(1.,))
            """),
            (Expect(3, 9, WARNING),),
        ),
        Invalid(
            snippet("""
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                optimizer = tf.keras.optimizers.Adam()
                with strategy.scope():
                    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    model.compile(optimizer=optimizer, loss='mse')
                model.fit([[1.]], [[1.]])
            """),
            (Expect(3, 13, ERROR),),
        ),
        Invalid(
            snippet("""
                import keras
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                sgd = keras.optimizers.SGD(0.1, momentum=0.9)  # momentum slots
                with strategy.scope():
                    model = keras.Sequential([keras.layers.Dense(1)])
                    model.compile(sgd, 'mse')
            """),
            (Expect(4, 7, ERROR),),
        ),
        Invalid(
            snippet("""
                import keras
                import tensorflow as tf
                class Trainer:
                    def __init__(self, model, optimizer):
                        self.model = model
                        self.optimizer = optimizer
                    def step(self, grads):
                        self.optimizer.apply_gradients(zip(grads, self.model.weights))
                strategy = tf.distribute.MirroredStrategy()
                optimizer = keras.optimizers.Adam()
                with strategy.scope():
                    model = keras.Sequential([keras.layers.Dense(1)])
                    trainer = Trainer(model, optimizer)
            """),
            (Expect(10, 13, ERROR),),
        ),
        Invalid(
            snippet("""
                import tensorflow as tf
                import tf_keras
                strategy = tf.distribute.MirroredStrategy()
                auc = tf_keras.metrics.AUC()
                with strategy.scope():
                    model = tf_keras.Sequential([tf_keras.layers.Dense(1)])
                    model.compile(optimizer='adam', loss='mse', metrics=[auc])
            """),
            (Expect(4, 7, ERROR),),
        ),
    ]

    INVALID += [
        Invalid(
            snippet("""
                import tensorflow as tf
                import tf_keras
                class Trainer:
                    def __init__(self, model, strategy):
                        self.model = model
                        self.strategy = strategy
                    def train(self, x):
                        with self.strategy.scope():
                            self.optimizer = tf_keras.optimizers.Adam()
                        self.strategy.run(self.step, args=(x,))
                    def step(self, x):
                        with tf.GradientTape() as tape:
                            loss = tf.reduce_sum(self.model(x))
                        grads = tape.gradient(loss, self.model.trainable_variables)
                        self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
                model = tf_keras.Sequential([tf_keras.layers.Dense(1)])
                Trainer(model, tf.distribute.MirroredStrategy()).train([[1.]])
            """),
            (Expect(16, 9, ERROR),),
        ),
    ]

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        yield from self._variables(ctx)
        reported: Set[Tuple[int, int]] = set()
        yield from self._models(ctx, reported)
        yield from self._handed_models(ctx, reported)
        yield from self._objects(ctx)

    def _variables(self, ctx: RuleContext) -> Iterator[Finding]:
        for site in ctx.sites:
            finding = self._variable_finding(ctx, site)
            if finding is not None:
                yield finding

    def _variable_finding(self, ctx: RuleContext, site) -> Optional[Finding]:
        created: List[Context] = list(site.contexts)
        for update in site.updates:
            for where in update.in_replica():
                if where.strategy is not None:
                    finding = self._compare(ctx, site, created, where.strategy,
                                            f"`.{update.method}` in {ctx.via(where)}",
                                            replica=True)
                    if finding is not None:
                        return finding
            for context in update.contexts:  # `with other.scope(): v.assign_add(1.)`
                if context.kind == IN_STRATEGY and context.strategy is not None:
                    finding = self._compare(
                        ctx, site, created, context.strategy,
                        ctx.at(f"`.{update.method}`", update.path, update.span),
                        plain_outside=False)
                    if finding is not None:
                        return finding
        return None

    def _compare(self, ctx: RuleContext, site, created: List[Context], used: Strategy,
                 use: str, plain_outside: bool = True, replica: bool = False
                 ) -> Optional[Finding]:
        # Each context it is created in may be another variable (one per call of the
        # function that creates it): one of them is the one updated only where it is
        # the only one, or where every one would be wrong.
        pairs = [Pair(context, Context(IN_STRATEGY, used), len(created) == 1)
                 for context in created]

        def mixes(pair: Pair) -> bool:
            mixed = _mixed(pair)
            return mixed is not None and not (replica and _tpu_raw_assign(site, *mixed))

        pair = _raising(pairs, mixes)
        if pair is not None:
            made, _ = _mixed(pair)  # type: ignore[misc]
            return ctx.finding(
                site.call.span,
                f"`{site.name}` is created under {ctx.describe(made)} "
                f"but updated under {ctx.describe(used)} ({use}): RuntimeError "
                f"(\"Mixing different tf.distribute.Strategy objects\")", ERROR)
        if plain_outside and site.family == tfapi.TF and \
                _raising(pairs, lambda p: _outside(p) is not None) is not None:
            return ctx.finding(
                site.call.span,
                f"`{site.name}` is created outside any strategy scope but updated under "
                f"{ctx.describe(used)} ({use}): the replicas share one plain variable "
                f"and update it one after the other; create it inside `with "
                f"{used.text}.scope():`", WARNING)
        return None

    def _models(self, ctx: RuleContext, reported: Set[Tuple[int, int]]) -> Iterator[Finding]:
        fm = ctx.model
        for use in fm.uses:
            if use.method not in tfapi.MODEL_TRAINING_METHODS:
                continue
            lexical = ctx.scope_context(fm.path, use.scopes)
            if lexical is None or lexical.strategy is None:
                continue
            outer = _outer_call(use.receiver)
            if outer is None or outer.span is None:
                continue
            families = {model_family(str(o.key), ctx)
                        for o in ctx.constructions(use.receiver, fm.path)} - {None}
            if not families:
                continue
            made_at = ctx.call_place(outer, fm.path)
            if made_at is None or (outer.span.line, outer.span.column) in reported:
                continue
            pairs = ctx.pairs(made_at, (fm.path, use.function, use.scopes))
            message = self._model_message(ctx, use, outer, pairs, families)
            if message is not None:
                reported.add((outer.span.line, outer.span.column))
                yield ctx.finding(outer.span, message, ERROR, _move_into_scope(ctx, outer, use))

    @staticmethod
    def _model_message(ctx, use, outer: Bound, pairs: List[Pair], families) -> Optional[str]:
        pair = _raising(pairs, lambda p: _mixed(p) is not None)
        if pair is not None:
            made, strategy = _mixed(pair)  # type: ignore[misc]
            used = (f"{ctx.at(f'`.{use.method}`', ctx.path, use.span)} under "
                    f"{ctx.describe(strategy)}{_when(ctx, pair.via)}")
            return (f"`{outer.text}` is built under {ctx.describe(made)} "
                    f"but used in {used}: RuntimeError (\"Mixing different "
                    f"tf.distribute.Strategy objects\")")
        pair = _raising(pairs, lambda p: _outside(p) is not None)
        if pair is None:
            return None
        strategy = _outside(pair)
        used = (f"{ctx.at(f'`.{use.method}`', ctx.path, use.span)} under "
                f"{ctx.describe(strategy)}{_when(ctx, pair.via)}")
        if tfapi.KERAS2 in families:
            outcome = ("tf_keras raises ValueError in `compile` (\"Variable ... was not created in "
                       "the distribution strategy scope\")")
        else:
            outcome = ("Keras 3 compiles it, then `fit` fails (AssertionError, or \"`colocate_vars_with` "
                       "must only be passed a variable created in this tf.distribute.Strategy.scope()\")")
        return (f"the model `{outer.text}` is built outside the strategy scope but used in {used}: "
                f"{outcome}; build it inside `with {strategy.text}.scope():`")  # type: ignore[union-attr]

    def _handed_models(self, ctx: RuleContext, reported: Set[Tuple[int, int]]
                       ) -> Iterator[Finding]:
        """Models built in this file whose variables an optimizer is handed
        (`apply_gradients(zip(grads, model.trainable_variables))`, `minimize(loss,
        model.trainable_variables)`) under a strategy they were not built under."""
        fm = ctx.model
        for use in fm.uses:
            if use.method not in tfapi.OPTIMIZER_VARIABLE_ARGUMENTS or not use.passed:
                continue
            optimizers = [(obj, *object_kind(str(obj.key), ctx)[::2])
                          for obj in ctx.constructions(use.receiver, fm.path)]
            used_at = (fm.path, use.function, use.scopes)
            replica = self._replica_strategies(ctx, use)
            scoped = any(c.kind == IN_STRATEGY for c, _ in ctx.placed(used_at))
            if not scoped and not replica:
                # a Keras 3 optimizer keeps the strategy it was made under
                replica = [(c, None) for obj, family, _ in optimizers
                           if family == tfapi.KERAS3 and obj.origin is not None
                           for c in ctx.creation_contexts(*obj.origin)
                           if c.kind == IN_STRATEGY and c.strategy is not None]
            if not scoped and not replica:
                continue
            for _, bound in use.passed:
                for obj in ctx.constructions(bound, fm.path):
                    if obj.origin is None:
                        continue
                    made_bound, made_path = obj.origin
                    span = made_bound.span
                    if made_path != fm.path or span is None or \
                            (span.line, span.column) in reported or \
                            model_family(str(obj.key), ctx) is None:
                        continue
                    made_at = ctx.call_place(made_bound, made_path)
                    if made_at is None:
                        continue
                    pairs = self._pairs(ctx, made_at, used_at, replica, scoped)
                    message = self._handed_message(ctx, use, made_bound, pairs, optimizers)
                    if message is not None:
                        reported.add((span.line, span.column))
                        yield ctx.finding(span, message, ERROR,
                                          _move_into_scope(ctx, made_bound, use))

    def _handed_message(self, ctx: RuleContext, use, made_bound: Bound, pairs: List[Pair],
                        optimizers) -> Optional[str]:
        """What happens when an optimizer builds its slots for the variables of a model
        made in `made`, under `strategies`, or None when that runs. Both families make
        slot variables with `strategy.extended.colocate_vars_with(variable)`, which raises
        for a variable of any other strategy; a Keras 3 optimizer with no slots instead
        updates through `extended.update`: a bare AssertionError for a variable made
        outside any scope, nothing raised for one of another strategy object."""
        # Whether the optimizer surely makes slot variables: False for a Keras 3 one
        # that may have none (then it fails only for a model made outside any scope).
        slots = all(family != tfapi.KERAS3 or obj.origin is None or makes_slots(
            ctx.construction_at(obj.origin[1], obj.origin[0].span), cls) is not False
            for obj, family, cls in optimizers)
        colocate = (f"ValueError in `.{use.method}` when the optimizer makes its slot "
                    "variables beside them (\"`colocate_vars_with` must only be passed a "
                    "variable created in this tf.distribute.Strategy.scope()\")")
        if not slots:
            colocate = (f"a bare AssertionError in `.{use.method}` when the optimizer "
                        "updates them (a Keras 3 optimizer with no slot variables)")
        handover, scope = self._handover(ctx, use, made_bound, ctx.path)
        via = f"handed to {handover}, whose " if handover is not None else ""
        name = f"`{made_bound.text}`"

        def used(strategy: Strategy, pair: Pair) -> Tuple[str, str]:
            text = (f"{via}{ctx.at(f'`.{use.method}`', ctx.path, use.span)} gets its "
                    f"variables under {ctx.describe(strategy)}{_when(ctx, pair.via)}")
            # A method's `self.args.strategy` names nothing where the model is built.
            enter = scope or strategy
            fix = f"build it inside `with {enter.text}.scope():`" if scope is not None or \
                enter.text.split(".")[0] != "self" else "build it inside that strategy's scope"
            return text, fix

        pair = _raising(pairs, lambda p: slots and _mixed(p) is not None)
        if pair is not None:
            made, strategy = _mixed(pair)  # type: ignore[misc]
            text, fix = used(strategy, pair)
            return (f"the model {name} is built under {ctx.describe(made)} "
                    f"but {text}: {colocate}; {fix}")
        pair = _raising(pairs, lambda p: _outside(p) is not None)
        if pair is None:
            return None
        text, fix = used(_outside(pair), pair)  # type: ignore[arg-type]
        return f"the model {name} is built outside any strategy scope but {text}: {colocate}; {fix}"

    def _objects(self, ctx: RuleContext) -> Iterator[Finding]:
        """Optimizers and metrics made outside the scope they are handed to or used in."""
        fm = ctx.model
        reported = set()
        for use in fm.uses:
            if use.method == "compile":
                handed = list(use.passed)
            elif use.method in tfapi.OPTIMIZER_USE_METHODS:
                handed = [("", use.receiver)]
            else:
                continue
            used_at = (fm.path, use.function, use.scopes)
            replica = self._replica_strategies(ctx, use)
            built = None
            if not any(c.kind == IN_STRATEGY for c, _ in ctx.placed(used_at)) and not replica:
                replica, built = self._owner_strategies(ctx, use)
                if not replica:
                    continue
            for keyword, bound in handed:
                outer = _outer_call(bound)
                for obj, used_at in self._handed(ctx, bound, use):
                    family, kind, cls = object_kind(str(obj.key), ctx)
                    if kind not in (tfapi.OPTIMIZER, tfapi.METRIC) or \
                            (not keyword and kind != tfapi.OPTIMIZER) or obj.origin is None:
                        continue
                    made_bound, made_path = obj.origin
                    # Made where the using code calls what makes it: the outermost call
                    # there (`opt = build_opt()`), where `with strategy.scope():` goes.
                    place_bound, place_path = made_bound, made_path
                    if outer is not None and outer is not made_bound and \
                            obj in ctx.constructions(outer, fm.path):
                        place_bound, place_path = outer, fm.path
                    if place_bound.span is None or (place_path, place_bound.span) in reported:
                        continue
                    made_at = ctx.call_place(place_bound, place_path)
                    if made_at is None:
                        continue
                    pairs = self._pairs(ctx, made_at, used_at, replica, built is None)
                    slots = makes_slots(ctx.construction_at(made_path, made_bound.span), cls)
                    verdict = self._object_verdict(ctx, family, kind, cls, pairs, slots)
                    if verdict is None:
                        continue
                    reported.add((place_path, place_bound.span))
                    severity, outcome, strategy, via = verdict
                    text = f"`{place_bound.text}`"
                    handover, scope = self._handover(ctx, use, made_bound, made_path)
                    if handover is not None:
                        how = f"`compile({keyword}=...)`" if keyword else f"`.{use.method}`"
                        used = f"handed to {handover}, whose " \
                            f"{ctx.at(how, fm.path, use.span)} uses it"
                    else:
                        how = f"handed to `compile({keyword}=...)`" if keyword else \
                            f"used by `.{use.method}`"
                        used = ctx.at(how, fm.path, use.span)
                        if built is not None:
                            used += f" of a {ctx.at(built[0], built[1], built[2])}"
                    used += f" under {ctx.describe(strategy)}{_when(ctx, via)}"
                    where = "" if place_path == fm.path else f" (at {place_path})"
                    yield ctx.finding(
                        place_bound.span if place_path == fm.path else use.span,
                        f"the {kind} {text}{where} is made {outcome[0]} but {used}: "
                        f"{outcome[1]}; make it inside `with "
                        f"{(scope or strategy).text}.scope():`",
                        severity,
                        _move_into_scope(ctx, place_bound, use) if place_path == fm.path
                        else None)

    @staticmethod
    def _handed(ctx: RuleContext, bound: Bound, use) -> List[Tuple[Any, tuple]]:
        """The objects `bound` may be at `use`, each with where it is used: at the use,
        or -- for a parameter of the using function, where no scope there decides -- at
        the call that hands that object in (two callers, two objects, two contexts)."""
        used_at = (ctx.path, use.function, use.scopes)
        calls = None if ctx.scope_context(ctx.path, use.scopes) is not None else \
            ctx.handed_in(bound, ctx.path, use.function)
        if calls is None:
            return [(obj, used_at) for obj in ctx.constructions(bound, ctx.path)]
        return [(obj, at) for passed, path, at in calls
                for obj in ctx.constructions(passed, path)]

    @staticmethod
    def _pairs(ctx: RuleContext, made_at, used_at, replica: Placed, scoped: bool) -> List[Pair]:
        """The contexts the object is made in, paired with those it is used in: the
        scopes around the use (`scoped`), tied to the making where both are in one
        function, and the strategies that run the use's code (`replica`)."""
        pairs = ctx.pairs(made_at, used_at) if scoped else []
        if replica:
            pairs += paired(ctx.placed(made_at), replica)
        return pairs

    @staticmethod
    def _replica_strategies(ctx: RuleContext, use) -> Placed:
        """The strategies whose `strategy.run` runs the code of `use`, each with that call."""
        return [(Context(IN_STRATEGY, w.strategy),
                 (w.at[0], w.at[1], w.via.strip("`")) if w.at else None)
                for w in ctx.where_at(use.function)
                if w.kind == REPLICA and w.strategy is not None]

    @staticmethod
    def _owner_strategies(ctx: RuleContext, use) -> Tuple[Placed, Optional[
            Tuple[str, str, Span]]]:
        """For a use in a method that nothing in this run is seen to call: the strategy
        scopes its class's instances are constructed in (a trainer built under
        `strategy.scope()` trains under it), each with its construction, and the class's
        name and the first such construction; else nothing."""
        info = ctx.model.functions.get(use.function) if use.function else None
        if info is None or info.klass is None:
            return [], None
        contexts = ctx.contexts_at(ctx.path, use.function, use.scopes)
        if any(c.kind != UNKNOWN for c in contexts):
            return [], None
        found: Placed = []
        first = None
        for construction, path in ctx.constructions_of(info.klass):
            for context in ctx.contexts_at(path, construction.function,
                                                            construction.scopes):
                if context.kind == IN_STRATEGY and context.strategy is not None:
                    found.append((context, (path, construction.span,
                                            str(construction.callee.text))))
                    if first is None:
                        first = (str(construction.callee.text), path, construction.span)
        return found, (f"`{first[0]}` built", first[1], first[2]) if first else None

    @staticmethod
    def _handover(ctx: RuleContext, use, made: Bound, made_path: str
                  ) -> Tuple[Optional[str], Optional[Strategy]]:
        """("`Trainer(...)` at line 22", the strategy scope that call is in, if any) when
        the object a use in a method works on gets there through a parameter of that
        class's constructor; else Nones. The scope is what the object's maker can enter
        (a method's `self.strategy` means nothing there)."""
        info = ctx.model.functions.get(use.function) if use.function else None
        if info is None or info.klass is None:
            return None, None
        for construction, path in ctx.constructions_of(info.klass):
            for passed in construction.passed:
                if passed is None:
                    continue
                for obj in ctx.constructions(passed, path):
                    if obj.origin is not None and obj.origin[1] == made_path and \
                            obj.origin[0].span == made.span:
                        lexical = ctx.scope_context(path, construction.scopes)
                        return ctx.at(f"`{construction.callee.text}(...)`", path,
                                      construction.span), \
                            lexical.strategy if lexical is not None else None
        return None, None

    @staticmethod
    def _object_verdict(ctx: RuleContext, family, kind: str, cls: str, pairs: List[Pair],
                        slots: Optional[bool] = None):
        """(severity, (where it was made, what happens), the strategy it is used under, the
        call that selects that path) for the pair a claim is made on (`_raising`)."""
        keras2_metric = family == tfapi.KERAS2 and kind == tfapi.METRIC
        keras3_optimizer = family == tfapi.KERAS3 and kind == tfapi.OPTIMIZER

        def mixes(pair: Pair) -> bool:
            return _mixed(pair) is not None

        def outside(pair: Pair) -> bool:
            return (keras2_metric or keras3_optimizer) and _outside(pair) is not None

        pair = _raising(pairs, mixes)
        if pair is not None:
            made, used = _mixed(pair)  # type: ignore[misc]
            if keras2_metric:
                outcome = ("tf_keras raises ValueError in `compile` (\"Metric ... "
                           "passed to `model.compile` was created inside a different "
                           "distribution strategy scope\")")
            else:
                outcome = "RuntimeError (\"Mixing different tf.distribute.Strategy objects\")"
            return ERROR, (f"under {ctx.describe(made)}", outcome), used, pair.via
        pair = _raising(pairs, outside)
        if pair is None:
            return None  # a tf_keras optimizer or a Keras 3 metric made outside runs
        strategy = _outside(pair)
        if keras2_metric:
            return ERROR, ("outside any strategy scope",
                           "tf_keras raises ValueError in `compile` (\"Metric ... passed to "
                           "`model.compile` was created inside a different distribution "
                           "strategy scope\")"), strategy, pair.via
        outcome = ("Keras 3 raises RuntimeError (\"Mixing different tf.distribute.Strategy "
                   "objects\") when it builds its slot variables, under the default "
                   "strategy it captured when it was made")
        if slots is False:
            options = " or ".join(f"`{o}`" for o in tfapi.KERAS3_SLOT_OPTIONS[cls])
            return WARNING, ("outside any strategy scope",
                             outcome + f" (`{cls}` has them only with {options})"), \
                strategy, pair.via
        assumed = ctx.keras_assumption(family)  # a tf_keras optimizer made outside trains
        if assumed:
            return WARNING, ("outside any strategy scope", f"{outcome} ({assumed})"), \
                strategy, pair.via
        return ERROR, ("outside any strategy scope", outcome), strategy, pair.via


def _mixed(pair: Pair) -> Optional[Tuple[Strategy, Strategy]]:
    """(made under, used under) where the pair's two strategies surely differ."""
    made, used = pair.made, pair.used
    if made.kind == IN_STRATEGY and used.kind == IN_STRATEGY and made.strategy is not None \
            and used.strategy is not None and _objects_differ(made.strategy, used.strategy):
        return made.strategy, used.strategy
    return None


def _outside(pair: Pair) -> Optional[Strategy]:
    """The strategy used under, where the pair's object is made outside any scope."""
    if pair.made.kind == NO_STRATEGY and pair.used.kind == IN_STRATEGY:
        return pair.used.strategy
    return None


def _raising(pairs: List[Pair], raises) -> Optional[Pair]:
    """The pair to make a claim on: a certain one on which it `raises`; else, where it
    raises on every pair (every execution), the first; else None -- merged facts make
    no claim (RULES.md, "Severity and certainty")."""
    hits = [pair for pair in pairs if raises(pair)]
    if not hits:
        return None
    return next((pair for pair in hits if pair.certain),
                hits[0] if len(hits) == len(pairs) else None)


def _when(ctx: RuleContext, via) -> str:
    """", when `train(...)` at line 40 runs it": the call a claim's path goes through."""
    return runs_it(via, ctx.path, ctx.note)
