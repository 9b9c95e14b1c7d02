"""`--format full` (the default): each finding with its source, as ruff shows it.

    examples/train_mirrored.py:31:16: TFS201 warning: `loss_ema` has aggregation NONE ...
       |
    30 |     # Running mean of the loss: aggregation NONE, assigned per replica -> ...
    31 |     loss_ema = tf.Variable(0.0, trainable=False)
       |                ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
    32 |
    33 |     # Step counter with MEAN on an int: ValueError at creation.
       |
      ::: examples/train_mirrored.py:48:5
    48 |     loss_ema.assign(0.9 * loss_ema + 0.1 * loss)
       |     -------------------------------------------- `.assign(...)`
       |
    help: Add `aggregation=...` (...) (unsafe: needs --unsafe-fixes)

The header is the concise line. Then the span's lines, with up to CONTEXT lines around
them (blank lines at the edges left out), carets under the span; then each other place
the message names (`Finding.related`), its line underlined and labelled; then the fix.
A notebook's lines are its cell's. Tabs are expanded; control characters and bidi
controls are shown as symbols, so a source line cannot move the cursor or reorder the
terminal's text. Lines come from `Options.sources` (the run's texts, split once per
file); without them, or for a file that cannot be shown, a finding is its header and
its help.
"""
from __future__ import annotations

import unicodedata
from functools import partial
from typing import Dict, List, Optional, TextIO, Tuple

from ..findings import SAFE, SEVERITIES, Finding, Related
from . import text
from .options import DEFAULT, Options
from .style import Style

CONTEXT = 2  # lines shown before and after a span, as ruff
TAB = 4  # tab stops, as ruff shows them
# A span longer than this many lines shows its first HEAD and last TAIL lines.
LONG_SPAN, HEAD, TAIL = 8, 4, 2
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")

def write(findings: List[Finding], out: TextIO, options: Options = DEFAULT) -> None:
    render = _Renderer(options)
    out.write("".join([render.block(f) for f in findings]))


def block(f: Finding, options: Options = DEFAULT) -> str:
    """One finding as `--format full` shows it, ending with a blank line."""
    return _Renderer(options).block(f)


def _safety(f: Finding, options: Options) -> str:
    assert f.fix is not None
    if f.fix.applicability == SAFE:
        return "safe"
    return "unsafe" if options.unsafe_fixes else "unsafe: needs --unsafe-fixes"


def _where(place: Related) -> str:
    cell = f"cell {place.cell}:" if place.cell is not None else ""
    column = f":{place.column}" if place.column is not None else ""
    return f"{place.path}:{cell}{place.line}{column}"


def _indent(source: str) -> int:
    return len(source) - len(source.lstrip())


