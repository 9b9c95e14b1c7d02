"""A notebook cell read as IPython reads it: its Python, and where each part came from.

`read_cell(source)` follows `IPython.core.inputtransformer2.TransformerManager.
transform_cell` of IPython 9.19, step by step: the cleanup transforms (leading empty
lines, the common indent, `>>>`/`...` and `In [1]:` prompts), the line transform (a
`%%cell magic` at the start of the cell), then the token transforms one at a time until
none applies (`x = %magic`, `x = !cmd`, `%magic`/`!cmd`/`!!cmd`/`,f a`/`;f a`/`/f a`
and `?obj` at the start of a logical line, with backslash continuations, and `obj?`,
`obj??` help). IPython is never imported: the result must not depend on whether, or
which, IPython is installed. What IPython takes from the standard library (`tokenize`,
`textwrap.dedent`, `str.splitlines`) this module takes from it too, so that on one
Python both read a cell alike; `tests/surfaces/test_ipython_oracle.py` holds the two
against each other over a corpus of real cells.

Every line IPython produces keeps the span of the user's text it stands for, so a
position in the Python maps back to the cell as written (`CellCode.source_offset`): a
line IPython only shortened at its start (an indent, a prompt) maps exactly, shifted; a
line it rewrote (a magic) maps its untouched head (`x = ` of `x = !ls`) exactly and the
rest to where the IPython syntax starts. Only lines the user wrote as they are read
(`Line.exact`) may be edited by a fix.
"""
from __future__ import annotations

import re
import sys
import textwrap
import tokenize
import warnings
from ast import PyCF_ALLOW_TOP_LEVEL_AWAIT, PyCF_ONLY_AST, Expr, Name
from typing import Callable, Iterator, List, Optional, Sequence, Tuple


class Line:
    """One line as IPython holds it (`text`, with its ending) and what it stands for:
    `source[start:end]` of the cell (with the newline IPython adds to a cell that has
    none), of which IPython removed the first `skip` characters and keeps the next
    `keep` characters of `text` as written. An exact line is the user's text unchanged
    past `skip`: `text == source[start + skip:end]`."""

    __slots__ = ("text", "start", "end", "skip", "keep", "exact")

    def __init__(self, text: str, start: int, end: int, skip: int, keep: int, exact: bool):
        self.text, self.start, self.end = text, start, end
        self.skip, self.keep, self.exact = skip, keep, exact

    def __repr__(self) -> str:  # for test failures
        return f"Line({self.text!r}, {self.start}, {self.end}, skip={self.skip}, " \
               f"keep={self.keep}, exact={self.exact})"


class CellCode:
    """What IPython makes of a cell. `python` is None where IPython refuses the cell
    (`error` says why, as IPython would raise it)."""

    __slots__ = ("source", "python", "_lines", "error", "added_newline", "unsure", "_starts")

    def __init__(self, source: str, lines: Optional[List[Line]], error: Optional[str],
                 unsure: bool = False):
        self.source = source
        # Read quickly, and the cell may hold special syntax: `python` is what IPython
        # makes of it only if Python can parse it (see `read_cell`).
        self.unsure = unsure
        self.added_newline = not source.endswith("\n")  # IPython adds one: see read_cell
        self.error = error
        # None: the cell as written is IPython's Python, line for line (made when asked)
        self._lines = lines
        if lines is None:
            self.python: Optional[str] = source if not self.added_newline else source + "\n"
        else:
            self.python = None if error is not None else "".join(line.text for line in lines)
        self._starts: Optional[List[int]] = None

    @property
    def lines(self) -> List[Line]:
        if self._lines is None:
            self._lines = _split(self.python or "", 0)
        return self._lines

    def _line_starts(self) -> List[int]:
        if self._starts is None:
            starts, at = [], 0
            for line in self.lines:
                starts.append(at)
                at += len(line.text)
            self._starts = starts
        return self._starts

    def line_at(self, offset: int) -> int:
        """The index of the line of `python` that holds `offset` (its end: the last)."""
        from bisect import bisect_right

        return max(0, bisect_right(self._line_starts(), offset) - 1)

    def source_offset(self, offset: int) -> int:
        """Where a character offset of `python` is in the cell as the user wrote it."""
        if not self.lines:
            return 0
        index = self.line_at(offset)
        line = self.lines[index]
        column = offset - self._line_starts()[index]
        if not line.exact:
            column = min(column, line.keep)
        at = line.start + line.skip + max(0, column)
        return min(at, line.end, len(self.source))


