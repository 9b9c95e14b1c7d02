"""Findings' edits -> fixed source, stable and safe; atomic writes.

A fix is all of its edits or none. Fixes are applied in source order; one that
overlaps an edit already taken waits for the next round (identical edits, such
as two fixes adding the same import, count once). After each round the changed
files are parsed and checked again, with the rest of the run, until nothing
changes (at most MAX_ROUNDS). A result that libcst does not read as it is
(`roundtrip.roundtrips`) is never kept, let alone written.
"""
from __future__ import annotations

import difflib
import os
import stat
import uuid
from typing import Dict, List, Optional, Sequence, Tuple

from .records import field, record
from .config import Resolver
from .engine.analyze import FileResult, analyze_text
from .engine.check import RunResult, check
from .files import SourceText, encode_source
from .findings import SAFE, UNSAFE, Edit, Finding
from .lines import line_starts, physical_lines
from .roundtrip import parse_hazard, why_not_roundtrip

MAX_ROUNDS = 10


def applicable(finding: Finding, unsafe: bool) -> bool:
    fix = finding.fix
    return fix is not None and (fix.applicability == SAFE
                                or (unsafe and fix.applicability == UNSAFE))


def _offset(starts: List[int], text_length: int, line: int, column: int) -> int:
    if line > len(starts):  # an insertion after the last line
        return text_length
    return min(starts[line - 1] + column - 1, text_length)


def apply_fixes(text: str, findings: Sequence[Finding], unsafe: bool) -> Tuple[str, int]:
    """Apply every non-overlapping applicable fix once; (new text, fixes applied)."""
    starts = line_starts(text)
    taken: List[Tuple[int, int, str]] = []
    applied = 0
    candidates = [f for f in findings if applicable(f, unsafe)]
    candidates.sort(key=lambda f: min((e.line, e.column) for e in f.fix.edits))  # type: ignore[union-attr]
    for finding in candidates:
        edits = [_span(starts, len(text), e) for e in finding.fix.edits]  # type: ignore[union-attr]
        new = [e for e in edits if e not in taken]
        if any(_overlaps(e, t) for e in new for t in taken) or any(
                _overlaps(a, b) for i, a in enumerate(new) for b in new[i + 1:]):
            continue
        taken.extend(new)
        applied += 1
    for start, end, content in sorted(taken, key=lambda e: (e[0], e[1]), reverse=True):
        text = text[:start] + content + text[end:]
    return text, applied


def _span(starts: List[int], length: int, edit: Edit) -> Tuple[int, int, str]:
    return (_offset(starts, length, edit.line, edit.column),
            _offset(starts, length, edit.end_line, edit.end_column), edit.content)


def _overlaps(a: Tuple[int, int, str], b: Tuple[int, int, str]) -> bool:
    if a == b:
        return False
    # Two insertions at one point, or an insertion at the edge of a replacement,
    # have no defined order: treat them as overlapping.
    return a[0] < b[1] and b[0] < a[1] or a[0] == b[0]


@record
class FixRun:
    run: RunResult  # the findings that remain after fixing
    fixed: Dict[str, str] = field(default_factory=dict)  # path -> new text (changed files only)
    originals: Dict[str, str] = field(default_factory=dict)
    applied: int = 0
    # path -> why its fixes were not kept: the file is as it was (`fixed` leaves it out)
    rejected: Dict[str, str] = field(default_factory=dict)


def fix_results(results: List[FileResult], texts: Dict[str, str], settings: Resolver,
                unsafe: bool) -> FixRun:
    """Fix every file of a run until stable. `texts` holds each path's current source;
    `settings.for_path(path)` is a file's settings."""
    results = list(results)
    position = {r.path: i for i, r in enumerate(results)}
    originals = dict(texts)
    current = dict(texts)
    applied = 0
    rejected: Dict[str, str] = {}

    def text_of(path: str) -> Optional[str]:  # what each model was built from
        return current.get(path, originals.get(path))

    run = check(results, settings, text_of)
    for _ in range(MAX_ROUNDS):
        by_path: Dict[str, List[Finding]] = {}
        for finding in run.findings:
            if applicable(finding, unsafe) and finding.path in current:
                by_path.setdefault(finding.path, []).append(finding)
        changed = False
        for path, findings in by_path.items():
            hazard = parse_hazard(current[path])  # libcst, which checks each fix, would crash
            if hazard is not None:
                rejected[path] = f"libcst could crash on it: {hazard[2]} at line {hazard[0]}"
                current.pop(path)
                continue
            new_text, count = apply_fixes(current[path], findings, unsafe)
            if not count or new_text == current[path]:
                continue
            why = why_not_roundtrip(new_text)
            if why is not None:  # keep this file as it is: never write what does not parse
                rejected[path] = f"the fixed code is refused: {why} (please report it)"
                current.pop(path)
                continue
            current[path] = new_text
            results[position[path]] = analyze_text(new_text, path, settings.for_path(path))
            applied += count
            changed = True
        if not changed:
            break
        run = check(results, settings, text_of)
    fixed = {p: t for p, t in current.items() if t != originals[p]}
    return FixRun(run, fixed, originals, applied, rejected)


def unified_diff(path: str, old: str, new: str) -> str:
    shown = path.replace(os.sep, "/")
    before, after = (shown, shown) if os.path.isabs(path) else (f"a/{shown}", f"b/{shown}")
    # Physical lines, as the file has them: str.splitlines would also cut at \f or \u2028
    # and the diff would claim "No newline at end of file" in the middle of a line.
    lines = difflib.unified_diff(physical_lines(old), physical_lines(new),
                                 fromfile=before, tofile=after)
    out = []
    for line in lines:
        out.append(line if line.endswith(("\n", "\r"))
                   else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def write_atomically(path: str, data: bytes) -> None:
    """Replace `path` with `data` so that a crash leaves either the old or the new file.

    A symlink is written through: its target gets the new text and the link stays a link.
    """
    path = os.path.realpath(path)
    directory = os.path.dirname(path)
    mode: Optional[int] = None
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        pass
    # The name is chosen before anything is created, so that an interrupt (Ctrl-C) at any
    # point leaves no temporary file behind: with mkstemp, one landing between the file's
    # creation and the `try` would.
    temp = os.path.join(directory, f".syncadvisor-{uuid.uuid4().hex}.tmp")
    try:
        handle = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                         0o600)
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


class WriteError(Exception):
    """Some fixed files could not be written (every other one was); `failures`: path -> why."""

    def __init__(self, failures: Dict[str, str]):
        self.failures = failures
        super().__init__("; ".join(f"{path}: fix not written: {why}"
                                   for path, why in failures.items()))


def write_fixed(fixed: Dict[str, str], sources: Dict[str, SourceText]) -> None:
    """Write every fixed file; one that cannot be written (a read-only folder, a full disk)
    stays as it was, the others are still written, and WriteError names the failures."""
    failures: Dict[str, str] = {}
    for path, text in fixed.items():
        try:
            write_atomically(path, encode_source(sources[path], text))
        except OSError as exc:
            failures[path] = exc.strerror or str(exc)
        except UnicodeEncodeError as exc:
            failures[path] = f"the fixed text cannot be encoded as {sources[path].encoding}: {exc}"
    if failures:
        raise WriteError(failures)