class _Renderer:
    """Renders findings; a thousand of them take milliseconds: each source line's row is
    made once per gutter width (`_rows`), and the snippet of a place that many findings
    name (a strategy's creation) once per gutter width (`_place`)."""

    def __init__(self, options: Options):
        self.options = options
        self.style = style = options.style
        self.sources = options.sources
        self.bar_open, self.bar_close = _codes(style, style.gutter)
        # carets in the colour of the finding's severity
        self.marks = {severity: _codes(style, partial(style.severity, severity))
                      for severity in SEVERITIES}
        self.other_open, self.other_close = _codes(style, style.secondary)
        # (path, cell, width) -> each line's row by line number (index 0 unused), made
        # when first shown
        self._row_cache: Dict[Tuple[str, Optional[int], int], List[Optional[str]]] = {}
        self._places: Dict[tuple, str] = {}
        self.help_open = style.help("help") + _codes(style, style.strong)[0] + ": "
        self.help_close = _codes(style, style.strong)[1] + " ("

    def _rows(self, path: str, cell: Optional[int], lines: List[str], width: int
              ) -> List[Optional[str]]:
        key = (path, cell, width)
        rows = self._row_cache.get(key)
        if rows is None:
            rows = self._row_cache[key] = [None] * (len(lines) + 1)
        return rows

    def _row(self, number: int, shown: str, width: int) -> str:
        if shown:
            return f"{self.bar_open}{number:>{width}} |{self.bar_close} {shown}\n"
        return f"{self.bar_open}{number:>{width}} |{self.bar_close}\n"

    def block(self, f: Finding) -> str:
        sources = self.sources
        lines = sources.lines(f.path, f.cell) if sources is not None else None
        span = _span(f, lines) if lines else None
        places = [(place, sources.lines(place.path, place.cell) if sources is not None else None)
                  for place in f.related]
        biggest = span[3] if span is not None else 0
        for place, place_lines in places:
            if place_lines and place.line <= len(place_lines):
                biggest = max(biggest, place.line)
        width = len(str(biggest))
        bar = f"{self.bar_open}{' ' * width} |{self.bar_close}\n"
        parts = [text.line(f, self.style), "\n"]
        if span is not None:
            assert lines is not None
            parts.append(bar)
            self._primary(parts, f, lines, span, width)
        for place, place_lines in places:
            parts.append(bar)
            parts.append(self._place(place, place_lines, width))
        if span is not None or places:
            parts.append(bar)
        if f.fix is not None:
            parts += [self.help_open, f.fix.message, self.help_close, _safety(f, self.options),
                      ")\n"]
        parts.append("\n")
        return "".join(parts)

    def _underline(self, width: int, start: int, end: int, mark: str,
                   severity: Optional[str] = None, label: str = "") -> str:
        """The marks under display columns [start, end): a finding's carets (coloured by
        its `severity`), or a related place's dashes and label."""
        marks = mark * max(end - start, 1)
        if severity is not None:
            opening, closing = self.marks.get(severity, ("", ""))
            marks = f"{opening}{marks}{closing}"
        else:
            marks = f"{self.other_open}{marks}{' ' + label if label else ''}{self.other_close}"
        return f"{self.bar_open}{' ' * width} |{self.bar_close} {' ' * start}{marks}\n"

    def _primary(self, parts: List[str], f: Finding, lines: List[str],
                 span: Tuple[int, int, int, int], width: int) -> None:
        first, last, end_column, shown_last = span
        rows = self._rows(f.path, f.cell, lines, width)
        before = max(1, first - CONTEXT)
        while before < first and not lines[before - 1].strip():
            before += 1
        for number in range(before, first):
            parts.append(rows[number] or self._context_row(rows, lines, number, width))
        if first == last:  # nearly every span: one line
            source = lines[first - 1]
            a, b = _columns(source, _shown(source)[1], f.column, end_column)
            parts.append(rows[first] or self._context_row(rows, lines, first, width))
            parts.append(self._underline(width, a, b, "^", f.severity))
            numbers: List[int] = []
        else:
            numbers = list(range(first, last + 1))
        if len(numbers) > LONG_SPAN:
            numbers = numbers[:HEAD] + [0] + numbers[-TAIL:]
        for number in numbers:
            if number == 0:  # lines left out of a long span
                parts.append(f"{self.bar_open}...{self.bar_close}\n")
                continue
            source = lines[number - 1]
            shown, widths = _shown(source)
            start = f.column if number == first else _indent(source) + 1
            end = end_column if number == last else len(source) + 1
            a, b = _columns(source, widths, start, end)
            parts.append(rows[number] or self._context_row(rows, lines, number, width))
            parts.append(self._underline(width, a, b, "^", f.severity))
        for number in range(last + 1, shown_last + 1):
            parts.append(rows[number] or self._context_row(rows, lines, number, width))

    def _context_row(self, rows: List[Optional[str]], lines: List[str], number: int,
                     width: int) -> str:
        row = rows[number] = self._row(number, _shown(lines[number - 1])[0], width)
        return row

    def _place(self, place: Related, lines: Optional[List[str]], width: int) -> str:
        key = (place.path, place.cell, place.line, place.column, place.end_line,
               place.end_column, place.label, width)
        found = self._places.get(key)
        if found is not None:
            return found
        parts = [f"{self.bar_open}{' ' * width}::: {self.bar_close}{_where(place)}\n"]
        if lines and 1 <= place.line <= len(lines):
            source = lines[place.line - 1]
            if place.column is None:  # the whole line, without its indentation
                start, end = _indent(source) + 1, len(source.rstrip()) + 1
            else:
                start = place.column
                same_line = place.end_line is None or place.end_line == place.line
                end = place.end_column if same_line and place.end_column is not None \
                    else len(source.rstrip()) + 1
            shown, widths = _shown(source)
            a, b = _columns(source, widths, start, end)
            parts.append(self._row(place.line, shown, width))
            parts.append(self._underline(width, a, b, "-", label=place.label))
        elif place.label:
            parts.append(f"{self.bar_open}{' ' * width} |{self.bar_close} "
                         f"{self.other_open}{place.label}{self.other_close}\n")
        found = self._places[key] = "".join(parts)
        return found


def _codes(style: Style, paint) -> Tuple[str, str]:
    """The escape codes `paint` puts around a text ("" and "" without colour)."""
    if not style.colour:
        return "", ""
    painted = paint("\x00")
    opening, closing = painted.split("\x00")
    return opening, closing


def _span(f: Finding, lines: List[str]) -> Optional[Tuple[int, int, int, int]]:
    """(first line, last line, end column on the last, last line of context shown after)
    of a finding's span, or None when its line is not in the text."""
    n = len(lines)
    first = f.line
    if first < 1 or first > n:
        return None
    last = min(max(f.end_line, first), n)
    end_column = f.end_column
    if f.end_line > n:
        end_column = len(lines[last - 1]) + 1
    elif last > first and end_column <= 1:
        # A span that ends at the start of a line covers the line before it only.
        last -= 1
        end_column = len(lines[last - 1]) + 1
    after = min(n, last + CONTEXT)
    while after > last and not lines[after - 1].strip():
        after -= 1
    return first, last, end_column, after


def _columns(source: str, widths: Optional[List[int]], start: int, end: int) -> Tuple[int, int]:
    """The display columns [a, b) of the 1-based character columns [start, end)."""
    length = len(source)
    a = min(max(start, 1), length + 1) - 1
    b = min(max(end, start, 1), length + 1) - 1
    if widths is not None:
        a, b = widths[a], widths[b]
    return a, max(b, a + 1)


def _shown(source: str) -> Tuple[str, Optional[List[int]]]:
    """The line as shown, and the display column of each character offset (None when
    they are the same: printable ASCII without tabs, nearly every line)."""
    if source.isascii() and source.isprintable():
        return source, None
    shown: List[str] = []
    widths = [0]
    column = 0
    for ch in source:
        if ch == "\t":
            size = TAB - column % TAB
            shown.append(" " * size)
        elif ch < " " or ch == "\x7f":
            size = 1
            shown.append(chr(0x2400 + ord(ch)) if ch < " " else "\u2421")
        elif ch.isascii():
            size = 1
            shown.append(ch)
        elif ch in _BIDI or unicodedata.category(ch) in ("Cc", "Cs"):
            size = 1
            shown.append("\ufffd")
        else:
            size = 0 if unicodedata.combining(ch) else \
                2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
            shown.append(ch)
        column += size
        widths.append(column)
    return "".join(shown), widths
