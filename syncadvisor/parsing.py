"""Guarding libcst's parser against the inputs that crash or stall it.

libcst's native parser recurses on the C stack once per nesting level: from about 1,500
nested brackets, or 8,000 operands of one `and`, the stack overflows and the whole
process dies (SIGSEGV), taking every other file's findings with it; long operator,
attribute or call chains take seconds to minutes (8,000 `+` operands: 93 s). Python's own
parser refuses the deepest of these (more than 200 nested brackets; RecursionError or
MemoryError on deep expressions), and nothing written by hand comes near the limit.
"""
from __future__ import annotations

from typing import List, Optional, Tuple

from .lines import line_starts

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
    stack = [(tree, 0)]
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


# --- large files: parsed one group of top-level statements at a time ------------------

# libcst's parser holds about 800 bytes of memory per character of source while it builds
# a tree (a 450 KB file peaks near 400 MB) and slows down on large inputs. Above this
# size a file is cut between top-level statements (found with Python's own parser) into
# pieces of at least CHUNK_TARGET characters, each parsed on its own: the peak follows
# the largest piece (usually one class), and the pieces' code is the file's code.
CHUNK_THRESHOLD = 100_000  # characters
CHUNK_TARGET = 32_000


def parse_chunks(text: str, threshold: Optional[int] = None, target: Optional[int] = None):
    """[(module, offset of its code in `text`)]: the whole file as one module, or, for a
    large file, consecutive pieces. libcst's `ParserSyntaxError` (and RecursionError,
    MemoryError) propagate as from `libcst.parse_module(text)`, always for the whole file,
    so that errors point where they would."""
    import libcst as cst

    threshold = CHUNK_THRESHOLD if threshold is None else threshold
    cuts = _cuts(text, CHUNK_TARGET if target is None else target) \
        if len(text) >= threshold else None
    if not cuts:
        return [(cst.parse_module(text), 0)]
    bounds = [0, *cuts, len(text)]
    try:
        return [(cst.parse_module(text[a:b]), a) for a, b in zip(bounds, bounds[1:])]
    except cst.ParserSyntaxError:
        return [(cst.parse_module(text), 0)]  # the same error, with the file's positions


def _cuts(text: str, target: int) -> List[int]:
    """Offsets where a piece may start: the start of a line after a top-level statement,
    when the next statement starts on a later line; pieces of at least `target`."""
    import ast
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            body = ast.parse(text).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []  # libcst parses it whole, and reports what is wrong
    starts = line_starts(text)
    cuts: List[int] = []
    last = 0
    for statement, following in zip(body, body[1:]):
        end = statement.end_lineno or statement.lineno
        if following.lineno <= end or end >= len(starts):
            continue  # `a = 1; b = 2`: no line between them
        cut = starts[end]
        if cut - last >= target and len(text) - cut >= target:
            cuts.append(cut)
            last = cut
    return cuts
