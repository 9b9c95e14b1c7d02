from __future__ import annotations

import difflib
from typing import Iterator, Optional

from ..findings import Finding, Fix
from ..model import tfapi
from .base import ERROR, SAFE, UNSAFE, Expect, Invalid, Rule, RuleContext, make_fix, snippet


class UnknownEnumMember(Rule):
    """
    ## What it does
    Flags a member of `tf.VariableSynchronization` or `tf.VariableAggregation` that does
    not exist, such as `tf.VariableSynchronization.DEFAULT` (used by popular tutorials) or
    `tf.VariableAggregation.ONLY_FIRST_TOWER` (a TF 1 spelling that only
    `tf.compat.v1.VariableAggregation` still has).

    ## Why is this bad?
    The attribute lookup raises `AttributeError: DEFAULT` the moment the line runs,
    whatever the strategy. The members are `AUTO`, `NONE`, `ON_WRITE`, `ON_READ` and
    `NONE`, `SUM`, `MEAN`, `ONLY_FIRST_REPLICA`.

    ## Example
    ```python
    v = tf.Variable(0.0, synchronization=tf.VariableSynchronization.DEFAULT)
    ```
    Use instead:
    ```python
    v = tf.Variable(0.0, synchronization=tf.VariableSynchronization.AUTO)
    ```

    ## Fix safety
    `DEFAULT` -> `AUTO` and `ONLY_FIRST_TOWER` -> `ONLY_FIRST_REPLICA` are safe: the old
    code never ran, and the new member is what the default (or the old alias) meant.
    Replacing any other misspelling with the closest member is unsafe: it guesses.
    """

    code = "TFS001"
    name = "unknown-enum-member"
    severity = ERROR
    summary = "a synchronization/aggregation enum member that does not exist (AttributeError)"
    fix_availability = "sometimes"

    VALID = [
        snippet("""
            import tensorflow as tf
            v = tf.Variable(1., synchronization=tf.VariableSynchronization.AUTO)
        """),
        snippet("""
            import tensorflow as tf
            a = tf.compat.v1.VariableAggregation.ONLY_FIRST_TOWER
        """),
        snippet("""
            import tensorflow as tf
            m = tf.VariableAggregation.__members__
        """),
        snippet("""
            class VariableSynchronization:
                DEFAULT = 0
            x = VariableSynchronization.DEFAULT
        """),
    ]
    INVALID = [
        Invalid(
            snippet("""
                import tensorflow as tf
                v = tf.Variable(1., synchronization=tf.VariableSynchronization.DEFAULT)
            """),
            (Expect(2, 37, ERROR),),
            fixed=snippet("""
                import tensorflow as tf
                v = tf.Variable(1., synchronization=tf.VariableSynchronization.AUTO)
            """),
        ),
        Invalid(
            snippet("""
                import tensorflow as tf2
                agg = tf2.VariableAggregation.ONLY_FIRST_TOWER
            """),
            (Expect(2, 7),),
            fixed=snippet("""
                import tensorflow as tf2
                agg = tf2.VariableAggregation.ONLY_FIRST_REPLICA
            """),
        ),
        Invalid(
            snippet("""
                from tensorflow import VariableAggregation as VA
                x = VA.SUMM
            """),
            (Expect(2, 5),),
            fixed=None,
            unsafe_fixed=snippet("""
                from tensorflow import VariableAggregation as VA
                x = VA.SUM
            """),
        ),
    ]

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for ref in ctx.model.enum_refs:
            spec = tfapi.ENUM_CLASSES[ref.enum_class]
            if ref.member in spec.members or ref.member in spec.aliases:
                continue
            written = f"{ref.class_text}.{ref.member}"
            known = spec.known_mistakes.get(ref.member)
            fix: Optional[Fix]
            if known is not None:
                fix = make_fix(SAFE, f"Replace with `{ref.class_text}.{known}`",
                               ctx.replace(ref.member_span, known))
                if ref.member == tfapi.AGG_ONLY_FIRST_TOWER:
                    reason = ("ONLY_FIRST_TOWER is a TF 1 spelling that only "
                              "tf.compat.v1.VariableAggregation still has")
                else:
                    reason = f"the default is {known}"
            else:
                close = difflib.get_close_matches(ref.member, spec.members, n=1, cutoff=0.6)
                fix = make_fix(UNSAFE, f"Replace with `{ref.class_text}.{close[0]}`",
                               ctx.replace(ref.member_span, close[0])) if close else None
                reason = "members are " + ", ".join(spec.members)
            yield ctx.finding(
                ref.span,
                f"`{written}` does not exist (AttributeError when this line runs); {reason}",
                fix=fix)
