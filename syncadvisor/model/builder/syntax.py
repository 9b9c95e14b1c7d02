"""Pure helpers over Python's `ast` and the source text: dotted names, argument
spans, literals, signatures. They know nothing of a walk's state.
"""
from __future__ import annotations

import ast
import builtins
import re
from typing import Dict, Iterator, List, Optional, Tuple

from .. import tfapi
from ..facts import OTHER, Argument, Span, Value


MEMBER_LIKE = re.compile(r"^[A-Z][A-Z0-9_]*$")  # an enum member's spelling

MAX_VALUE_DEPTH = 2  # how deep call arguments are kept as values
# A list or tuple display of at most this many constants keeps them as its value's `args`
# (`MirroredStrategy(["/gpu:0"])`: how many devices); a longer one (a literal initial
# value of thousands of numbers) keeps only its text.
MAX_DISPLAY_ITEMS = 16

MAX_SUM_DEPTH = 8  # how many terms deep `assign(total + a + b)` is searched for `total`

NEWLINE = re.compile(r"\r\n|\r|\n")

NON_ASCII = re.compile(r"[^\x00-\x7f]+")

WORD = re.compile(r"\w+")

CONSTANT_NAMES = {None: "None", True: "True", False: "False"}

SKIPPED_FIELDS = frozenset({"ctx", "op", "ops", "type_comment", "kind", "is_async",
                            "type_ignores", "simple", "conversion", "level"})

# Where the order of `_fields` is not the source's.
ORDER: Dict[type, Tuple[str, ...]] = {
    ast.IfExp: ("body", "test", "orelse"),
}

FIELDS: Dict[type, Tuple[str, ...]] = {}

def node_fields(node: ast.AST) -> Tuple[str, ...]:
    """The fields of a node's class that may hold nodes, in source order (made once a
    class, into `FIELDS`)."""
    kind = type(node)
    fields = FIELDS[kind] = ORDER.get(kind) or tuple(
        f for f in node._fields if f not in SKIPPED_FIELDS)
    return fields

NAME, ATTRIBUTE = ast.Name, ast.Attribute

# Arguments that may hand an object over: a name, an attribute, an item, a call (what it
# returns), a container of them (`Construction.passed`).
LITERAL_CONTAINERS = frozenset({ast.List, ast.Tuple, ast.Set})

PASSABLE = frozenset({ast.Name, ast.Attribute, ast.Subscript, ast.Call, ast.List, ast.Tuple,
                      ast.Set, ast.Dict})

# Names that, bound nowhere in a module, are Python's own (`len(x)`, `print(x)`).
BUILTIN_NAMES = frozenset(dir(builtins))

def dotted_parts(node: ast.AST) -> Optional[Tuple[str, ...]]:
    """('a', 'b', 'c') for `a.b.c`; None for anything that is not a plain dotted name.
    `None`, `True` and `False` count as names (they resolve to nothing)."""
    if node.__class__ is NAME:
        return (node.id,)
    parts: List[str] = []
    while node.__class__ is ATTRIBUTE:
        parts.append(node.attr)
        node = node.value
    if node.__class__ is NAME:
        parts.append(node.id)
    elif not parts and is_name_constant(node):
        parts.append(CONSTANT_NAMES[node.value])  # type: ignore[attr-defined]
    else:
        return None
    parts.reverse()
    return tuple(parts)

def is_name_constant(node: ast.AST) -> bool:
    """`None`, `True`, `False`: constants to Python, names to `dotted_parts`."""
    if not isinstance(node, ast.Constant):
        return False
    value = node.value
    return value is None or value is True or value is False

def unstarred(node: ast.AST) -> ast.AST:
    return node.value if isinstance(node, ast.Starred) else node

def attribute_of(node: ast.AST) -> Optional[Tuple[ast.AST, str]]:
    """(value, attr) for `value.attr`."""
    return (node.value, node.attr) if isinstance(node, ast.Attribute) else None

