from __future__ import annotations

from collections import Counter
from typing import Iterator, List, Optional, Tuple

from ..findings import Finding
from ..model import tfapi
from ..model.usage import UpdateInfo
from ..model.variables import VariableSite
from .base import (ERROR, WARNING, Expect, Invalid, Rule, RuleContext, judge, refusing_branch,
                   snippet, strategy_contexts)


class SynchronizedUpdateInControlFlow(Rule):
    """
    ## What it does
    Flags `assign`, `assign_add` or `assign_sub` of a variable whose update must
    synchronize the replicas -- AUTO/ON_WRITE with aggregation SUM, MEAN or
    ONLY_FIRST_REPLICA (a `tf.Variable`, a Keras weight, a `keras.Variable`) -- made in
    replica context inside a branch or loop body that TensorFlow builds as a graph: a
    `tf.cond`/`tf.case`/`tf.switch_case` branch, a `tf.while_loop`/`tf.map_fn`/`tf.scan`/
    `tf.foldl`/`tf.foldr` body, Keras 3's `ops.while_loop`/`fori_loop`/`switch`/`map`/
    `scan`, or a Python `if`/`while` (or `x if test else y`) whose test is a tensor -- it
    reads a variable or a TensorFlow op's result -- which AutoGraph turns into one. Only
    where the code runs traced: the `strategy.run` that reaches it is made inside a
    `tf.function` (or from code only `tf.function`s run), or a function on the way is a
    `tf.function`; or it is reached from a Keras model's `train_step`/`test_step`/
    `predict_step`, which `fit`/`evaluate`/`predict` run that way -- a warning, since a
    model compiled with `run_eagerly=True` runs it eagerly. Keras 3 traces those steps
    without AutoGraph, so there only the calls count (an `if` on a tensor raises
    OperatorNotAllowedInGraphError, whatever the strategy). The message names the branch
    and the `strategy.run` (or the step).
    Under CentralStorageStrategy, which ignores ON_READ, an ON_READ variable with an
    aggregation counts too.

    Not flagged: aggregation NONE and ON_READ variables under MirroredStrategy (they
    update their own copy, and run), `strategy.run` called eagerly (the branch is then
    Python), OneDeviceStrategy, `smart_cond` and `keras.ops.cond` (their predicate may be
    a Python bool), a layer's `call` that only Keras runs (it may run eagerly), an update whose
    variable the model cannot pin to one creation, and TPUStrategy and
    ParameterServerStrategy, where this was not run.

    ## Why is this bad?
    An update that aggregates is a synchronization point: in replica context it calls
    `merge_call` to reduce the replicas' values, and TensorFlow cannot do that from inside
    a graph branch or loop body. Tracing raises ``RuntimeError: `merge_call` called while
    defining a new graph or a tf.function. ... if the function `fn` uses a control flow
    statement which contains a synchronization point in the body. Such behaviors are not
    yet supported.`` -- seen on TensorFlow 2.21 under MirroredStrategy (with one device
    or two), MultiWorkerMirroredStrategy and CentralStorageStrategy, for SUM, MEAN and
    ONLY_FIRST_REPLICA alike, and in a custom `train_step` under Keras 3 `fit`. The same
    step run eagerly, or under OneDeviceStrategy, runs.

    ## Example
    ```python
    with strategy.scope():
        skipped = tf.Variable(0.0, aggregation=tf.VariableAggregation.SUM)

    def step(x):
        if tf.reduce_any(tf.math.is_nan(x)):
            skipped.assign_add(1.0)

    @tf.function
    def train(x):
        strategy.run(step, args=(x,))
    ```
    Use instead (the update outside the branch, weighted by the condition):
    ```python
    def step(x):
        nan = tf.reduce_any(tf.math.is_nan(x))
        skipped.assign_add(tf.cast(nan, tf.float32))
    ```
    or make the variable replica-local, reduced only when read (not under
    CentralStorageStrategy, which ignores ON_READ):
    ```python
    with strategy.scope():
        skipped = tf.Variable(0.0, trainable=False,
                              synchronization=tf.VariableSynchronization.ON_READ,
                              aggregation=tf.VariableAggregation.SUM)
    ```

    ## Fix safety
    No automatic fix: moving the update out of the branch changes what runs when, and
    only the author knows the weight that keeps the meaning (`tf.where`, a cast of the
    condition); an ON_READ variable reads differently inside `strategy.run` (each replica
    sees its own copy). The message gives both ways out.
    """

    code = "TFS110"
    name = "synchronized-update-in-control-flow"
    severity = ERROR
    summary = ("an update that must synchronize (SUM, MEAN or ONLY_FIRST_REPLICA) inside a "
               "`tf.cond` branch, a loop body or an `if` on a tensor of traced replica code")

    VALID = [
        snippet("""
            import tensorflow as tf
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                total = tf.Variable(0., aggregation=tf.VariableAggregation.SUM)
                flag = tf.Variable(1.)
            def step(x):
                if flag > 0:  # eager strategy.run: the `if` is Python
                    total.assign_add(x)
            strategy.run(step, args=(1.,))
        """),
        snippet("""
            import tensorflow as tf
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                total = tf.Variable(0., aggregation=tf.VariableAggregation.SUM)
                flag = tf.Variable(1.)
            def step(x):
                total.assign_add(x * tf.cast(flag > 0, tf.float32))
            @tf.function
            def train(x):
                strategy.run(step, args=(x,))
            train(1.)
        """),
        snippet("""
            import tensorflow as tf
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                total = tf.Variable(0., trainable=False,
                                    synchronization=tf.VariableSynchronization.ON_READ,
                                    aggregation=tf.VariableAggregation.SUM)
                flag = tf.Variable(1.)
            def step(x):
                tf.cond(flag > 0, lambda: total.assign_add(x), lambda: total.read_value())
            @tf.function
            def train(x):
                strategy.run(step, args=(x,))
            train(1.)
        """),
        snippet("""
            import tensorflow as tf
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                last = tf.Variable(0.)
                flag = tf.Variable(1.)
            @tf.function
            def step(x):
                if flag > 0:
                    last.assign(x)  # aggregation NONE: each replica writes its own copy
            strategy.run(step, args=(1.,))
        """),
        snippet("""
            import tensorflow as tf
            strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
            with strategy.scope():
                total = tf.Variable(0., aggregation=tf.VariableAggregation.SUM)
                flag = tf.Variable(1.)
            @tf.function
            def step(x):
                if flag > 0:
                    total.assign_add(x)
            strategy.run(step, args=(1.,))
        """),
        snippet("""
            import tensorflow as tf
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                total = tf.Variable(0., aggregation=tf.VariableAggregation.SUM)
            @tf.function
            def step(x, first=True):
                if first:  # a Python bool: no branch is built
                    total.assign_add(x)
            strategy.run(step, args=(1.,))
        """),
    ]
    INVALID = [
        Invalid(
            snippet("""
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    total = tf.Variable(0., aggregation=tf.VariableAggregation.SUM)
                    flag = tf.Variable(1.)
                def step(x):
                    tf.cond(flag > 0, lambda: total.assign_add(x), lambda: total.read_value())
                @tf.function
                def train(x):
                    strategy.run(step, args=(x,))
                train(1.)
            """),
            (Expect(7, 31, ERROR),),
        ),
        Invalid(
            snippet("""
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    mean = tf.Variable(0., aggregation=tf.VariableAggregation.MEAN)
                    flag = tf.Variable(1.)
                @tf.function
                def step(x):
                    if flag > 0:
                        mean.assign(x)
                strategy.run(step, args=(1.,))
            """),
            (Expect(9, 9, ERROR),),
        ),
        Invalid(  # under CentralStorageStrategy, which ignores ON_READ
            snippet("""
                import tensorflow as tf
                strategy = tf.distribute.experimental.CentralStorageStrategy()
                with strategy.scope():
                    seen = tf.Variable(0., trainable=False,
                                       synchronization=tf.VariableSynchronization.ON_READ,
                                       aggregation=tf.VariableAggregation.SUM)
                def count(x):
                    seen.assign_add(x)
                    return x
                def step(x):
                    return tf.while_loop(lambda i: i < 3., count, [x])
                @tf.function
                def train(x):
                    return strategy.run(step, args=(x,))
            """),
            (Expect(8, 5, ERROR),),
        ),
        Invalid(  # Keras 3 `fit` runs `train_step` traced, once per replica: a warning
            snippet("""
                import keras
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                class Model(keras.Model):
                    def __init__(self):
                        super().__init__()
                        self.dense = keras.layers.Dense(1)
                        self.seen = tf.Variable(0., aggregation=tf.VariableAggregation.SUM)
                    def call(self, x):
                        return self.dense(x)
                    def train_step(self, data):
                        x, y = data
                        loss = tf.reduce_mean((self(x) - y) ** 2)
                        tf.cond(loss > 0, lambda: self.seen.assign_add(tf.ones(())),
                                lambda: tf.identity(self.seen))
                        return {"loss": loss}
                with strategy.scope():
                    model = Model()
                    model.compile(optimizer="sgd")
            """),
            (Expect(14, 35, WARNING),),
        ),
        Invalid(  # a strategy that may be one that raises: a warning
            snippet("""
                import tensorflow as tf
                def make(name):
                    if name == "mirrored":
                        return tf.distribute.MirroredStrategy()
                    return tf.distribute.OneDeviceStrategy("/cpu:0")
                strategy = make("mirrored")
                with strategy.scope():
                    steps = tf.Variable(0., aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)
                    flag = tf.Variable(1.)
                @tf.function
                def step():
                    while flag > steps:
                        steps.assign_add(1.)
                strategy.run(step)
            """),
            (Expect(13, 9, WARNING),),
        ),
    ]

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for site, failing, update in _candidates(ctx):
            if update.path != ctx.path:
                continue
            finding = self._finding(ctx, site, failing, update)
            if finding is not None:
                yield finding

    def _finding(self, ctx: RuleContext, site: VariableSite, failing: Tuple[str, ...],
                 update: UpdateInfo) -> Optional[Finding]:
        for where in update.in_replica():
            if where.at is not None:
                if not ctx.traced_path(where, update.function):
                    continue
                entered = ctx.at(where.via, *where.at)
            else:
                # Keras' own step: `fit` traces it unless the model runs eagerly
                hops = ctx.call_path(where, update.function)
                step = hops[0].caller_id if hops else update.function
                if step is None or not ctx.keras_traced_step(step):
                    continue
                entered = f"{where.via}, traced by `fit` unless `run_eagerly=True`"
            # Keras 3 traces its steps without AutoGraph: an `if` on a tensor there raises
            # OperatorNotAllowedInGraphError whatever the strategy, and is no branch
            branch, always = refusing_branch(ctx, where, update, traced=True,
                                             autograph=where.at is not None)
            if branch is None or not always:
                continue
            contexts = strategy_contexts(site, [update])
            verdict = judge(contexts, failing, ctx.path, ctx.settings.assume_strategy,
                            ctx.note)
            if verdict is None:
                return None
            setting = site.agg.member
            if site.sync.member == tfapi.SYNC_ON_READ:
                setting = f"ON_READ + {setting}"
            made = ctx.where(site.path, site.call.span, "the variable")
            what = f"`{site.name}` ({setting}, {made})"
            way_out = "update it outside the branch, weighted by the condition"
            if site.sync.member != tfapi.SYNC_ON_READ:
                way_out += f", or make `{site.name}` ON_READ"
                if any(c.strategy is not None and
                       c.strategy.kinds & set(tfapi.ON_READ_IGNORED_STRATEGIES)
                       for c in contexts):
                    way_out += (f" (not under {' or '.join(tfapi.ON_READ_IGNORED_STRATEGIES)}, "
                                f"which ignores ON_READ)")
            severity = verdict.severity if where.at is not None else WARNING
            return ctx.finding(
                update.span,
                f"`.{update.method}(...)` of {what} inside {branch} in traced replica code "
                f"({entered}) raises {tfapi.MERGE_CALL_REFUSED_ERROR} {verdict.where}; "
                f"{way_out}",
                severity)
        return None


