"""Colour: on a terminal (or with FORCE_COLOR), never with NO_COLOR, never in other formats."""
from __future__ import annotations

import io
import re
import sys

import pytest

from syncadvisor.cli import main
from syncadvisor.report import style
from tests.samples import BAD

ANSI = re.compile(r"\x1b\[[0-9;]*m")


class _Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.fixture
def bad(tmp_path, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    (tmp_path / "bad.py").write_text(BAD)
    return str(tmp_path / "bad.py")


def _check(args, monkeypatch, terminal=False):
    out = _Terminal() if terminal else io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    code = main(["check", "--no-cache", *args])
    return code, out.getvalue()


@pytest.mark.parametrize("environ, tty, expected", [
    ({}, False, False),
    ({}, True, True),
    ({"NO_COLOR": "1"}, True, False),
    ({"NO_COLOR": ""}, True, True),  # empty: unset, as https://no-color.org says
    ({"FORCE_COLOR": "1"}, False, True),
    ({"FORCE_COLOR": ""}, False, False),
    ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, False, False),  # NO_COLOR wins
])
def test_when_colour_is_wanted(environ, tty, expected):
    stream = _Terminal() if tty else io.StringIO()
    assert style.wanted(stream, environ) is expected


@pytest.mark.parametrize("fmt", ["full", "concise"])
def test_text_formats_colour_a_terminal_and_only_colour_it(fmt, bad, monkeypatch):
    _, plain = _check(["--format", fmt, bad], monkeypatch)
    code, coloured = _check(["--format", fmt, bad], monkeypatch, terminal=True)
    assert code == 1 and "\x1b[" not in plain and "\x1b[" in coloured
    assert ANSI.sub("", coloured) == plain  # the same text, painted
    monkeypatch.setenv("NO_COLOR", "1")
    assert _check(["--format", fmt, bad], monkeypatch, terminal=True)[1] == plain


def test_force_colour_colours_a_pipe(bad, monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")
    _, out = _check([bad], monkeypatch)
    assert "\x1b[1;31mTFS101\x1b[0m" in out


@pytest.mark.parametrize("fmt", ["json", "sarif", "github"])
def test_no_other_format_is_ever_coloured(fmt, bad, monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")
    _, out = _check(["--format", fmt, bad], monkeypatch, terminal=True)
    assert out and "\x1b" not in out