def name_of(node: ast.AST) -> Optional[str]:
    """`x` for the plain name `x` (and for `None`, `True`, `False`)."""
    if isinstance(node, ast.Name):
        return node.id
    return CONSTANT_NAMES[node.value] if is_name_constant(node) else None  # type: ignore[attr-defined]

def func_of(node: ast.AST) -> Optional[ast.AST]:
    """The callee expression of a call; None for anything else."""
    return node.func if isinstance(node, ast.Call) else None

def has_arguments(call: ast.Call) -> bool:
    return bool(call.args or call.keywords)

def literal_int(text: str) -> Optional[int]:
    try:
        return int(text.replace("_", ""), 0)
    except ValueError:
        return None

# The value of an argument nobody reads (Construction.args of a class that is not a Keras
# object with options): one shared object, so models stay small.
UNREAD = Value(OTHER, "", Span(0, 0, 0, 0))

# (keyword, star) -> the Argument that records only those: shared, never changed.
SLOTS_MADE: Dict[Tuple[Optional[str], str], Argument] = {}

PARTIAL_NAMES = frozenset(q.rpartition(".")[2] for q in tfapi.PARTIAL_CALLS)

# Each call's tuple of argument keywords (`FileModel.handovers`), one object per content.
KEYWORDS_MADE: Dict[Tuple[str, ...], Tuple[str, ...]] = {}

CURRENT_STRATEGY_NAMES = frozenset(q.rpartition(".")[2] for q in tfapi.CURRENT_STRATEGY_CALLS)

def argument_slot(keyword: Optional[str], star: str) -> Argument:
    slot = SLOTS_MADE.get((keyword, star))
    if slot is None:
        slot = SLOTS_MADE[(keyword, star)] = Argument(keyword, UNREAD, UNREAD.span, star)
    return slot

# Nothing to record in these, and nothing below them: the walk does not even call itself
# for them (a quarter of the nodes it meets).
LEAVES = frozenset({ast.Name, ast.Constant})

# Comparisons whose result is a Python bool whatever the operands are.
PYTHON_COMPARISONS = frozenset({ast.Is, ast.IsNot, ast.In, ast.NotIn})

# Calls of builtins whose result is a Python value.
PYTHON_PREDICATES = frozenset({"isinstance", "issubclass", "hasattr", "callable", "len",
                               "getattr", "any", "all", "bool", "type", "id"})

def plain_test(node: ast.AST, params: Tuple[str, ...]) -> bool:
    """A test that reads like a Python value, whatever its names hold: a parameter of the
    function (`training`: the model takes parameters for Python values in tests), a
    literal, `x is None`, `k in d`, `isinstance(...)`, and `not`/`and`/`or` of them."""
    kind = node.__class__
    if kind is NAME:
        return node.id in params  # type: ignore[attr-defined]
    if kind is ast.Constant:
        return True
    if kind is ast.UnaryOp:
        return node.op.__class__ is ast.Not and plain_test(node.operand, params)  # type: ignore[attr-defined]
    if kind is ast.BoolOp:
        return all(plain_test(value, params) for value in node.values)  # type: ignore[attr-defined]
    if kind is ast.Compare:
        return all(op.__class__ in PYTHON_COMPARISONS for op in node.ops)  # type: ignore[attr-defined]
    if kind is ast.Call:
        return (name_of(node.func) or "") in PYTHON_PREDICATES  # type: ignore[attr-defined]
    return False

def word_positions(text: str, word: str) -> Iterator[int]:
    """Where `word` stands as a whole word in `text` (what `\\bword\\b` finds). A literal
    search and a look at either side: a pattern that starts with `\\b` has no literal
    prefix to scan for, and tries every position of the file. That holds for a word of
    `\\w` characters only: an identifier may hold others (a combining mark, `·`, `℘`),
    where `\\b` means something else and matches may overlap; the pattern finds those."""
    if not WORD.fullmatch(word):
        yield from (match.start() for match in re.finditer(rf"\b{re.escape(word)}\b", text))
        return
    size, at = len(word), text.find(word)
    while at >= 0:
        end = at + size
        if not (at and is_word_char(text[at - 1])) and \
                not (end < len(text) and is_word_char(text[end])):
            yield at
        at = text.find(word, end)