def _split(text: str, start: int) -> List[Line]:
    """`text.splitlines(keepends=True)`, as IPython splits a cell, each line exact."""
    out = []
    for part in text.splitlines(keepends=True):
        out.append(Line(part, start, start + len(part), 0, len(part), True))
        start += len(part)
    return out


def _shortened(lines: List[Line], texts: Sequence[str]) -> List[Line]:
    """`lines` after a transform gave them `texts`: a line that only lost characters at
    its start keeps its place, shifted; anything else (a transform that joined or split
    lines) leaves one rewritten line for the whole span."""
    if len(texts) == len(lines) and all(old.text.endswith(new) for old, new in zip(lines, texts)):
        out = []
        for old, new in zip(lines, texts):
            if new == old.text:
                out.append(old)
                continue
            cut = len(old.text) - len(new)
            out.append(Line(new, old.start, old.end, old.skip + cut, max(0, old.keep - cut),
                            old.exact))
        return out
    # IPython's lines are now `texts` (a dedent that joined "\r" and "\n" into one line
    # break): each takes the span of the line at its place, the last one the rest; none
    # is the user's text as written any more.
    out, end = [], lines[-1].end if lines else 0
    for k, text in enumerate(texts):
        if k < len(lines):
            start = lines[k].start
            stop = lines[k].end if k < len(texts) - 1 else end
            skip = lines[k].skip
        else:
            start = stop = end
            skip = 0
        out.append(Line(text, start, stop, skip, 0, False))
    return out


def _merged(lines: List[Line], first: int, last: int, text: str, head: int) -> List[Line]:
    """One rewritten line `text` for lines[first..last] (`last` may be one past the end),
    whose first `head` characters are the first line's as they were."""
    a, b = lines[first], lines[min(last, len(lines) - 1)]
    new = Line(text, a.start, b.end, a.skip, min(head, a.keep), False)
    return lines[:first] + [new] + lines[last + 1:]


# --- cleanup transforms --------------------------------------------------------------------

def leading_empty_lines(lines: List[Line]) -> List[Line]:
    for i, line in enumerate(lines):
        if line.text and not line.text.isspace():
            return lines[i:]
    return lines


def leading_indent(lines: List[Line]) -> List[Line]:
    """IPython 9: `textwrap.dedent` of the whole cell (the common indent of all lines)."""
    if not lines:
        return lines
    dedented = textwrap.dedent("".join(line.text for line in lines))
    return _shortened(lines, dedented.splitlines(keepends=True))


