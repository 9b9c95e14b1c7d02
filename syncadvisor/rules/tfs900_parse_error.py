from __future__ import annotations

from typing import Iterator

from ..findings import Finding
from .base import ERROR, Expect, Invalid, Rule, RuleContext, snippet


class ParseError(Rule):
    """
    ## What it does
    Reports a file that could not be read, decoded or parsed (a syntax error, a binary
    file named `.py`, a bad encoding declaration), or an internal error of the tool
    while checking it. Every other file is still checked.

    ## Why is this bad?
    Nothing in that file was checked, so its absence of findings means nothing.

    ## Example
    ```python
    def broken(:
        pass
    ```

    ## Fix safety
    There is no automatic fix.
    """

    code = "TFS900"
    name = "parse-error"
    severity = ERROR
    summary = "the file could not be read or parsed; every other file is still checked"

    VALID = [snippet("""
        import tensorflow as tf
        v = tf.Variable(1.)
    """)]
    INVALID = [Invalid(snippet("""
        import tensorflow as tf
        with strategy.scope(:
            pass
    """), (Expect(2),))]

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        return iter(())  # the engine reports these: there is no model to check
