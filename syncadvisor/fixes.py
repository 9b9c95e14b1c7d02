"""Findings' edits -> fixed source, stable and safe; atomic writes.

A fix is all of its edits or none. Fixes are applied in source order; one that
overlaps an edit already taken waits for the next round (identical edits, such
as two fixes adding the same import, count once). After each round the changed
files are parsed and checked again, with the rest of the run, until nothing
changes (at most MAX_ROUNDS). A result that libcst does not read as it is
(`roundtrip.roundtrips`) is never kept, let alone written.

A fix is kept only if the run, once fixing is done, has no finding that the user's
run did not have: fixing must never show the user something new. Each round's
findings are traced to the previous round's (`_descent`); when the last round still
has a finding born while fixing, the round that brought it is done again without the
fix that brought it (`_Fixer._blame`), and the finding whose fix that was is reported
as reverted.
"""
from __future__ import annotations

import difflib
import os
import re
import stat
import uuid
from typing import Dict, FrozenSet, List, Optional, Sequence, Tuple

from .records import field, record, replace
from .config import Resolver, Settings
from .engine.analyze import FileResult, analyze_text
from .engine.check import KeptFindings, Linked, RunResult, check
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


def select_fixes(text: str, findings: Sequence[Finding], unsafe: bool
                 ) -> Tuple[List[Finding], List[Tuple[int, int, str]]]:
    """The applicable fixes that go together in one round, in source order, and their
    edits as (start offset, end offset, content), identical edits once."""
    starts = line_starts(text)
    taken: List[Tuple[int, int, str]] = []
    chosen: List[Finding] = []
    candidates = [f for f in findings if applicable(f, unsafe)]
    candidates.sort(key=lambda f: min((e.line, e.column) for e in f.fix.edits))  # type: ignore[union-attr]
    for finding in candidates:
        edits = [_span(starts, len(text), e) for e in finding.fix.edits]  # type: ignore[union-attr]
        new = [e for e in edits if e not in taken]
        if any(_overlaps(e, t) for e in new for t in taken) or any(
                _overlaps(a, b) for i, a in enumerate(new) for b in new[i + 1:]):
            continue
        taken.extend(new)
        chosen.append(finding)
    return chosen, sorted(taken, key=lambda e: (e[0], e[1]))


def apply_fixes(text: str, findings: Sequence[Finding], unsafe: bool) -> Tuple[str, int]:
    """Apply every non-overlapping applicable fix once; (new text, fixes applied)."""
    chosen, taken = select_fixes(text, findings, unsafe)
    for start, end, content in reversed(taken):
        text = text[:start] + content + text[end:]
    return text, len(chosen)


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
class Reverted:
    """A fix of a finding of the user's run that was not applied: with it, the run would
    have had a finding it did not have before (`introduced`, as it would have read)."""

    finding: Finding
    introduced: Finding


@record
class FixRun:
    run: RunResult  # the findings that remain after fixing
    fixed: Dict[str, str] = field(default_factory=dict)  # path -> new text (changed files only)
    originals: Dict[str, str] = field(default_factory=dict)
    applied: int = 0  # findings of the user's run that the fixes removed
    # path -> why its fixes were not kept: the file is as it was (`fixed` leaves it out)
    rejected: Dict[str, str] = field(default_factory=dict)
    reverted: List[Reverted] = field(default_factory=list)


# --- which finding after a round is which finding before it ----------------------------

Edits = List[Tuple[int, int, str]]
_DIGITS = re.compile(r"[0-9]+")
_QUOTED = re.compile(r"`[^`]*`")


def _gist(message: str) -> str:
    """A message up to the lines it names (they move when a fix adds an import) and the
    code it quotes (which a fix of that code changes)."""
    return _DIGITS.sub("#", _QUOTED.sub("`", message))


def _moved(edits: Edits, offset: int) -> Tuple[int, int]:
    """Where a position before `edits` (sorted, disjoint) is after them: a point, or the
    span of the new text when it was inside, or at the edge of, an edited range."""
    shift = 0
    for start, end, content in edits:
        if offset < start or (offset == start and start < end):
            break
        if offset > end or (offset == end and start < end):
            shift += len(content) - (end - start)
            continue
        return start + shift, start + shift + len(content)
    return offset + shift, offset + shift


