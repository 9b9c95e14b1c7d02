from __future__ import annotations

from typing import Iterator

from ..findings import Finding
from .base import ERROR, Expect, Invalid, Rule, RuleContext, snippet


class ParseError(Rule):
    """
    ## What it does
    Reports a path given to `check` that is not there (`no such file or directory`, as
    ruff's E902: exit 1, not a usage error), a file that could not be read or decoded (a
    binary file named `.py`, a bad encoding declaration), a file that may hold TensorFlow code and could not be parsed
    (a syntax error), or an internal error of the tool while checking it. Every other file
    is still checked. A file without any of the words a finding needs (`Variable` where
    one is made, `strategy`, `Strategy`, `.scope`, `add_weight`, `add_variable`,
    `get_variable`, `Synchronization`, `Aggregation`) is not read as Python at all: it can
    hold no finding, and parsing every such file would make a run over a large tree several
    times slower. Syntax errors there are your other linters' (ruff, flake8) to report.

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
