from __future__ import annotations

from typing import Iterator

from ..findings import Finding
from ..model import tfapi
from ..model.facts import Span
from .base import INFO, SAFE, Expect, Invalid, Rule, RuleContext, make_fix, snippet


class PositionalSyncArguments(Rule):
    """
    ## What it does
    Flags `synchronization` or `aggregation` passed by position: `tf.Variable` takes
    them 10th and 11th, `tf.compat.v1.Variable` 13th and 14th, `get_variable` 14th and
    15th, tf_keras `Layer.add_weight` 9th and 10th, and tf_keras `Metric.add_weight`
    takes aggregation *before* synchronization.

    ## Why is this bad?
    Nobody can check ten positions by eye, the two enums are easy to swap, and the
    order differs between APIs that look alike.

    ## Example
    ```python
    v = tf.Variable(0.0, False, True, None, "v", None, None, None, None,
                    tf.VariableSynchronization.ON_READ, tf.VariableAggregation.SUM)
    ```
    Use instead:
    ```python
    v = tf.Variable(0.0, False, True, None, "v", None, None, None, None,
                    synchronization=tf.VariableSynchronization.ON_READ,
                    aggregation=tf.VariableAggregation.SUM)
    ```

    ## Fix safety
    Safe: each positional argument from the first of these on gets its parameter name;
    the call means the same.
    """

    code = "TFS304"
    name = "positional-sync-arguments"
    severity = INFO
    summary = "synchronization/aggregation passed by position"
    fix_availability = "safe"

    VALID = [
        snippet("""
            import tensorflow as tf
            v = tf.Variable(0., synchronization=tf.VariableSynchronization.AUTO)
        """),
    ]
    INVALID = [
        Invalid(
            snippet("""
                import tensorflow as tf
                v = tf.Variable(0., False, True, None, 'v', None, None, None, None, tf.VariableSynchronization.ON_READ, tf.VariableAggregation.SUM)
            """),
            (Expect(2, 69, INFO),),
            fixed=snippet("""
                import tensorflow as tf
                v = tf.Variable(0., False, True, None, 'v', None, None, None, None, synchronization=tf.VariableSynchronization.ON_READ, aggregation=tf.VariableAggregation.SUM)
            """),
        ),
        Invalid(
            snippet("""
                import tf_keras
                import tensorflow as tf
                class M(tf_keras.metrics.Metric):
                    def __init__(self):
                        super().__init__()
                        self.t = self.add_weight('t', (), tf.VariableAggregation.SUM)
            """),
            (Expect(6, 43, INFO),),
            fixed=snippet("""
                import tf_keras
                import tensorflow as tf
                class M(tf_keras.metrics.Metric):
                    def __init__(self):
                        super().__init__()
                        self.t = self.add_weight('t', (), aggregation=tf.VariableAggregation.SUM)
            """),
        ),
    ]

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for site in ctx.sites:
            written = [s.arg for s in (site.sync, site.agg) if s.positional and s.arg is not None]
            settings = [s for s in (site.sync, site.agg) if s.positional and s.arg is not None]
            if not written:
                continue
            positional = [a for a in site.call.args if a.keyword is None and not a.star]
            first = min(positional.index(arg) for arg in written)
            edits = []
            for index in range(first, len(positional)):
                if index >= len(site.api.positional):
                    break
                arg = positional[index]
                edits.append(ctx.replace(_start(arg.span), f"{site.api.positional[index]}="))
            names = " and ".join(n for n, s in ((tfapi.SYNC, site.sync), (tfapi.AGG, site.agg))
                                 if s in settings)
            first_arg = min(written, key=lambda a: (a.span.line, a.span.column))
            yield ctx.finding(first_arg.span, f"{names} passed by position to {site.api.title}; "
                                              f"name them", INFO,
                              make_fix(SAFE, "Pass them as keyword arguments", *edits))


def _start(span: Span) -> Span:
    return Span(span.line, span.column, span.line, span.column)
