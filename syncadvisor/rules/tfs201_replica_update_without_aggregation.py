from __future__ import annotations

from typing import Iterator, Optional

from ..findings import Finding
from ..model import tfapi
from ..model.facts import READ_CHECKPOINT
from ..model.usage import PER_REPLICA
from .base import (ERROR, UNSAFE, WARNING, Expect, Invalid, Rule, RuleContext, judge, make_fix,
                   refusing_branch, set_on_read, set_setting, site_span, snippet,
                   strategy_contexts, suggest_aggregation, value_source)


# An update reached through a `tf.cond` branch: flagged, with no fix (its own Invalid
# example's fixed text is itself).
_THROUGH_COND = snippet("""
    import tensorflow as tf
    strategy = tf.distribute.MirroredStrategy()
    with strategy.scope():
        scale = tf.Variable(1.)
    def init(x):
        scale.assign(tf.math.reduce_std(x))
        return x
    def step(x):
        return tf.cond(scale > 0., lambda: init(x), lambda: x)
    strategy.run(step, args=(1.,))
""")

# An update under a Python `if` on a variable in a traced function, which AutoGraph
# makes a `tf.cond`: flagged, with no fix either.
_UNDER_TENSOR_IF = snippet("""
    import tensorflow as tf
    strategy = tf.distribute.MirroredStrategy()
    with strategy.scope():
        scale = tf.Variable(1.)
        ready = tf.Variable(False)
    @tf.function
    def step(x):
        if not ready:
            scale.assign(tf.math.reduce_std(x))
            ready.assign(True)
        return x
    strategy.run(step, args=(1.,))
""")