def is_word_char(char: str) -> bool:
    """`\\w` of a `str` pattern."""
    return char.isalnum() or char == "_"

def before(a: ast.AST, b: ast.AST) -> bool:
    return (a.lineno, a.col_offset) < (b.lineno, b.col_offset)  # type: ignore[attr-defined]

def skip_comment(text: str, i: int) -> int:
    """Past a `#` comment starting at `i`, to its line's end."""
    while i < len(text) and text[i] not in "\r\n":
        i += 1
    return i

def grouped(text: str, after: int, start: int, end: int, first: bool) -> Tuple[int, int]:
    """The offsets of an argument with the parentheses that group it: `(x)` in `f((x))`.
    Between `after` (the callee's end, or the previous argument's) and the argument, the
    text holds only commas, parentheses, white space and comments: every `(` there
    groups the argument, but the call's own (before the first argument)."""
    opening: List[int] = []
    i = after
    while i < start:
        char = text[i]
        if char == "#":
            i = skip_comment(text, i)
            continue
        if char == "(":
            opening.append(i)
        i += 1
    groups = len(opening) - first
    if groups <= 0:  # (a lone generator argument's span takes the call's parentheses)
        return start, end
    closed = 0
    while closed < groups:  # on past the closing parenthesis of each group
        char = text[end]
        if char == "#":
            end = skip_comment(text, end)
            continue
        closed += char == ")"
        end += 1
    return opening[-groups], end

def trailing_comma(text: str, end: int) -> Optional[int]:
    """The offset of a comma after the last argument (`f(x=1,)`), when only spaces,
    tabs, form feeds and backslash-continuations stand between them; else None."""
    i = end
    while i < len(text):
        char = text[i]
        if char in " \t\f":
            i += 1
        elif char == "\\" and text.startswith(("\r\n", "\r", "\n"), i + 1):
            i += 3 if text.startswith("\r\n", i + 1) else 2
        else:
            return i if char == "," else None
    return None

def single_string_literal(text: str) -> bool:
    """True for one string literal; False for implicitly concatenated ones ("a" "b"),
    which Python joins into one constant (the model keeps such a value opaque)."""
    i = 0
    while i < len(text) and text[i] not in "'\"":
        i += 1
    quote = text[i:i + 3] if text[i:i + 3] in ("'''", '"""') else text[i:i + 1]
    body_end = len(text) - len(quote)
    if not quote or body_end < i + len(quote) or not text.endswith(quote):
        return False
    j = i + len(quote)
    while j < body_end:
        if text[j] == "\\":
            j += 2  # an escaped character (in a raw string too, it cannot end the string)
            continue
        if text.startswith(quote, j):
            return False
        j += 1
    return j == body_end

def is_preamble(statement: ast.AST) -> bool:
    if isinstance(statement, ast.Expr):
        return isinstance(statement.value, ast.Constant) and isinstance(statement.value.value, str)
    return (isinstance(statement, ast.ImportFrom) and statement.module == "__future__"
            and not statement.level)

def signature(args: ast.arguments) -> Tuple[str, ...]:
    """`FunctionInfo.params`: positional names, then `*args` (or a bare `*` before
    keyword-only ones), keyword-only names, `**kwargs`."""
    names = [a.arg for a in args.posonlyargs] + [a.arg for a in args.args]
    if args.vararg is not None:
        names.append("*" + args.vararg.arg)
    elif args.kwonlyargs:
        names.append("*")
    names += [a.arg for a in args.kwonlyargs]
    if args.kwarg is not None:
        names.append("**" + args.kwarg.arg)
    return tuple(names)

def param_names(args: ast.arguments) -> List[str]:
    names = [a.arg for a in args.posonlyargs] + [a.arg for a in args.args]
    if args.vararg is not None:
        names.append(args.vararg.arg)
    names += [a.arg for a in args.kwonlyargs]
    if args.kwarg is not None:
        names.append(args.kwarg.arg)
    return names
