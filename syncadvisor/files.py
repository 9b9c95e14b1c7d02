"""Finding the files to check, and reading them without losing a byte.

Folders are walked recursively (symlink loops are cut), honouring `.gitignore` files
and the excludes of each folder's own settings (by default: virtual environments, build
output, tools' caches, `.ipynb_checkpoints`, `.virtual_documents`); files and folders
named explicitly are checked even when they do not end in `.py` or are excluded by default
(a package in `.venv/.../site-packages`), but a config's own excludes still apply (what
pre-commit, which names every file, needs), and with --force-exclude the defaults too.
"""
from __future__ import annotations

import codecs
import fnmatch
import io
import os
import re
import tokenize
from functools import lru_cache
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

from .records import record
from .config import Resolver

PYTHON_SUFFIXES = (".py", ".pyi")
# Never source, whatever a config's `exclude` says: as is a folder that holds a
# `pyvenv.cfg` (a virtual environment).
ALWAYS_SKIPPED_DIRS = frozenset({"__pycache__", ".syncadvisor_cache"})
VENV_MARKER = "pyvenv.cfg"


class MissingPath(Exception):
    pass


@record
class SourceText:
    """A decoded file, and what is needed to write it back byte for byte."""

    text: str
    encoding: str
    bom: bool


class UnreadableSource(Exception):
    """The file cannot be read or decoded; the message says why."""


# Where a NUL byte makes a file binary, not source.
_BINARY_WINDOW = 8192


def decode_source(data: bytes) -> SourceText:
    bom = data.startswith(codecs.BOM_UTF8)
    if b"\x00" in data[:_BINARY_WINDOW]:
        raise UnreadableSource("binary file (contains NUL bytes)")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise UnreadableSource(f"bad encoding declaration: {exc}") from None
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        raise UnreadableSource(f"cannot decode as {encoding}: {exc}") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return SourceText(text, "utf-8" if encoding == "utf-8-sig" else encoding, bom)


def reads_as_itself(data: bytes) -> bool:
    """Whether `decode_source(data)` is surely `data` as ASCII text: plain ASCII, not
    binary, and no coding line (one could name an encoding ASCII is not part of). The
    coding line can only be on the first two lines; any `coding` early on counts."""
    return data.isascii() and b"\x00" not in data[:_BINARY_WINDOW] \
        and b"coding" not in data[:1024]