class _PromptStripper:
    """IPython's PromptStripper; with `doctest`, its doctest variant: `>>>` prompts that may
    be indented, `...` continuation prompts only with a `>>>` in the cell, prompts inside
    a triple-quoted string kept, and the stripped stretches dedented."""

    def __init__(self, prompt_re: "re.Pattern[str]", initial_re: Optional["re.Pattern[str]"] = None,
                 doctest: bool = False):
        self.prompt_re = prompt_re
        self.initial_re = initial_re or prompt_re
        self.doctest = doctest
        if doctest:
            self._doctest_initial_re = re.compile(r"^\s*>>>")
            self._doctest_ps1_re = re.compile(r"^\s*>>>[ \t]?")
            self._doctest_ps2_re = re.compile(r"^\s*\.\.\.[ \t]?")
            self._triple_quote_re = re.compile(r"(?<!\\)(\"\"\"|''')")

    def _triple_quote_mask(self, lines: List[str]) -> List[bool]:
        mask: List[bool] = []
        in_triple: Optional[str] = None
        preserve_prompt = False
        seen_prompt = False
        string_prefix_re = re.compile(r"(?i)^[rubf]*$")
        for line in lines:
            mask.append(in_triple is not None and preserve_prompt)
            for m in self._triple_quote_re.finditer(line):
                q = m.group(1)
                if in_triple is None:
                    in_triple = q
                    before_quote = line[: m.start()]
                    stripped = self._doctest_ps1_re.sub("", before_quote, count=1)
                    stripped = self._doctest_ps2_re.sub("", stripped, count=1)
                    had_prompt = stripped != before_quote
                    prompted_code = had_prompt and seen_prompt
                    preserve_prompt = bool(
                        not prompted_code and string_prefix_re.match(stripped.strip()))
                    mask[-1] = preserve_prompt
                elif in_triple == q:
                    in_triple = None
                    preserve_prompt = False
            seen_prompt = seen_prompt or bool(self._doctest_initial_re.match(line))
        return mask

    def __call__(self, lines: List[Line]) -> List[Line]:
        if not lines:
            return lines
        texts = [line.text for line in lines]
        if self.doctest:
            # Nothing is stripped without a `>>>` line outside strings: none, no `>>>`.
            if not any(">>>" in t for t in texts):
                return lines
            return self._doctest(lines, texts)
        if self.initial_re.match(texts[0]) or (len(texts) > 1 and self.prompt_re.match(texts[1])):
            return _shortened(lines, [self.prompt_re.sub("", t, count=1) for t in texts])
        return lines

    def _doctest(self, lines: List[Line], texts: List[str]) -> List[Line]:
        triple_mask = self._triple_quote_mask(texts)
        if not any((not in_triple) and self._doctest_initial_re.match(t)
                   for t, in_triple in zip(texts, triple_mask)):
            return lines
        out: List[str] = []
        stripped_mask: List[bool] = []
        for t, in_triple in zip(texts, triple_mask):
            if in_triple:
                out.append(t)
                stripped_mask.append(False)
                continue
            if self._doctest_ps1_re.match(t):
                new = self._doctest_ps1_re.sub("", t, count=1)
            elif self._doctest_ps2_re.match(t):
                new = self._doctest_ps2_re.sub("", t, count=1)
            else:
                new = t
            out.append(new)
            stripped_mask.append(new != t)
        lines = _shortened(lines, out)
        if len(lines) != len(out):
            return lines  # (cannot happen: stripping keeps the lines)
        result: List[Line] = []
        i = 0
        while i < len(lines):  # dedent each stretch of stripped lines outside strings
            j = i
            in_triple = triple_mask[i]
            while j < len(lines) and triple_mask[j] == in_triple:
                j += 1
            segment = lines[i:j]
            if not in_triple and any(stripped_mask[i:j]):
                dedented = textwrap.dedent("".join(ln.text for ln in segment))
                result.extend(_shortened(segment, dedented.splitlines(keepends=True)))
            else:
                result.extend(segment)
            i = j
        return result


classic_prompt = _PromptStripper(re.compile(r"^(>>>|\.\.\.)( |$)"), re.compile(r"^>>>( |$)"),
                                 doctest=True)

ipython_prompt = _PromptStripper(re.compile(
    r"""
    ^(                         # Match from the beginning of a line, either:
    ((\[nav\]|\[ins\])?\ )?    # Vi editing mode prompt, if it's there
    In\                        # The 'In' of the prompt, with a space
    \[\d+\]:                   # Command index, as displayed in the prompt
    \                          # With a mandatory trailing space
    |                          # ... or ...
    \s*                        # All leading whitespace characters
    \.{3,}:                    # The three (or more) dots
    \ ?                        # With an optional trailing space
    )
    """, re.VERBOSE))


# --- the line transform: a cell magic --------------------------------------------------

def cell_magic(lines: List[Line]) -> List[Line]:
    if not lines or not lines[0].text.startswith("%%"):
        return lines
    if re.match(r"%%\w+\?", lines[0].text):
        return lines  # `%%magic?`: help, a token transform
    magic_name, _, first_line = lines[0].text[2:].rstrip().partition(" ")
    body = "".join(line.text for line in lines[1:])
    call = "get_ipython().run_cell_magic(%r, %r, %r)\n" % (magic_name, first_line, body)
    return _merged(lines, 0, len(lines) - 1, call, 0)


# --- token transforms ------------------------------------------------------------------

Token = tokenize.TokenInfo
# The token transforms only ever fire at one of these: a line that starts with an escape
# character, a `?` anywhere, or `=` followed by `%` or `!` (with spaces or backslash
# continuations between). A cell with none of them is left as the cleanup made it, which
# spares most cells Python's tokenizer. "Lines" as str.splitlines cuts them.
_MAY_TRANSFORM = re.compile(
    "[?]|(?:^|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029])\\s*[!%,;/]|=[\\s\\\\]*[%!]")


