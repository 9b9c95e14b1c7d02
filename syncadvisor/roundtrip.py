"""Whether libcst reads a text as it is: the check a fixed text must pass to be kept.

Fixes are edits to the text, made at the model's positions; libcst, which keeps every
comment, comma and space of a module, parses the result and must print it back as it
is, so that what is written is code a lossless rewriter agrees is well formed. Its
native parser is guarded first against the inputs that crash or stall it.
"""
from __future__ import annotations

from typing import List, Optional, Tuple

from .lines import line_starts

# libcst's native parser recurses on the C stack once per nesting level: from about 1,500
# nested brackets, or 8,000 operands of one `and`, the stack overflows and the whole
# process dies (SIGSEGV); long operator, attribute or call chains take seconds to
# minutes. Python's own parser refuses the deepest of these (more than
# 200 nested brackets; RecursionError or MemoryError on deep expressions), and nothing
# written by hand comes near the limit.
MAX_EXPRESSION_DEPTH = 1000

# Such nesting needs a long logical line: one physical line of MAX_EXPRESSION_DEPTH
# characters, or a run of lines continued one operand or bracket at a time (a generated
# formula wrapped by a formatter). Only files that have one pay for the exact check.
_CONTINUED_RUN = 100
_ENDS = tuple("-+*/%&|^.,([{\\") + (" and", " or", " not")
_STARTS = tuple("-+*/%&|^.)]}") + ("and ", "or ", "not ")


def _may_nest_deeply(text: str) -> bool:
    lines = text.splitlines()
    if max(map(len, lines), default=0) >= MAX_EXPRESSION_DEPTH:
        return True
    run = 0
    for line in lines:
        stripped = line.strip()
        if stripped.endswith(_ENDS) or stripped.startswith(_STARTS):
            run += 1
            if run >= _CONTINUED_RUN:
                return True
        else:
            run = 0
    return False


def parse_hazard(text: str) -> Optional[Tuple[int, int, str]]:
    """(line, column, why) when parsing `text` with libcst could crash or stall; else None.

    Python's parser (fast, and limited on purpose) first, then the nesting of expressions,
    counting each operand of an `and`/`or` chain as one level since libcst nests them
    where Python keeps them flat.
    """
    if not _may_nest_deeply(text):
        return None
    import ast
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings are not ours to print
            tree = ast.parse(text)
    except SyntaxError as exc:
        if exc.msg and exc.msg.startswith("too many nested"):  # "... parentheses"
            return exc.lineno or 1, max(1, exc.offset or 1), f"{exc.msg} (Python's limit is 200)"
        return None  # an ordinary syntax error, which libcst reports safely
    except (RecursionError, MemoryError):
        return 1, 1, "too deeply nested for Python's own parser"
    except ValueError:  # NUL bytes (Python < 3.12): libcst reports them
        return None
    expr, boolop = ast.expr, ast.BoolOp
    stack: List[Tuple[ast.AST, int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, expr):
            depth += len(node.values) - 1 if isinstance(node, boolop) else 1
            if depth > MAX_EXPRESSION_DEPTH:
                line = node.lineno
                starts = line_starts(text)
                prefix = text[starts[line - 1]:].encode("utf-8")[:node.col_offset]
                column = len(prefix.decode("utf-8", "ignore")) + 1
                return line, column, (f"an expression nested more than {MAX_EXPRESSION_DEPTH} "
                                      f"levels deep (or an `and`/`or` chain that long)")
        stack.extend((child, depth) for child in ast.iter_child_nodes(node))
    return None


def why_not_roundtrip(text: str) -> Optional[str]:
    """None when libcst parses `text` and prints it back as it is; else why not."""
    import libcst as cst

    hazard = parse_hazard(text)
    if hazard is not None:
        return f"libcst could crash on it: {hazard[2]} at line {hazard[0]}"
    try:
        code = cst.parse_module(text).code
    except cst.ParserSyntaxError as exc:
        return f"it would not parse: {exc.message}".rstrip()
    except (RecursionError, MemoryError):
        return "it would not parse: nested too deeply"
    # libcst must read the text as it is: where it does not (a `\`-newline on a line of its
    # own after a block moves the next statement into the block), the positions the fixes
    # were made from cannot be trusted, and neither can the result.
    if code != text and align_to_text(code, text) is None:
        return "libcst does not read it as it is written"
    return None


def roundtrips(text: str) -> bool:
    return why_not_roundtrip(text) is None


def align_to_text(generated: str, text: str):
    """Offsets in `generated` -> offsets in `text`, when `generated` is `text` without
    some backslash-newlines (what libcst drops); None when it is not, e.g. when libcst
    moved a statement after `\\`-newline into the block above it."""
    kept: List[int] = []  # for each character of `generated`, its offset in `text`
    j, n = 0, len(text)
    block = 4096
    i = 0
    while i < len(generated):
        chunk = generated[i:i + block]
        if text.startswith(chunk, j):  # the common case: a whole block unchanged
            kept.extend(range(j, j + len(chunk)))
            i += len(chunk)
            j += len(chunk)
            continue
        while j < n and text[j] != generated[i]:
            if text[j] not in "\\\r\n":
                return None  # libcst changed the code, not only dropped a continuation
            j += 1  # a character libcst dropped
        if j >= n:
            return None
        kept.append(j)
        i += 1
        j += 1

    def to_text(offset: int, is_end: bool) -> int:
        if offset >= len(kept):
            return len(text) if not kept else kept[-1] + 1
        if is_end and offset > 0:
            return kept[offset - 1] + 1  # just after the last character of the node
        return kept[offset]
    return to_text
