from __future__ import annotations

import re
from typing import Callable, Collection, Iterator, List, Mapping, Optional, Sequence

from ..findings import Edit, Finding
from ..lines import physical_lines
from ..suppress import Directive, Suppressions, split_codes
from .base import INFO, SAFE, Expect, Invalid, Rule, RuleContext, make_fix, snippet


class UnusedNoqa(Rule):
    """
    ## What it does
    Flags a `# noqa: TFSnnn` comment whose TFS codes suppress nothing on its line: no
    finding of that code is reported there. A bare `# noqa`, other tools' codes
    (`E501`) and the file-level `# syncadvisor: noqa` are left alone, and so is a code
    that the run does not check (deselected with `--select`/`--ignore` or
    `per-file-ignores`), since it may suppress something when it is checked.

    ## Why is this bad?
    A suppression outlives the finding it was written for: once the code is fixed, or
    the finding moved to another line, the comment only hides the next finding of that
    code that appears on the line, unseen. Like ruff's RUF100.

    ## Example
    ```python
    v = tf.Variable(1.0)  # noqa: TFS101
    w = tf.Variable(1.0, synchronization=tf.VariableSynchronization.NONE)  # noqa: E501, TFS303
    ```
    Use instead:
    ```python
    v = tf.Variable(1.0)
    w = tf.Variable(1.0, synchronization=tf.VariableSynchronization.NONE)  # noqa: E501
    ```

    ## Fix safety
    Safe: the unused codes are removed from the comment, or the whole `# noqa` when no
    code is left; the other codes and the rest of the comment are kept, and only a
    comment changes.
    """

    code = "TFS901"
    name = "unused-noqa"
    severity = INFO
    summary = "a `# noqa: TFSnnn` whose TFS codes suppress nothing on that line"
    fix_availability = "safe"

    VALID = [
        snippet("""
            import tensorflow as tf
            v = tf.Variable(1., synchronization=tf.VariableSynchronization.DEFAULT)  # noqa: TFS001
        """),
        snippet("""
            import tensorflow as tf
            v = tf.Variable(1.)  # noqa
            w = tf.Variable(1.)  # noqa: E501
        """),
        snippet("""
            # syncadvisor: noqa: TFS101
            import tensorflow as tf
            v = tf.Variable(1.)
        """),
        snippet('''
            import tensorflow as tf
            text = """
            # noqa: TFS101 in a string is not a comment
            """
        '''),
    ]
    INVALID = [
        Invalid(
            snippet("""
                import tensorflow as tf
                v = tf.Variable(1.)  # noqa: TFS101
            """),
            (Expect(2, 22, INFO),),
            fixed=snippet("""
                import tensorflow as tf
                v = tf.Variable(1.)
            """),
        ),
        Invalid(
            snippet("""
                import tensorflow as tf
                v = tf.Variable(1., synchronization=tf.VariableSynchronization.DEFAULT)  # noqa: E501,TFS001,TFS303
            """),
            (Expect(2, 74, INFO),),
            fixed=snippet("""
                import tensorflow as tf
                v = tf.Variable(1., synchronization=tf.VariableSynchronization.DEFAULT)  # noqa: E501,TFS001
            """),
        ),
        Invalid(
            snippet("""
                import tensorflow as tf
                v = tf.Variable(1.)  # noqa: TFS101 -- was NONE under MirroredStrategy
            """),
            (Expect(2, 22, INFO),),
            fixed=snippet("""
                import tensorflow as tf
                v = tf.Variable(1.)  # -- was NONE under MirroredStrategy
            """),
        ),
    ]

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        # Which suppressions were used is known only once every rule has run and its
        # findings have met the file's noqa comments: the engine reports these
        # (`unused_noqa`, called from engine/check.py).
        return iter(())


# A code that covers TFS901 would suppress its own report: it is never judged.
EXEMPT = UnusedNoqa.code


def unused_noqa(path: str, text: str, suppressions: Suppressions,
                used: Mapping[Directive, Collection[str]], enabled: Callable[[str], bool],
                known: Sequence[str]) -> List[Finding]:
    """A TFS901 finding for each inline directive in a comment with TFS codes that
    suppressed nothing: `used` holds the codes of each directive that did suppress a
    finding; `enabled(code)`: whether this file is checked for `code`; `known`: every
    rule's code. A code is judged only if every rule code it covers is checked here (a
    code no rule has can never suppress anything)."""
    lines: Optional[List[str]] = None
    out: List[Finding] = []
    for directive in suppressions.directives():
        if directive.codes is None or not directive.in_comment:
            continue
        unused = [c for c in directive.codes if c.startswith("TFS")
                  and c not in used.get(directive, ()) and not EXEMPT.startswith(c)
                  and all(enabled(k) for k in known if k.startswith(c))]
        if not unused:
            continue
        if lines is None:
            lines = physical_lines(text)
        line = lines[directive.line - 1].rstrip("\r\n")
        out.append(_finding(path, directive, line, unused))
    return out


def _finding(path: str, directive: Directive, line: str, unused: List[str]) -> Finding:
    end = min(directive.end, len(line))
    listed = ", ".join(unused)
    message = (f"unused `noqa` code{'s' if len(unused) > 1 else ''} {listed}: no "
               f"{' or '.join(unused)} finding is reported on this line")
    kept = [c for c in _written_codes(directive, line) if c.upper() not in unused]
    what = f"Remove {listed} from the `noqa` comment" if kept else "Remove the `noqa` comment"
    fix = make_fix(SAFE, what, _edit(directive, line, kept))
    return Finding(path, directive.line, directive.start + 1, directive.line, end + 1,
                   UnusedNoqa.code, UnusedNoqa.name, UnusedNoqa.severity, message, fix)


def _codes_end(directive: Directive, line: str) -> int:
    """Where the codes end, before the separators the directive's match takes after them."""
    end = min(directive.end, len(line))
    return directive.codes_start + len(line[directive.codes_start:end].rstrip(", \t\f"))


def _written_codes(directive: Directive, line: str) -> List[str]:
    """The directive's codes as the line spells them, in order."""
    return split_codes(line[directive.codes_start:_codes_end(directive, line)])


def _edit(directive: Directive, line: str, kept: List[str]) -> Edit:
    n = directive.line
    if kept:  # rewrite the list of codes in the style it was written in
        start, end = directive.codes_start, _codes_end(directive, line)
        between = re.search(r"[,\s]+", line[start:end])
        separator = between.group() if between else ", "
        return Edit(n, start + 1, n, end + 1, separator.join(kept))
    end = min(directive.end, len(line))
    if line[end:directive.comment_end].strip():
        # more comment text after it: keep that text, as a comment
        return Edit(n, directive.start + 1, n, end + 1, "# ")
    # nothing after it: remove it with the spaces before it (the whole comment, when
    # the directive starts it)
    start = len(line[:directive.start].rstrip())
    return Edit(n, start + 1, n, directive.comment_end + 1, "")