def _generate_tokens(readline: Callable[[], str]) -> Iterator[Token]:
    """IPython's `tokenutil.generate_tokens_catch_errors(readline, ["expected EOF"])`."""
    errors_to_catch = [
        "unterminated string literal", "invalid non-printable character",
        "after line continuation character", "invalid decimal literal",
        "invalid binary literal", "invalid octal literal", "invalid hexadecimal literal",
        "in binary literal", "in octal literal", "expected EOF",
    ]
    tokens: List[Token] = []
    try:
        for token in tokenize.generate_tokens(readline):
            tokens.append(token)
            yield token
    except tokenize.TokenError as exc:
        if any(error in exc.args[0] for error in errors_to_catch):
            if tokens:
                start = tokens[-1].start[0], tokens[-1].end[0]
                line = tokens[-1].line
            else:
                start, line = (1, 0), ""
            yield Token(tokenize.ERRORTOKEN, "", start, start, line)
        else:
            raise


def make_tokens_by_line(lines: List[str]) -> List[List[Token]]:
    """IPython's: the tokens grouped by logical line (a bracket keeps a group open)."""
    newline, nl, op = tokenize.NEWLINE, tokenize.NL, tokenize.OP
    tokens_by_line: List[List[Token]] = [[]]
    parenlev = 0
    try:
        for token in _generate_tokens(iter(lines).__next__):
            tokens_by_line[-1].append(token)
            if token.type == newline or (token.type == nl and parenlev <= 0):
                tokens_by_line.append([])
            elif token.type == op and token.string in {"(", "[", "{"}:
                parenlev += 1
            elif token.type == op and token.string in {")", "]", "}"}:
                if parenlev > 0:
                    parenlev -= 1
    except tokenize.TokenError:
        pass  # the input ends in a multi-line string or expression
    if not tokens_by_line[-1]:
        tokens_by_line.pop()
    return tokens_by_line


def _find_assign_op(token_line: List[Token]) -> Optional[int]:
    paren_level = 0
    for i, ti in enumerate(token_line):
        s = ti.string
        if s == "=" and paren_level == 0:
            return i
        if s in {"(", "[", "{"}:
            paren_level += 1
        elif s in {")", "]", "}"}:
            if paren_level > 0:
                paren_level -= 1
    return None


def find_end_of_continued_line(lines: List[str], start_line: int) -> int:
    end_line = start_line
    while lines[end_line].endswith("\\\n"):
        end_line += 1
        if end_line >= len(lines):
            break
    return end_line


def assemble_continued_line(lines: List[str], start: Tuple[int, int], end_line: int) -> str:
    parts = [lines[start[0]][start[1]:]] + lines[start[0] + 1:end_line + 1]
    return " ".join([p.rstrip()[:-1] for p in parts[:-1]] + [parts[-1].rstrip()])


class _Refused(Exception):
    """IPython raises here: the cell cannot be run."""


class _Transform:
    """One found instance of special syntax (IPython's TokenTransformBase)."""

    priority = 10

    def __init__(self, start: Tuple[int, int]):
        self.start_line = start[0] - 1
        self.start_col = start[1]

    def sortby(self) -> Tuple[int, int, int]:
        return self.start_line, self.start_col, self.priority

    def transform(self, lines: List[Line]) -> List[Line]:
        raise NotImplementedError

    def _replace_continued(self, lines: List[Line], escape: str,
                           make: Callable[[str, str], str]) -> List[Line]:
        """The logical line from the escape on (backslash continuations joined) -> one
        line `make(head, rest)`, the head (what precedes the escape) kept."""
        texts = [line.text for line in lines]
        start_line, start_col = self.start_line, self.start_col
        head = texts[start_line][:start_col]
        end_line = find_end_of_continued_line(texts, start_line)
        rest = assemble_continued_line(texts, (start_line, start_col), end_line)
        if not rest.startswith(escape):  # IPython asserts it
            raise _Refused(f"AssertionError: {rest}")
        return _merged(lines, start_line, end_line, make(head, rest) + "\n", len(head))