def read_bytes(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise UnreadableSource(f"cannot read: {exc.strerror or exc}") from None


def read_source(path: str) -> SourceText:
    return decode_source(read_bytes(path))


def encode_source(source: SourceText, text: str) -> bytes:
    data = text.encode(source.encoding)
    return codecs.BOM_UTF8 + data if source.bom else data


# --- discovery -------------------------------------------------------------------

class _GitIgnore:
    """The subset of .gitignore that matters here: globs, `dir/`, `/anchored`, `!`.

    As git reads it: a pattern with no `/` but a trailing one names an entry anywhere
    below this folder by its own name; any other is a path from this folder. The walk
    asks about each entry it reaches and never enters an ignored folder, so what lies
    above the folder it was given (`.venv/` over `.venv/lib/.../keras`) is never asked
    about: a folder named explicitly is checked, as ruff does.
    """

    def __init__(self, base: str, lines: Sequence[str]):
        self.prefix = base.rstrip(os.sep) + os.sep  # a real, absolute folder
        self.rules: List[Tuple[str, bool, bool, bool]] = []  # pattern, negated, dir only, by name
        for raw in lines:
            line = raw.rstrip("\n").rstrip()
            if not line or line.startswith("#"):
                continue
            negated = line.startswith("!")
            if negated:
                line = line[1:]
            dir_only = line.endswith("/")
            line = line.rstrip("/")
            by_name = "/" not in line
            if line.startswith("**/") and "/" not in line[3:]:
                line, by_name = line[3:], True  # `**/name`: the same as `name`
            line = line.lstrip("/")
            if line:
                self.rules.append((line, negated, dir_only, by_name))

    def ignored(self, real: str, is_dir: bool) -> Optional[bool]:
        if not real.startswith(self.prefix):
            return None
        rel = real[len(self.prefix):].replace(os.sep, "/")
        name = rel.rpartition("/")[2]
        verdict: Optional[bool] = None
        for pattern, negated, dir_only, by_name in self.rules:
            if dir_only and not is_dir:
                continue
            if fnmatch.fnmatchcase(name if by_name else rel, pattern):
                verdict = not negated
        return verdict


def _load_gitignore(directory: str) -> Optional[_GitIgnore]:
    try:
        with open(os.path.join(directory, ".gitignore"), encoding="utf-8",
                  errors="replace") as handle:
            return _GitIgnore(directory, handle.readlines())
    except OSError:
        return None


def tidy_path(path: str) -> str:
    """`path` as findings name it, and as ruff prints it: without `.` components or doubled
    separators (`./a.py` is `a.py`, `a/./b.py` is `a/b.py`). `..` stays: lexically removed,
    it would name another file where the folder before it is a link."""
    drive, rest = os.path.splitdrive(path)
    separators = os.sep + (os.altsep or "")
    parts = [part for part in re.split(f"[{re.escape(separators)}]", rest)
             if part not in ("", os.curdir)]
    root = os.sep if rest[:1] in separators and rest else ""
    return drive + root + os.sep.join(parts) if parts or root or drive else os.curdir


def split_missing(paths: Sequence[str]) -> Tuple[List[str], List[str]]:
    """`paths` as (those that are there, those that are not, as `tidy_path` names them):
    `check` reports a missing one as a finding, as ruff reports E902, and checks the rest.
    A dangling link is there: reading it is what fails (a TFS900 "cannot read")."""
    present = [path for path in paths if os.path.lexists(path)]
    missing = [tidy_path(path) for path in paths if not os.path.lexists(path)]
    return present, missing


def discover(paths: Sequence[str], settings: Resolver) -> Iterator[str]:
    """Files to check, in a stable order, named as `tidy_path` names them; raises
    MissingPath for a path that is not there."""
    for raw in paths:
        if not os.path.lexists(raw):
            raise MissingPath(raw)
    seen: set = set()
    real_folders: Dict[str, str] = {}
    for raw in map(tidy_path, paths):
        if os.path.isdir(raw):
            if not settings.for_path(raw).force_exclude or \
                    not settings.for_path(raw).is_excluded(raw):
                yield from _walk(raw, settings, seen)
        elif not settings.for_path(raw).is_excluded(raw):
            key = _real_file(raw, real_folders)
            if key not in seen:
                seen.add(key)
                yield raw


def _real_file(path: str, real_folders: Dict[str, str]) -> str:
    """`os.path.realpath(path)`, each folder resolved once per run: a run given its
    files one by one (a pre-commit hook, the benchmark's 1,490 paths) spent 24 ms
    resolving every folder of every path again."""
    folder, name = os.path.split(path)
    if name in ("", ".", "..") or os.path.islink(path):
        return os.path.realpath(path)
    real = real_folders.get(folder)
    if real is None:
        real = real_folders[folder] = _real_file(folder, real_folders) if folder \
            else os.path.realpath(os.curdir)
    return os.path.join(real, name)


def _walk(top: str, resolver: Resolver, seen: set) -> Iterator[str]:
    top_real = os.path.realpath(top)
    ignores: List[_GitIgnore] = []
    folder, chain = top_real, []
    while True:
        chain.append(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    for folder in reversed(chain):
        gi = _load_gitignore(folder)
        if gi is not None:
            ignores.append(gi)
    visited = set()

    def is_ignored(real: str, is_dir: bool, stack: List[_GitIgnore]) -> bool:
        verdict = None
        for gi in stack:
            result = gi.ignored(real, is_dir)
            if result is not None:
                verdict = result
        return bool(verdict)

    def walk(directory: str, real: str, stack: List[_GitIgnore]) -> Iterator[str]:
        if real in visited:
            return  # a symlink loop, or a folder reached twice
        visited.add(real)
        if real != top_real:
            local = _load_gitignore(real)
            if local is not None:
                stack = stack + [local]
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            return
        if real != top_real and any(entry.name == VENV_MARKER for entry in entries):
            return  # a virtual environment, walked into
        settings = resolver.for_folder(directory)
        for entry in entries:
            name = entry.name
            path = name if directory == os.curdir else entry.path  # not `./name`
            try:
                is_dir = entry.is_dir()
            except OSError:  # a symlink loop (`a.py -> a.py`): reading it reports why
                is_dir = False
            try:
                child_real = os.path.realpath(entry.path) if entry.is_symlink() else \
                    os.path.join(real, name)
            except OSError:
                continue
            if is_dir:
                if name in ALWAYS_SKIPPED_DIRS or settings.walks_past(path, name):
                    continue
                if stack and is_ignored(child_real, True, stack):
                    continue
                yield from walk(path, child_real, stack)
            elif name.endswith(PYTHON_SUFFIXES) or name.endswith(".ipynb"):
                if settings.walks_past(path, name) or (
                        stack and is_ignored(child_real, False, stack)):
                    continue
                if child_real in seen or not _readable_kind(entry):
                    continue
                seen.add(child_real)
                yield path

    yield from walk(top, top_real, ignores)


def _readable_kind(entry: os.DirEntry) -> bool:
    """A regular file, or a link whose target cannot be reached (reading it says why).

    A FIFO, socket or device named `.py` is skipped: reading a FIFO blocks until some
    other process writes to it, so the run would hang. (Named on the command line, it is
    read: `syncadvisor check <(git show HEAD:a.py)` passes a pipe on purpose.)
    """
    try:
        if entry.is_file():
            return True
    except OSError:
        return True
    try:
        os.stat(entry.path)
    except OSError:
        return True  # dangling, looping or unreadable link
    return False


def module_name(path: str) -> str:
    """Dotted module name from the packages (folders with __init__.py) around a file."""
    folder, name = os.path.split(os.path.abspath(path))
    package = _package_of(folder)
    if name == "__init__.py":
        return package or os.path.splitext(name)[0]
    stem = os.path.splitext(name)[0]
    return f"{package}.{stem}" if package else stem


@lru_cache(maxsize=4096)
def _package_of(directory: str) -> str:
    if not os.path.isfile(os.path.join(directory, "__init__.py")):
        return ""
    parent = os.path.dirname(directory)
    outer = _package_of(parent) if parent != directory else ""
    name = os.path.basename(directory)
    return f"{outer}.{name}" if outer else name
