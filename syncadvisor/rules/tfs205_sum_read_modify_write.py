from __future__ import annotations

import ast
from typing import Iterator, Optional

from ..findings import Finding
from ..model import tfapi
from .base import (WARNING, UNSAFE, Expect, Invalid, Rule, RuleContext, make_fix, set_on_read,
                   site_span, snippet, strategy_contexts)

_ADDS = frozenset({"assign_add", "assign_sub"})


class SumReadModifyWrite(Rule):
    """
    ## What it does
    Flags an ON_WRITE (or AUTO) variable with aggregation SUM whose replica-context update
    assigns a value computed from the variable itself, under a mirroring strategy:
    `v.assign(v + x)` for any variable, and `assign_add`/`assign_sub` on a Keras 3 variable
    (`keras.Variable`, Keras 3 `Layer.add_weight`), which Keras 3 implements as
    `assign(self + x)`.

    ## Why is this bad?
    In replica context the strategy sums what every replica assigns -- its whole new value,
    not its increment -- so each update makes the value `R * v + sum(x)` for R replicas:
    it grows R-fold every step, silently, on every copy. (A `tf.Variable`'s own `assign_add`
    sums the increments; tf_keras variables are `tf.Variable`s.) Measured with
    `syncadvisor profile --run examples/train_fit.py` (the metric's ON_WRITE + SUM run reads
    values that differ from its ON_READ + SUM run's) and by runtime tests on 2 logical CPUs:
    two steps adding 1.0 per replica leave 6.0, not 4.0; a per-replica count of 2048
    examples under `fit` read 274877906944.

    ## Example
    ```python
    with strategy.scope():
        seen = keras.Variable(0.0, trainable=False, aggregation="sum")
    ```
    Use instead (each replica adds to its own copy; a read sums the copies, as Keras 3's
    own metrics do):
    ```python
    with strategy.scope():
        seen = keras.Variable(0.0, trainable=False, aggregation="sum",
                              synchronization="on_read")
    ```
    For a `tf.Variable`, `total.assign_add(x)` instead of `total.assign(total + x)` also
    adds each replica's share once.

    ## Fix safety
    Unsafe: ON_READ, where the update adds to the variable (`assign_add`, `v + x`,
    `v - x`); reads inside `strategy.run` then see the replica's own part, not the total,
    and the fix also sets `trainable=False` where the variable was trainable (an
    accumulator is not trained; the optimizer no longer sees it). No fix where the value
    is another function of the variable (a moving statistic wants MEAN, which only the
    author can choose), nor for Keras 3 `Layer.add_weight`, which has no `synchronization`
    parameter: create the weight as a `keras.Variable` instead.
    """

    code = "TFS205"
    name = "sum-read-modify-write"
    severity = WARNING
    summary = ("an ON_WRITE + SUM variable assigned a value computed from itself in replica "
               "context (also Keras 3's assign_add): the value grows R-fold per step")
    fix_availability = "unsafe"

    VALID = [
        snippet("""
            import tensorflow as tf
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                total = tf.Variable(0., trainable=False, aggregation=tf.VariableAggregation.SUM)
            strategy.run(lambda x: total.assign(x * 2.), args=(1.,))
        """),
        snippet("""
            import keras
            import tensorflow as tf
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                seen = keras.Variable(0., trainable=False, aggregation="sum", synchronization="on_read")
            strategy.run(lambda x: seen.assign_add(x), args=(1.,))
        """),
        snippet("""
            import tensorflow as tf
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                seen = tf.Variable(0., trainable=False, aggregation=tf.VariableAggregation.SUM)
            strategy.run(lambda x: seen.assign_add(x), args=(1.,))
        """),
        snippet("""
            import keras
            import tensorflow as tf
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                seen = keras.Variable(0., trainable=False, aggregation="sum")
            seen.assign_add(1.)
        """),
    ]
    INVALID = [
        Invalid(
            snippet("""
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    total = tf.Variable(0., trainable=False, aggregation=tf.VariableAggregation.SUM)
                strategy.run(lambda x: total.assign(total + x), args=(1.,))
            """),
            (Expect(4, 46, WARNING),),
            unsafe_fixed=snippet("""
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    total = tf.Variable(0., trainable=False, aggregation=tf.VariableAggregation.SUM, synchronization=tf.VariableSynchronization.ON_READ)
                strategy.run(lambda x: total.assign(total + x), args=(1.,))
            """),
        ),
        Invalid(
            snippet("""
                import keras
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    seen = keras.Variable(0., trainable=False, aggregation="sum")
                strategy.run(lambda x: seen.assign_add(x), args=(1.,))
            """),
            (Expect(5, 48, WARNING),),
            unsafe_fixed=snippet("""
                import keras
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    seen = keras.Variable(0., trainable=False, aggregation="sum", synchronization="on_read")
                strategy.run(lambda x: seen.assign_add(x), args=(1.,))
            """),
        ),
    ]

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for site in ctx.sites:
            if site.sync.member not in (tfapi.SYNC_AUTO, tfapi.SYNC_ON_WRITE) or \
                    site.agg.member != tfapi.AGG_SUM:
                continue
            keras_adds = site.api.family in tfapi.READ_MODIFY_WRITE_ADDS
            assumed = None
            if keras_adds:
                other, assumed = ctx.site_keras(site)
                keras_adds = not other  # a call written for Keras 2 adds as TensorFlow does
            target = site.call.target or ""
            found = []  # (update, adds): every update that assigns a value built from v
            for u in site.updates:
                if not u.replica_context:
                    continue
                if keras_adds and u.method in _ADDS:
                    found.append((u, True))
                elif u.method == "assign" and target and u.value is not None:
                    form = _reads_itself(u.value.text, target)
                    if form is not None:
                        found.append((u, form))
            if not found:
                continue
            updates = [u for u, _ in found]
            verdict = ctx.judge(strategy_contexts(site, updates), tfapi.MIRRORING_STRATEGIES)
            if verdict is None:
                continue
            update = updates[0]
            where = ctx.at("in replica context", update.path, update.span,
                           f"`.{update.method}(...)`")
            fix = None
            if not all(adds for _, adds in found):
                instead = ("a moving statistic wants MEAN (each replica's value averaged); an "
                           "accumulator, `assign_add` of the increment")
            elif site.api.has_parameter(tfapi.SYNC):
                text, edits = set_on_read(ctx, site)
                fix = make_fix(UNSAFE, f"Use `{text}` (each replica adds to its own copy; a "
                                       f"read sums them)", *edits)
                instead = "ON_READ adds locally and sums the copies when read"
            else:
                instead = (f"{site.api.title} has no `synchronization` parameter: create it "
                           f"as `keras.Variable(..., aggregation=\"sum\", "
                           f"synchronization=\"on_read\", trainable=False)`")
            keras3 = keras_adds and update.method in _ADDS
            how = ("Keras 3 assigns `v + x` there" if keras3
                   else "the value assigned is computed from the variable")
            if keras3 and assumed:
                how += f" ({assumed})"
            yield ctx.finding(
                site_span(site, site.agg),
                f"`{site.name}` (aggregation SUM) gets `.{update.method}(...)` {where}: {how}, "
                f"and SUM adds every replica's whole new value, so {verdict.where} the value "
                f"grows by the number of replicas at each update; {instead}",
                WARNING, fix)


def _reads_itself(text: str, target: str) -> Optional[bool]:
    """Whether an assigned value reads the variable `target`: True where it adds to it
    (`v + x`, `x + v`, `v - x`), False for another function of it, None where it does not
    read it (`v.assign(partial)` with SUM sums the replicas' partials, as meant)."""
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return None
    if not any(isinstance(n, (ast.Name, ast.Attribute)) and _spelled(n) == target
               for n in ast.walk(tree)):
        return None
    if isinstance(tree, ast.BinOp) and isinstance(tree.op, (ast.Add, ast.Sub)):
        sides = [tree.left] if isinstance(tree.op, ast.Sub) else [tree.left, tree.right]
        return any(_spelled(side) == target for side in sides)
    return False


def _spelled(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _spelled(node.value)
        return f"{head}.{node.attr}" if head is not None else None
    return None