class MagicAssign(_Transform):
    """`a = %foo`"""

    @classmethod
    def find(cls, tokens_by_line: List[List[Token]]) -> Optional[_Transform]:
        for line in tokens_by_line:
            assign_ix = _find_assign_op(line)
            if assign_ix is not None and len(line) >= assign_ix + 2 \
                    and line[assign_ix + 1].string == "%" \
                    and line[assign_ix + 2].type == tokenize.NAME:
                return cls(line[assign_ix + 1].start)
        return None

    def transform(self, lines: List[Line]) -> List[Line]:
        def make(lhs: str, rhs: str) -> str:
            magic_name, _, args = rhs[1:].partition(" ")
            return lhs + f"get_ipython().run_line_magic({magic_name!r}, {args!r})"
        return self._replace_continued(lines, "%", make)


class SystemAssign(_Transform):
    """`a = !foo`"""

    @classmethod
    def find(cls, tokens_by_line: List[List[Token]]) -> Optional[_Transform]:
        for line in tokens_by_line:
            assign_ix = _find_assign_op(line)
            if assign_ix is None or line[assign_ix].line.strip().startswith("=") \
                    or len(line) < assign_ix + 2:
                continue
            if sys.version_info >= (3, 12):
                if line[assign_ix + 1].type == tokenize.OP and line[assign_ix + 1].string == "!":
                    return cls(line[assign_ix + 1].start)
                continue
            if line[assign_ix + 1].type == tokenize.ERRORTOKEN:
                ix = assign_ix + 1
                while ix < len(line) and line[ix].type == tokenize.ERRORTOKEN:
                    if line[ix].string == "!":
                        return cls(line[ix].start)
                    elif not line[ix].string.isspace():
                        break
                    ix += 1
        return None

    def transform(self, lines: List[Line]) -> List[Line]:
        return self._replace_continued(
            lines, "!", lambda lhs, rhs: lhs + f"get_ipython().getoutput({rhs[1:]!r})")


ESCAPE_SINGLES = {"!", "?", "%", ",", ";", "/"}
ESCAPE_DOUBLES = {"!!", "??"}


def _make_help_call(target: str, esc: str) -> str:
    method = "pinfo2" if esc == "??" else "psearch" if "*" in target else "pinfo"
    t_magic_name, _, t_magic_arg_s = " ".join([method, target]).partition(" ")
    t_magic_name = t_magic_name.lstrip("%")
    return "get_ipython().run_line_magic({!r}, {!r})".format(t_magic_name, t_magic_arg_s)


def _tr_help(content: str) -> str:
    return _make_help_call(content, "?") if content else "get_ipython().show_usage()"


def _tr_help2(content: str) -> str:
    return _make_help_call(content, "??") if content else "get_ipython().show_usage()"


def _tr_magic(content: str) -> str:
    name, _, args = content.partition(" ")
    return "get_ipython().run_line_magic({!r}, {!r})".format(name, args)


def _tr_quote(content: str) -> str:
    name, _, args = content.partition(" ")
    return '{}("{}")'.format(name, '", "'.join(args.split()))


def _tr_quote2(content: str) -> str:
    name, _, args = content.partition(" ")
    return '{}("{}")'.format(name, args)


def _tr_paren(content: str) -> str:
    name, _, args = content.partition(" ")
    if name == "":
        raise SyntaxError('"!" must be followed by a callable name')  # (IPython's words)
    return "{}({})".format(name, ", ".join(args.split()))


_TR = {"!": "get_ipython().system({!r})".format, "!!": "get_ipython().getoutput({!r})".format,
       "?": _tr_help, "??": _tr_help2, "%": _tr_magic, ",": _tr_quote, ";": _tr_quote2,
       "/": _tr_paren}


class EscapedCommand(_Transform):
    """`%foo`, `!foo`, `!!foo`, `?foo`, `,f a b`, `;f a b`, `/f a b` starting a logical line."""

    @classmethod
    def find(cls, tokens_by_line: List[List[Token]]) -> Optional[_Transform]:
        for line in tokens_by_line:
            if not line:
                continue
            ix = 0
            ll = len(line)
            while ll > ix and line[ix].type in {tokenize.INDENT, tokenize.DEDENT}:
                ix += 1
            if ix >= ll:
                continue
            if line[ix].string in ESCAPE_SINGLES:
                return cls(line[ix].start)
        return None

    def transform(self, lines: List[Line]) -> List[Line]:
        def make(indent: str, line: str) -> str:
            if len(line) > 1 and line[:2] in ESCAPE_DOUBLES:
                escape, content = line[:2], line[2:]
            else:
                escape, content = line[:1], line[1:]
            return indent + (_TR[escape](content) if escape in _TR else "")
        return self._replace_continued(lines, "", make)


