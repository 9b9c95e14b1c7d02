"""Colour for the text formats: ANSI escapes on a terminal, nothing anywhere else.

`wanted(stream)` decides, as ruff and most tools do: `NO_COLOR` set (non-empty) turns
colour off, and wins; else `FORCE_COLOR` set (non-empty) turns it on, even into a pipe;
else colour only when the stream is a terminal. A `Style` made without colour returns
every text as it is, so the plain output is the same bytes as before colour existed.
"""
from __future__ import annotations

import os
from typing import Mapping, Optional, TextIO

from ..findings import ERROR, INFO, WARNING

_RESET = "\x1b[0m"
BOLD = "1"
RED = "31"
YELLOW = "33"
BLUE = "34"
CYAN = "36"


def wanted(stream: TextIO, environ: Optional[Mapping[str, str]] = None) -> bool:
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (ValueError, OSError):  # a closed or odd stream: no colour
        return False


class Style:
    """Painters for each part of a report; with `colour` False each returns its text."""

    def __init__(self, colour: bool = False):
        self.colour = colour

    def paint(self, text: str, *codes: str) -> str:
        if not self.colour or not text:
            return text
        return f"\x1b[{';'.join(codes)}m{text}{_RESET}"

    def path(self, text: str) -> str:
        return self.paint(text, BOLD)

    def punct(self, text: str) -> str:  # the colons of `path:line:col:`
        return self.paint(text, CYAN)

    def code(self, text: str) -> str:
        return self.paint(text, BOLD, RED)

    def fixable(self, text: str) -> str:  # the `*` of `[*]`
        return self.paint(text, CYAN)

    def severity(self, severity: str, text: Optional[str] = None) -> str:
        colour = {ERROR: RED, WARNING: YELLOW, INFO: CYAN}.get(severity, BLUE)
        return self.paint(severity if text is None else text, BOLD, colour)

    def gutter(self, text: str) -> str:  # line numbers, `|`, `:::`
        return self.paint(text, BOLD, BLUE)

    def secondary(self, text: str) -> str:  # the underline and label of a related place
        return self.paint(text, BOLD, BLUE)

    def help(self, text: str) -> str:
        return self.paint(text, BOLD, CYAN)

    def strong(self, text: str) -> str:
        return self.paint(text, BOLD)


PLAIN = Style(False)
