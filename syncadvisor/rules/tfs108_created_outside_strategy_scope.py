from __future__ import annotations

from typing import Iterator, List, Optional

from ..findings import Finding
from ..model import tfapi
from ..model.contexts import IN_STRATEGY, NO_STRATEGY, Context, Strategy
from ..model.facts import BOUND_CALL, BOUND_NAMES, Bound
from .base import ERROR, WARNING, Expect, Invalid, Rule, RuleContext, snippet


def _objects_differ(a: Strategy, b: Strategy) -> bool:
    """Two strategy objects are surely different when every way of building them differs."""
    if tfapi.ANY_STRATEGY in a.kinds or tfapi.ANY_STRATEGY in b.kinds:
        return False
    ours = {(o.path, o.line) for o in a.options}
    theirs = {(o.path, o.line) for o in b.options}
    return not ours & theirs and None not in {o.line for o in a.options + b.options}


def _model_family(qname: str, project) -> Optional[str]:
    """The Keras family of a model class (library or project), or None."""
    candidates = [qname]
    if qname in project.index.classes:
        candidates = project.index.external_bases(qname)
    for name in candidates:
        for prefix, family in tfapi.KERAS_FAMILY_PREFIXES:
            if not name.startswith(prefix):
                continue
            segments = name.split(".")
            if segments[-1] in tfapi.MODEL_CLASS_NAMES or \
                    tfapi.MODEL_MODULE_SEGMENTS & set(segments):
                return family
    return None


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


class CreatedOutsideStrategyScope(Rule):
    """
    ## What it does
    Flags a Keras model built outside the `strategy.scope()` in which it is then compiled
    or trained, and a variable created outside the scope (or under another strategy) of
    the `strategy.run` that updates it.

    ## Why is this bad?
    A model's variables belong to the strategy that was current when they were made.
    tf_keras refuses it in `compile`: ``ValueError: Variable (...) was not created in the
    distribution strategy scope of (...)``. Keras 3 compiles it and then fails in `fit`
    (a bare `AssertionError`, or ``ValueError: `colocate_vars_with` must only be passed a
    variable created in this tf.distribute.Strategy.scope()``). A variable made under
    another strategy object raises ``RuntimeError: Mixing different tf.distribute.Strategy
    objects``. A plain `tf.Variable` made outside any scope raises nothing: the replicas
    share it and update it one after the other, and the result depends on their order.

    ## Example
    ```python
    model = build_model()
    with strategy.scope():
        model.compile(optimizer="adam", loss="mse")
    model.fit(dataset)
    ```
    Use instead:
    ```python
    with strategy.scope():
        model = build_model()
        model.compile(optimizer="adam", loss="mse")
    model.fit(dataset)
    ```

    ## Fix safety
    No automatic fix: the message names both places; move the creation into the scope.
    """

    code = "TFS108"
    name = "created-outside-strategy-scope"
    severity = ERROR
    summary = "a model or variable created outside the strategy scope (or under another strategy) it is used in"

    VALID = [
        snippet("""
            import keras
            import tensorflow as tf
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                model = keras.Sequential([keras.layers.Dense(1)])
                model.compile(loss='mse')
            model.fit([[1.]], [[1.]])
        """),
    ]
    INVALID = [
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
    ]

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        yield from self._variables(ctx)
        yield from self._models(ctx)

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
                                            f"`.{update.method}` in {ctx.via(where)}")
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
                 use: str, plain_outside: bool = True) -> Optional[Finding]:
        for context in created:
            if context.kind == IN_STRATEGY and context.strategy is not None and \
                    _objects_differ(context.strategy, used):
                return ctx.finding(
                    site.call.span,
                    f"`{site.name}` is created under {ctx.describe(context.strategy)} "
                    f"but updated under {ctx.describe(used)} ({use}): RuntimeError "
                    f"(\"Mixing different tf.distribute.Strategy objects\")", ERROR)
        if plain_outside and site.family == tfapi.TF and \
                any(c.kind == NO_STRATEGY for c in created):
            return ctx.finding(
                site.call.span,
                f"`{site.name}` is created outside any strategy scope but updated under "
                f"{ctx.describe(used)} ({use}): the replicas share one plain variable "
                f"and update it one after the other; create it inside `with "
                f"{used.text}.scope():`", WARNING)
        return None

    def _models(self, ctx: RuleContext) -> Iterator[Finding]:
        usage = ctx.usage
        reported = set()
        fm = ctx.model
        for use in fm.uses:
            if use.method not in tfapi.MODEL_TRAINING_METHODS:
                continue
            lexical = ctx.project.contexts.scope_context(fm.path, use.scopes)
            if lexical is None or lexical.strategy is None:
                continue
            outer = _outer_call(use.receiver)
            if outer is None or outer.span is None:
                continue
            families = {_model_family(str(o.key), ctx.project)
                        for o in usage.constructions(use.receiver, fm.path)} - {None}
            if not families:
                continue
            made = usage.creation_contexts(outer, fm.path)
            if (outer.span.line, outer.span.column) in reported:
                continue
            message = self._model_message(ctx, use, outer, lexical.strategy, made, families)
            if message is not None:
                reported.add((outer.span.line, outer.span.column))
                yield ctx.finding(outer.span, message, ERROR)

    @staticmethod
    def _model_message(ctx, use, outer: Bound, strategy: Strategy, made, families) -> Optional[str]:
        used = f"{ctx.at(f'`.{use.method}`', ctx.path, use.span)} under {ctx.describe(strategy)}"
        for context in made:
            if context.kind == IN_STRATEGY and context.strategy is not None and \
                    _objects_differ(context.strategy, strategy):
                return (f"`{outer.text}` is built under {ctx.describe(context.strategy)} "
                        f"but used in {used}: RuntimeError (\"Mixing different "
                        f"tf.distribute.Strategy objects\")")
        if not any(c.kind == NO_STRATEGY for c in made):
            return None
        if tfapi.KERAS2 in families:
            outcome = ("tf_keras raises ValueError in `compile` (\"Variable ... was not created in "
                       "the distribution strategy scope\")")
        else:
            outcome = ("Keras 3 compiles it, then `fit` fails (AssertionError, or \"`colocate_vars_with` "
                       "must only be passed a variable created in this tf.distribute.Strategy.scope()\")")
        return (f"the model `{outer.text}` is built outside the strategy scope but used in {used}: "
                f"{outcome}; build it inside `with {strategy.text}.scope():`")