_help_end_re = re.compile(
    r"""(%{0,2}
    (?!\d)[\w*]+            # Variable name
    (\.(?!\d)[\w*]+|\[-?[0-9]+\])*       # .etc.etc or [0], we only support literal integers.
    )
    (\?\??)$                # ? or ??
    """,
    re.VERBOSE,
)


class HelpEnd(_Transform):
    """`obj?` and `obj??` (and `%magic?`: before EscapedCommand at the same place)."""

    priority = 5

    def __init__(self, start: Tuple[int, int], q_locn: Tuple[int, int]):
        super().__init__(start)
        self.q_line = q_locn[0] - 1
        self.q_col = q_locn[1]

    @classmethod
    def find(cls, tokens_by_line: List[List[Token]]) -> Optional[_Transform]:
        for line in tokens_by_line:
            if len(line) > 2 and line[-2].string == "?":
                ix = 0
                while line[ix].type in {tokenize.INDENT, tokenize.DEDENT}:
                    ix += 1
                return cls(line[ix].start, line[-2].start)
        return None

    def transform(self, lines: List[Line]) -> List[Line]:
        piece = "".join(line.text for line in lines[self.start_line:self.q_line + 1])
        indent, content = piece[:self.start_col], piece[self.start_col:]
        m = _help_end_re.search(content)
        if not m:
            raise SyntaxError(content)
        call = _make_help_call(m.group(1), m.group(3))
        return _merged(lines, self.start_line, self.q_line, indent + call + "\n", len(indent))


TOKEN_TRANSFORMERS = (MagicAssign, SystemAssign, EscapedCommand, HelpEnd)
TRANSFORM_LOOP_LIMIT = 500  # IPython's: it raises RuntimeError past it


def _one_token_transform(lines: List[Line]) -> Tuple[bool, List[Line]]:
    tokens_by_line = make_tokens_by_line([line.text for line in lines])
    candidates = [t for t in (cls.find(tokens_by_line) for cls in TOKEN_TRANSFORMERS) if t]
    for transformer in sorted(candidates, key=_Transform.sortby):
        try:
            return True, transformer.transform(lines)
        except SyntaxError:
            pass
    return False, lines


_PLACEHOLDER = "__syncadvisor_escaped_line__"