def _descent(before: List[Finding], texts_before: Dict[str, str], after: List[Finding],
             texts_after: Dict[str, str], edits: Dict[str, Edits]) -> List[Optional[int]]:
    """For each finding `after` a round of edits, the finding `before` it that it is
    (an index), or None for a finding the round brought. One finding stays one finding:
    same path and code, and where the edits moved it to, or else the same message up to
    the lines it names and the code it quotes (`_gist`)."""
    def places(findings: List[Finding], texts: Dict[str, str]) -> List[int]:
        starts: Dict[str, List[int]] = {}
        out = []
        for f in findings:
            if f.path not in edits:  # unchanged file: its positions are comparable as they are
                out.append(f.line * 1_000_000 + f.column)
                continue
            if f.path not in starts:
                starts[f.path] = line_starts(texts[f.path])
            out.append(_offset(starts[f.path], len(texts[f.path]), f.line, f.column))
        return out

    old_places, new_places = places(before, texts_before), places(after, texts_after)
    moved = [_moved(edits.get(f.path, []), p) for f, p in zip(before, old_places)]
    groups: Dict[Tuple[str, str], List[int]] = {}
    for i, f in enumerate(before):
        groups.setdefault((f.path, f.code), []).append(i)
    result: List[Optional[int]] = [None] * len(after)
    free = set(range(len(before)))
    passes = (
        lambda i, j: moved[i] == (new_places[j], new_places[j])
        and before[i].message == after[j].message,
        lambda i, j: moved[i][0] <= new_places[j] <= moved[i][1],
        lambda i, j: _gist(before[i].message) == _gist(after[j].message),
    )
    for same in passes:
        for j, f in enumerate(after):
            if result[j] is not None:
                continue
            for i in groups.get((f.path, f.code), ()):
                if i in free and same(i, j):
                    result[j] = i
                    free.discard(i)
                    break
    return result


# --- fixing a run ----------------------------------------------------------------------

@record
class _State:
    """The run between two rounds of fixes."""

    texts: Dict[str, str]  # path -> text, for every file that may still be fixed
    results: List[FileResult]
    run: RunResult
    # per finding of `run`: the finding of the user's run it is (an index), or None
    origin: List[Optional[int]]
    # per finding born while fixing: the round that brought it, and the finding then
    birth: List[Optional[Tuple[int, Finding]]]
    applied: List[Tuple[str, Finding]] = field(default_factory=list)  # the round's fixes


class _Rejected(Exception):
    def __init__(self, path: str, why: str):
        self.path, self.why = path, why
        super().__init__(why)


_Key = Tuple[int, str, str, int, int]

# How many checks a run links afresh before it keeps its projects across checks.
TRACK_FROM = 2

# A fix that brings a finding is found by trying the round's fixes one by one; a run that
# keeps finding such fixes after this many stops fixing where the first came in.
MAX_BLAMES = 100


def _key(round_number: int, finding: Finding) -> _Key:
    return (round_number, finding.path, finding.code, finding.line, finding.column)


class _SettingsByPath:
    """A run's settings for each path, resolved once: every check of the fixer asks them
    for every file, and a `Configuration` works out each path's project every time."""

    def __init__(self, resolver: Resolver):
        self._resolver = resolver
        self._found: Dict[str, Settings] = {}

    def for_path(self, path: str) -> Settings:
        found = self._found.get(path)
        if found is None:
            found = self._found[path] = self._resolver.for_path(path)
        return found