def _candidates(ctx: RuleContext) -> List[Tuple[VariableSite, Tuple[str, ...], UpdateInfo]]:
    """(site, the strategies its update raises under, update) for each assign in replica
    context of a variable whose update merges, among the sites updated in this file; an
    update whose receiver may be more than one variable is no candidate (which one it
    updates is not known: every site it may update is updated here too)."""
    sites = ctx.sites_updated_here()
    shared = Counter(id(u) for s in sites for u in s.updates)
    found = []
    for site in sites:
        failing = _failing(site)
        if not failing:
            continue
        for update in site.updates:
            if update.method in tfapi.ASSIGN_METHODS and update.replica_context \
                    and shared[id(update)] == 1:
                found.append((site, failing, update))
    return found


def _failing(site: VariableSite) -> Tuple[str, ...]:
    """The strategies under which an update of the site merges across replicas."""
    if site.agg.member not in tfapi.MERGING_AGGREGATIONS:
        return ()
    if site.sync.member in (tfapi.SYNC_AUTO, tfapi.SYNC_ON_WRITE):
        return tfapi.MERGE_CALL_BRANCH_STRATEGIES
    if site.sync.member == tfapi.SYNC_ON_READ:
        return tfapi.ON_READ_IGNORED_STRATEGIES
    return ()