def _simple_escapes(lines: List[Line]) -> Optional[List[Line]]:
    """The token transforms' result, found without tokenizing, for the most common cell
    with special syntax: only `!cmd` and `%magic` lines, each at column 0 and without a
    backslash continuation, no `?` anywhere, and nothing else a transform could apply
    to; None for any other cell.

    With each such line replaced by a name, Python must parse the cell and find that
    name as a statement of the module on that line. Then, as IPython tokenizes the cell
    again after each transform, every earlier such line has become a call and this one
    starts a logical line at bracket level 0, outside any string: its escape is the
    first candidate, and EscapedCommand rewrites this one line. Python's own tokenizer,
    pure Python before 3.12, costs a pass over the whole cell per such line."""
    texts = [line.text for line in lines]
    special = [i for i, t in enumerate(texts)  # (`%=` and `!=` are operators: full path)
               if t[:1] in ("!", "%") and t[1:2] != "=" and not t.endswith("\\\n")]
    if not special:
        return None
    rest = [t for i, t in enumerate(texts) if i not in special]
    joined = "".join(texts)
    # (A lone "\r" ends a line for Python's parser, not for the tokenizer before 3.12.)
    if "?" in joined or _IPYTHON_ONLY_BREAKS.search(joined) or _MAY_TRANSFORM.search(
            "".join(rest)) or "\r" in joined.replace("\r\n", ""):
        return None
    ends = [t[len(t.rstrip("\r\n")):] for t in texts]
    probe = "".join(_PLACEHOLDER + ends[i] if i in special else t for i, t in enumerate(texts))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = compile(probe, "<cell>", "exec", PyCF_ONLY_AST | PyCF_ALLOW_TOP_LEVEL_AWAIT,
                           dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return None
    found = {node.lineno - 1 for node in tree.body
             if isinstance(node, Expr) and isinstance(node.value, Name)
             and node.value.id == _PLACEHOLDER and node.col_offset == 0}
    if found != set(special):
        return None
    out = list(lines)
    for i in special:
        line = texts[i].rstrip()
        if len(line) > 1 and line[:2] in ESCAPE_DOUBLES:
            escape, content = line[:2], line[2:]
        else:
            escape, content = line[:1], line[1:]
        out[i] = Line(_TR[escape](content) + "\n", lines[i].start, lines[i].end, lines[i].skip,
                      0, False)
    return out


def _token_transforms(lines: List[Line]) -> List[Line]:
    if sys.version_info < (3, 12):
        simple = _simple_escapes(lines)
        if simple is not None:
            return simple
    for _ in range(TRANSFORM_LOOP_LIMIT):
        changed, lines = _one_token_transform(lines)
        if not changed:
            return lines
    raise _Refused("RuntimeError: Input transformation still changing after "
                   f"{TRANSFORM_LOOP_LIMIT} iterations. Aborting.")


# Where str.splitlines cuts a line and Python does not: a cell with one of these may be
# Python to Python's parser and still hold special syntax on a line of IPython's.
_IPYTHON_ONLY_BREAKS = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def _is_python(text: str) -> bool:
    """Python's parser reads `text` (top-level `await` allowed, as IPython compiles
    cells), on the same lines as IPython: then no token transform can apply to it, each
    needing a token (`?`, a leading `%`, `= !`, ...) that Python's grammar has no place
    for, and Python's tokenizer, which IPython runs over every cell, raises nothing."""
    if _IPYTHON_ONLY_BREAKS.search(text):
        return False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, "<cell>", "exec", PyCF_ONLY_AST | PyCF_ALLOW_TOP_LEVEL_AWAIT,
                    dont_inherit=True)
        return True
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return False


_BLANK_LINE = re.compile(r"^[^\S\n]+$", re.MULTILINE)


def _as_written(ext: str) -> bool:
    """No transform of IPython's changes the cell `ext` (ending in a newline): what most
    cells are, found with a few searches of the text instead of a pass over its lines."""
    # textwrap.dedent changes nothing where the first line is not indented (no common
    # indent) and no line is blank but for spaces (which it empties).
    first = ext[0]
    return not (first.isspace() or first == "%" or ">>>" in ext or "In [" in ext
                or "...:" in ext or _MAY_TRANSFORM.search(ext) or _BLANK_LINE.search(ext))


def read_cell(source: str, quick: bool = False) -> CellCode:
    """The cell `source` as IPython's `TransformerManager().transform_cell` reads it.

    `quick` runs neither Python's tokenizer nor its parser: a cell that may hold special
    syntax (`_MAY_TRANSFORM`) is left as the cleanup made it and marked `unsure`; it is
    what IPython reads if Python can parse it (`_is_python`), which a caller that parses
    the cells anyway learns for free, and else must be read again without `quick`. A
    quick cell that is not unsure is what IPython reads, except where IPython's
    tokenizer raises (an unindent that matches no outer indent): IPython refuses the
    cell, the quick reading gives code that Python cannot parse either."""
    ext = source if source.endswith("\n") else source + "\n"
    if quick and _as_written(ext):
        return CellCode(source, None, None)
    lines = _split(ext, 0)
    try:
        for transform in (leading_empty_lines, leading_indent, classic_prompt, ipython_prompt,
                          cell_magic):
            lines = transform(lines)
        text = "".join(line.text for line in lines)
        if quick:
            if _MAY_TRANSFORM.search(text):
                return CellCode(source, lines, None, unsure=True)
        elif not _is_python(text):
            lines = _token_transforms(lines)
    except _Refused as exc:
        return CellCode(source, lines, str(exc))
    except RecursionError as exc:
        return CellCode(source, lines, f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # noqa: BLE001 - IPython's own code raises here too (an
        # IndentationError from tokenize, an IndexError of MagicAssign.find on `a = %`):
        # then IPython refuses the cell, and so do we
        return CellCode(source, lines, f"{type(exc).__name__}: {exc}")
    return CellCode(source, lines, None)