class _Fixer:
    def __init__(self, results: List[FileResult], texts: Dict[str, str], settings: Resolver,
                 unsafe: bool):
        self.settings = _SettingsByPath(settings)
        self.unsafe = unsafe
        self.originals = dict(texts)
        self.position = {r.path: i for i, r in enumerate(results)}
        self.banned: Dict[_Key, Finding] = {}  # a fix not to apply -> the finding it brings
        self.rejected: Dict[str, str] = {}
        # The run's projects, kept across rounds and trials: each check replaces only the
        # files whose models differ from the ones they hold (`_linked`).
        self.linked: Optional[Linked] = None
        self.kept = KeptFindings()  # each file's rule findings, on `linked`'s projects
        # (path, text) -> its result: a text that a round made before (a round done again
        # without a fix, a trial of one fix) keeps its model, which the projects then
        # need not replace. The user's texts are the run's own results.
        self.analyzed: Dict[Tuple[str, str], FileResult] = {
            (r.path, texts[r.path]): r for r in results if r.path in texts}
        # The texts that differ from the user's -> the run's findings with them.
        self.checked: Dict[FrozenSet[Tuple[str, str]], RunResult] = {}
        self.hazards: Dict[str, Optional[Tuple[int, int, str]]] = {}
        self.refusals: Dict[str, Optional[str]] = {}
        run = self._check(results, texts)
        n = len(run.findings)
        self.start = _State(dict(texts), list(results), run, list(range(n)), [None] * n)

    def _check(self, results: List[FileResult], texts: Dict[str, str]) -> RunResult:
        """The run's findings with `texts` (each file's result is its text's, `_analyze`):
        found once per set of texts. Rounds done again after a fix is held back, and the
        trials of a round's fixes, come back to texts checked before."""
        originals = self.originals
        state = frozenset((p, t) for p, t in texts.items() if t is not originals[p]
                          and t != originals[p])
        run = self.checked.get(state)
        if run is None:
            # Most runs check twice at most (nothing to fix; one round and the check
            # after it): linked afresh, as a tracked project costs about two such links
            # to make. The checks after those replace files in one (`_linked`).
            linked = self._linked(results).projects if len(self.checked) >= TRACK_FROM \
                else None
            run = self.checked[state] = check(
                results, self.settings, lambda path: texts.get(path, originals.get(path)),
                linked=linked, kept=self.kept if linked is not None else None)
        return run

    def _hazard(self, text: str) -> Optional[Tuple[int, int, str]]:
        if text not in self.hazards:
            self.hazards[text] = parse_hazard(text)
        return self.hazards[text]

    def _refusal(self, text: str) -> Optional[str]:
        """Why libcst does not read a fixed text as it is (None: it does), asked once per
        text: a round done again makes most of its files' texts again."""
        if text not in self.refusals:
            self.refusals[text] = why_not_roundtrip(text)
        return self.refusals[text]

    def _analyze(self, path: str, text: str) -> FileResult:
        result = self.analyzed.get((path, text))
        if result is None:
            result = analyze_text(text, path, self.settings.for_path(path))
            self.analyzed[(path, text)] = result
        return result

    def _linked(self, results: List[FileResult]) -> Linked:
        """The projects linking `results`' models, as `check` would link them afresh: the
        kept ones, with the models that differ replaced. Where the set of modelled files
        differs (a fix that leaves nothing for the prefilter to keep), the grouping may
        too: linked anew."""
        models = {r.path: r.model for r in results if r.model is not None}
        linked = self.linked
        if linked is None or models.keys() != linked.projects.keys():
            linked = self.linked = Linked(models.values())
            self.kept = KeptFindings()  # (the findings kept on the old projects go with them)
            return linked
        for path, model in models.items():
            if linked.model(path) is not model:
                linked.replace(path, model)
        return linked

    def fix(self) -> Tuple[List[_State], int]:
        """Rounds of fixes until nothing changes, none bringing a finding that the user's
        run did not have; the states from the user's run to the last, and how many fixes
        were not applied for bringing one."""
        history = [self.start]
        blames = 0
        while True:
            state = None
            if len(history) <= MAX_ROUNDS:
                try:
                    state = self._round(history[-1], len(history))
                except _Rejected as exc:  # the file is left as it was: start again without it
                    self.rejected[exc.path] = exc.why
                    self.start = replace(self.start, texts={
                        p: t for p, t in self.start.texts.items() if p != exc.path})
                    self.banned.clear()  # every round is made again
                    history = [self.start]
                    continue
            if state is not None:
                history.append(state)
                continue
            last = history[-1]
            born = [b for b in last.birth if b is not None]
            if not born:
                return history, blames
            number, finding = min(born, key=lambda b: b[0])
            suspects = history[number].applied
            history = history[:number]
            if blames >= MAX_BLAMES:  # give up on everything from that round on
                return history, blames
            blames += 1
            for key in [k for k in self.banned if k[0] > number]:
                del self.banned[key]  # that history is made again
            for key in self._blame(history[-1], suspects, number, finding):
                self.banned[key] = finding

    def _round(self, state: _State, number: int) -> Optional[_State]:
        """The next state: the round's fixes applied and the run checked again; None when
        no fix changes anything."""
        by_path: Dict[str, List[Finding]] = {}
        for finding in state.run.findings:
            if (finding.path in state.texts and applicable(finding, self.unsafe)
                    and _key(number, finding) not in self.banned):
                by_path.setdefault(finding.path, []).append(finding)
        texts = dict(state.texts)
        results = list(state.results)
        edits: Dict[str, Edits] = {}
        applied: List[Tuple[str, Finding]] = []
        for path, findings in by_path.items():
            text = texts[path]
            hazard = self._hazard(text)  # libcst, which checks each fix, would crash
            if hazard is not None:
                raise _Rejected(path, f"libcst could crash on it: {hazard[2]} at line {hazard[0]}")
            chosen, taken = select_fixes(text, findings, self.unsafe)
            new_text, count = apply_fixes(text, chosen, self.unsafe)
            if not count or new_text == text:
                continue
            why = self._refusal(new_text)
            if why is not None:  # keep this file as it is: never write what does not parse
                raise _Rejected(path, f"the fixed code is refused: {why} (please report it)")
            texts[path] = new_text
            results[self.position[path]] = self._analyze(path, new_text)
            edits[path] = taken
            applied.extend((path, f) for f in chosen)
        if not edits:
            return None
        run = self._check(results, texts)
        descent = _descent(state.run.findings, state.texts, run.findings, texts, edits)
        origin = [state.origin[i] if i is not None else None for i in descent]
        birth = [state.birth[i] if i is not None else (number, f)
                 for i, f in zip(descent, run.findings)]
        return _State(texts, results, run, origin, birth, applied)
    def _blame(self, before: _State, suspects: List[Tuple[str, Finding]], number: int,
               born: Finding) -> List[_Key]:
        """Which of round `number`'s fixes (`suspects`, applied to `before`) brought `born`:
        each alone, nearest first, until one brings a finding of its code in its file (or
        else any new finding); where none does alone, every fix of the round in that file."""
        if len(suspects) == 1:
            return [_key(number, suspects[0][1])]
        order = sorted(suspects, key=lambda s: (s[0] != born.path, abs(s[1].line - born.line)))
        other: Optional[Finding] = None
        for path, finding in order:
            text = before.texts[path]
            chosen, taken = select_fixes(text, [finding], self.unsafe)
            new_text, count = apply_fixes(text, chosen, self.unsafe)
            if not count or new_text == text:
                continue
            texts = dict(before.texts)
            texts[path] = new_text
            results = list(before.results)
            results[self.position[path]] = self._analyze(path, new_text)
            run = self._check(results, texts)
            descent = _descent(before.run.findings, before.texts, run.findings, texts,
                               {path: taken})
            brought = [f for i, f in zip(descent, run.findings) if i is None]
            if any(f.path == born.path and f.code == born.code for f in brought):
                return [_key(number, finding)]
            if brought and other is None:
                other = finding
        if other is not None:
            return [_key(number, other)]
        return [_key(number, f) for p, f in suspects if p == born.path] or \
            [_key(number, f) for _, f in suspects]

    def reverted(self, history: List[_State]) -> List[Reverted]:
        """The user's findings whose fix was held back, and what it would have brought."""
        out: Dict[int, Reverted] = {}
        for number, state in enumerate(history, start=1):
            for finding, origin in zip(state.run.findings, state.origin):
                key = _key(number, finding)
                if origin is not None and key in self.banned and origin not in out \
                        and applicable(finding, self.unsafe):
                    out[origin] = Reverted(self.start.run.findings[origin], self.banned[key])
        return [out[i] for i in sorted(out)]


def fix_results(results: List[FileResult], texts: Dict[str, str], settings: Resolver,
                unsafe: bool) -> FixRun:
    """Fix every file of a run until stable. `texts` holds each path's current source;
    `settings.for_path(path)` is a file's settings.

    No fix is kept that leaves the run with a finding it did not have: the round that
    brought one is done again without the fix that brought it (`FixRun.reverted`). A fix
    may bring a finding that a later fix of this run removes again (a safe spelling fix
    that shows an explicit ON_WRITE, whose safe fix drops it): only the end counts."""
    fixer = _Fixer(list(results), texts, settings, unsafe)
    history, _ = fixer.fix()
    last = history[-1]
    # What "Fixed N" counts: the user's findings that are gone, not the fixes applied (a
    # fix of a finding that an earlier fix brought, and a later fix removed, is not one).
    applied = len(fixer.start.run.findings) - len({o for o in last.origin if o is not None})
    fixed = {p: t for p, t in last.texts.items() if t != fixer.originals[p]}
    return FixRun(last.run, fixed, fixer.originals, applied, fixer.rejected,
                  fixer.reverted(history))


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