class ReplicaUpdateWithoutAggregation(Rule):
    """
    ## What it does
    Flags an AUTO/ON_WRITE variable with aggregation NONE (the default) that is updated in
    replica context -- inside a function given to `strategy.run`, a Keras `train_step`,
    `Layer.call` or `Metric.update_state`, a custom optimizer's `apply_gradients`, or
    whatever they call, directly or through a call that runs the function it is handed
    (`tf.cond`, `smart_cond`, `tf.while_loop`, `tf.map_fn`, `tf.case`, `Dataset.map`, a
    `functools.partial` of it). The message names the calls that lead to the update.
    Under CentralStorageStrategy and ParameterServerStrategy any such update is flagged,
    whatever the value; under MirroredStrategy, MultiWorkerMirroredStrategy and
    TPUStrategy only one whose value can differ between replicas (a loss, a gradient,
    anything computed from the replica's batch, a random op or the replica's id). A value
    that is the same on every replica is flagged only where a CentralStorage or
    ParameterServer strategy is visible: a literal, a constant, what is computed from them
    and from variables whose own updates are all the same on every replica (a power
    iteration over a layer's kernel, `self.iterations + 1`, a learning-rate schedule of
    the step), a number chosen by Keras' `training` flag, a tensor's size along axis 1 and
    on (`tf.shape(x)[1]`, `x.shape[1:]`: a padded length is the global batch's on every
    replica its batch is split between; axis 0 is not, an uneven last batch splits it),
    `all_reduce`/`all_gather`/`merge_call` results and a tf_keras metric's `result()`
    (which goes through `merge_call`; a Keras 3 metric's reads the replica's own state).
    Methods and functions
    called on such values are taken to return such a value: their bodies are not read.
    The message names what makes the value differ where the model sees it: the replica's
    batch, a random op, the replica id, or state each replica keeps its own copy of.
    `tf.Variable(..., per_worker_variable=True)`, ParameterServerStrategy's deliberate
    per-worker state, is never flagged. Nor, under MirroredStrategy and its kin, is a
    per-replica buffer that nothing combines: no cross-replica read or save of it is seen
    and no checkpoint or SavedModel can reach it (an attribute of a plain object or of a
    Keras loss, a local) -- each replica writing and reading its own copy is then its
    design, as TFS103 leaves such an ON_READ buffer alone; only a visible CentralStorage or
    ParameterServer strategy, where the update raises, is reported there.

    ## Why is this bad?
    Under CentralStorageStrategy and multi-device ParameterServerStrategy the variable is
    one `AggregatingVariable`, and any replica-context update of it raises ``ValueError:
    You must specify an aggregation method to update a AggregatingVariable in Replica
    Context`` -- even `v.assign_add(1.0)`, the same on every replica. Under
    MirroredStrategy, MultiWorkerMirroredStrategy and TPUStrategy each replica writes only
    its own copy: with a value that differs between replicas the copies silently diverge,
    a cross-replica read returns replica 0's copy, and checkpoints keep replica 0's value.
    A variable a Keras metric holds ends its `result()` differently in the two Kerases:
    tf_keras computes `result()` once, in cross-replica context (`merge_call`), from
    replica 0's copy and hands it to every replica; Keras 3 computes it in each replica
    from that replica's own copy. The message says which where the project settles the
    Keras that runs.
    (TensorFlow up to 2.2 raised "You must specify an aggregation method to update a
    MirroredVariable in Replica Context"; 2.21 says nothing.)

    ## Example
    ```python
    with strategy.scope():
        feature_mean = tf.Variable(0.0, trainable=False)

    def step_fn(x):
        feature_mean.assign(0.9 * feature_mean + 0.1 * tf.reduce_mean(x))

    strategy.run(step_fn, args=(batch,))
    ```
    Use instead:
    ```python
    with strategy.scope():
        feature_mean = tf.Variable(0.0, trainable=False,
                                   aggregation=tf.VariableAggregation.MEAN)
    ```

    ## Fix safety
    Unsafe: it adds an aggregation chosen from the updates -- SUM for `assign_add` /
    `assign_sub` of per-replica amounts, MEAN for `assign` of statistics,
    ONLY_FIRST_REPLICA for counters -- and the message says which and why. Replica-local
    state can instead be made ON_READ with an aggregation. There is no fix where the
    calls that reach the update pass through a `tf.cond`/`tf.case`/`tf.switch_case`
    branch or a `tf.while_loop`/`tf.map_fn`/`tf.scan`/`tf.foldl`/`tf.foldr` body, or
    under a Python `if`/`while` (or `x if test else y`) whose test is a tensor -- it
    reads a variable or a TensorFlow op's result -- in a traced function (a
    `tf.function`, what one calls, Keras' steps under `fit`), which AutoGraph makes a
    `tf.cond`/`tf.while_loop`: there an aggregated update's `merge_call` raises
    RuntimeError ("`merge_call` called while defining a new graph or a tf.function"), so
    the value has to be reduced across replicas before the branch, which only the author
    can arrange. A test on a parameter (Keras' `training` is a Python bool), a Python
    attribute, `is None` or `isinstance` stays Python, and keeps the fix.
    """

    code = "TFS201"
    name = "replica-update-without-aggregation"
    severity = WARNING
    summary = ("a NONE-aggregation variable updated in replica context: raises under "
               "CentralStorage/ParameterServer, diverges under Mirrored/MWMS/TPU")
    fix_availability = "unsafe"

    VALID = [
        snippet("""
            import tensorflow as tf
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                v = tf.Variable(0., aggregation=tf.VariableAggregation.MEAN)
            def step(x):
                v.assign(tf.reduce_mean(x))
            strategy.run(step, args=(1.,))
        """),
        snippet("""
            import tensorflow as tf
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                v = tf.Variable(0.)
            def step():
                v.assign_add(1.)
            strategy.run(step)
        """),
        snippet("""
            import tensorflow as tf
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                scale = tf.Variable(1.)
            scale.assign(2.)
        """),
        snippet("""
            import tensorflow as tf
            strategy = tf.distribute.experimental.ParameterServerStrategy(resolver)
            with strategy.scope():
                seen = tf.Variable(0., per_worker_variable=True)
            def step(x):
                seen.assign_add(tf.reduce_sum(x))
            strategy.run(step, args=(1.,))
        """),
        snippet("""
            import keras
            class SpectralNorm(keras.layers.Layer):
                def build(self, shape):
                    self.kernel = self.add_weight(shape=shape)
                    self.u = self.add_weight(shape=(1, shape[-1]), trainable=False)
                def call(self, inputs, training=False):
                    w = keras.ops.reshape(self.kernel, [-1, self.kernel.shape[-1]])
                    u = self.u.value
                    for _ in range(2):
                        v = keras.ops.normalize(keras.ops.matmul(u, keras.ops.transpose(w)))
                        u = keras.ops.normalize(keras.ops.matmul(v, w))
                    self.u.assign(u)
                    return inputs
        """),
        snippet("""
            import tensorflow as tf
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                iterations = tf.Variable(0, dtype=tf.int64)
                lr = tf.Variable(0.1)
            def schedule(step):
                return 0.1 * 0.9 ** tf.cast(step, tf.float32)
            def step(x):
                iterations.assign(iterations + 1)
                lr.assign(tf.cond(iterations > 10, lambda: schedule(iterations), lambda: 0.1))
                ctx = tf.distribute.get_replica_context()
                return ctx.all_reduce(tf.distribute.ReduceOp.SUM, x)
            strategy.run(step, args=(1.,))
        """),
        snippet("""
            import tf_keras
            class Tracker(tf_keras.layers.Layer):
                def build(self, shape):
                    self.mode = self.add_weight('mode', (), trainable=False)
                    self.last = self.add_weight('last', (), trainable=False)
                    self.total = tf_keras.metrics.Sum()
                def call(self, inputs, training=None):
                    self.mode.assign(1. if training else 0.)
                    self.total.update_state(inputs)
                    self.last.assign(self.total.result())
                    return inputs
        """),
    ]
    INVALID = [
        Invalid(
            snippet("""
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    v = tf.Variable(0.)
                def step(x):
                    v.assign(tf.reduce_mean(x))
                strategy.run(step, args=(1.,))
            """),
            (Expect(4, 9, WARNING),),
            unsafe_fixed=snippet("""
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    v = tf.Variable(0., aggregation=tf.VariableAggregation.MEAN)
                def step(x):
                    v.assign(tf.reduce_mean(x))
                strategy.run(step, args=(1.,))
            """),
        ),
        Invalid(
            snippet("""
                import tensorflow as tf
                strategy = tf.distribute.experimental.CentralStorageStrategy()
                with strategy.scope():
                    total = tf.Variable(0.)
                @tf.function
                def step(x):
                    strategy.run(lambda y: total.assign_add(y), args=(x,))
            """),
            (Expect(4, 13, ERROR),),
        ),
        Invalid(  # the same on every replica, and still a ValueError
            snippet("""
                import tensorflow as tf
                strategy = tf.distribute.experimental.CentralStorageStrategy()
                with strategy.scope():
                    steps = tf.Variable(0.)
                def step():
                    steps.assign_add(1.)
                strategy.run(step)
            """),
            (Expect(4, 13, ERROR),),
        ),
        Invalid(  # computed from a variable that is itself written per replica
            snippet("""
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    last = tf.Variable(0.)
                    doubled = tf.Variable(0.)
                def step(x):
                    last.assign(tf.reduce_max(x))
                    doubled.assign(last * 2.)
                strategy.run(step, args=(1.,))
            """),
            (Expect(4, 12, WARNING), Expect(5, 15, WARNING)),
        ),
        Invalid(  # random ops and the replica's id differ between replicas
            snippet("""
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    noise = tf.Variable(0.)
                    who = tf.Variable(0)
                def step():
                    noise.assign(tf.random.normal([]))
                    who.assign(tf.distribute.get_replica_context().replica_id_in_sync_group)
                strategy.run(step)
            """),
            (Expect(4, 13, WARNING), Expect(5, 11, WARNING)),
        ),
        Invalid(  # the WeightNormalization pattern: a weight assigned in call()
            snippet("""
                import keras
                class WeightNorm(keras.layers.Layer):
                    def build(self, shape):
                        self.g = self.add_weight(shape=(shape[-1],), initializer='ones')
                    def call(self, x):
                        self.g.assign(keras.ops.norm(x, axis=0))
                        return x
            """),
            (Expect(4, 18, WARNING),),
        ),
        Invalid(  # reached through a `tf.cond` branch: an aggregation there would raise
            _THROUGH_COND, (Expect(4, 13, WARNING),), unsafe_fixed=_THROUGH_COND),
        Invalid(  # under an `if` on a variable, which AutoGraph makes a `tf.cond`
            _UNDER_TENSOR_IF, (Expect(4, 13, WARNING),), unsafe_fixed=_UNDER_TENSOR_IF),
        Invalid(  # under an `if` on a Python value: the `if` stays Python, the fix stays
            snippet("""
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    scale = tf.Variable(1.)
                @tf.function
                def step(x, first=True):
                    if first:
                        scale.assign(tf.math.reduce_std(x))
                    return x
                strategy.run(step, args=(1.,))
            """),
            (Expect(4, 13, WARNING),),
            unsafe_fixed=snippet("""
                import tensorflow as tf
                strategy = tf.distribute.MirroredStrategy()
                with strategy.scope():
                    scale = tf.Variable(1., aggregation=tf.VariableAggregation.MEAN)
                @tf.function
                def step(x, first=True):
                    if first:
                        scale.assign(tf.math.reduce_std(x))
                    return x
                strategy.run(step, args=(1.,))
            """),
        ),
    ]

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for site in ctx.sites:
            if site.sync.member not in (tfapi.SYNC_AUTO, tfapi.SYNC_ON_WRITE) \
                    or site.agg.member != tfapi.AGG_NONE or _per_worker(site):
                continue
            updates = [u for u in site.updates if u.method in tfapi.UPDATE_METHODS
                       and u.replica_context]
            if updates:
                finding = self._finding(ctx, site, updates)
                if finding is not None:
                    yield finding

    @staticmethod
    def _replica_local(ctx: RuleContext, site) -> bool:
        """A per-replica buffer: nothing combines its copies -- no cross-replica read or
        save is seen, and no checkpoint or SavedModel can reach it (no trackable holds it,
        it is no module global, it does not leave its function). Its copies differing is
        its design (each replica's own statistics, a decoding cache): as TFS103 leaves
        such an ON_READ buffer alone, TFS201 says nothing of it diverging."""
        if any(r.cross_replica or r.kind == READ_CHECKPOINT for r in site.reads):
            return False
        return not ctx.held(site)

    @staticmethod
    def _metric_outcome(ctx: RuleContext, site) -> Optional[str]:
        """For a variable a Keras metric holds, what its `result()` then reports, which
        differs between tf_keras and Keras 3 (tfapi.METRIC_RESULT_OF_DIVERGED); None for
        any other variable, or where which Keras runs is a guess."""
        holder = ctx.holder(site)
        if holder is None:
            return None
        family, kind = ctx.project.keras_kind(holder)
        if kind != tfapi.METRIC or ctx.keras_assumption(family) is not None:
            return None
        return tfapi.METRIC_RESULT_OF_DIVERGED.get(family)

    def _finding(self, ctx: RuleContext, site, updates) -> Optional[Finding]:
        assume = ctx.settings.assume_strategy
        per_replica = [u for u in updates if u.value_kind == PER_REPLICA]
        if per_replica and self._replica_local(ctx, site):
            # Only an AggregatingVariable's raise is left to say, where such a strategy
            # is visible (as for a value the same on every replica).
            per_replica = []
        # An AggregatingVariable refuses every replica-context update; a value the same
        # on every replica is reported only where such a strategy is visible.
        raises = judge(strategy_contexts(site, updates), tfapi.AGGREGATING_STRATEGIES,
                       ctx.path, assume if per_replica else "none", ctx.note)
        diverges = judge(strategy_contexts(site, per_replica), tfapi.MIRRORING_STRATEGIES,
                         ctx.path, assume, ctx.note) if per_replica else None
        raise_text = ("raises ValueError (\"You must specify an aggregation method to update "
                      "a AggregatingVariable in Replica Context\")")
        if raises is not None and raises.severity == ERROR:
            update = updates[0]
            severity = ERROR
            detail = f"{raises.where} this {raise_text}, whatever the value"
        elif diverges is not None:
            update = per_replica[0]
            severity = WARNING
            outcome = self._metric_outcome(ctx, site) or \
                "its copies silently diverge, and reads and checkpoints see replica 0's copy"
            detail = (f"with a value that can differ between replicas"
                      f"{value_source(ctx, update)}: {diverges.where} {outcome}")
            if raises is not None:
                detail += f"; under {' or '.join(tfapi.AGGREGATING_STRATEGIES)} it {raise_text}"
        elif raises is not None:
            update = updates[0]
            severity = WARNING
            detail = f"{raises.where} this {raise_text}, whatever the value"
        else:
            return None
        replica = update.in_replica()[0]
        at = ctx.at(f"`.{update.method}(...)`", update.path, update.span)
        branch, always = refusing_branch(ctx, replica, update)
        fix = None
        if branch is None or not always:
            member, reason = suggest_aggregation(site)
            text, edits = set_setting(ctx, site, tfapi.AGG, member)
            if member == tfapi.AGG_SUM and site.api.family in tfapi.READ_MODIFY_WRITE_ADDS:
                # Keras 3's assign_add assigns v + x: SUM alone would multiply v (TFS205).
                fix = self._on_read_sum(ctx, site, reason)
            else:
                fix = make_fix(UNSAFE, f"Add `aggregation={text}` ({reason})", *edits)
        refused = f"`merge_call` raises {tfapi.MERGE_CALL_REFUSED_ERROR}"
        if branch is not None and always:  # an aggregation would turn it into a crash
            detail += (f"; an aggregation is no fix here: inside {branch} the update's "
                       f"{refused}, so compute the value and reduce it across replicas "
                       f"(`all_reduce`) before it")
        elif branch is not None:
            detail += (f"; if the predicate of {branch} is a tensor, not a Python bool, an "
                       f"aggregated update's {refused} there: then reduce the value before it")
        return ctx.finding(
            site_span(site, site.agg),
            f"`{site.name}` has aggregation NONE and is updated in replica context ({at}, "
            f"{ctx.via(replica, update.function)}): {detail}",
            severity, fix)


    @staticmethod
    def _on_read_sum(ctx: RuleContext, site, reason: str):
        """ON_READ + SUM for a Keras 3 accumulator; none where the API cannot say ON_READ."""
        if not site.api.has_parameter(tfapi.SYNC):
            return None
        text, edits = set_on_read(ctx, site, tfapi.AGG_SUM)
        return make_fix(UNSAFE, f"Add `{text}` ({reason}; Keras 3 assigns `v + x`, so each "
                                f"replica adds to its own copy and a read sums them)", *edits)


def _per_worker(site) -> bool:
    """`per_worker_variable=True`: ParameterServerStrategy keeps one copy per worker."""
    return any(arg.keyword == tfapi.PER_WORKER_VARIABLE_ARG and arg.value.literal is True
               for arg in site.call.args)
