"""Fuzzing the engine and the fixer: the harness, and a long run to start by hand.

    python -m tests.fuzz.harness --minutes 10 [--out fuzz-failures] [--seed 1]

Three kinds of input, in turn:

- `model` programs: hypothesis builds code from the pieces the model knows (imports under
  aliases, strategy constructors, `with X.scope()`, `tf.Variable` / `add_weight` / Keras
  calls with every spelling of synchronization and aggregation, `strategy.run`, Keras
  methods, updates), with hypothesmith statements mixed in;
- `hypothesmith` programs: whole generated modules, under a TensorFlow preamble and with
  variable statements put before and after them;
- `mutant` programs: the fixtures (`tests/fixtures/`, `tests/runtime/snippets/`) with random
  token deletions, insertions, duplications and odd whitespace (`\\r`, `\\f`, tabs,
  backslash continuations, non-ASCII).

Each program goes through `check_program`, the oracle: the engine never raises nor reports an
internal error; a file that Python parses has no TFS900; a TFS900 sits inside the file; and
for the safe and the unsafe fixes alike, whenever a fix applies, the fixed program parses
(and compiles, when the original did), fixing it again changes nothing, every byte
outside the fixes' declared edits is unchanged, checking it again reports no finding
the program did not have (`new_findings`) and exactly the findings the fixer said remain
(found on the projects it kept across rounds); the same program with CRLF or CR
newlines is fixed identically, newlines kept; and after `--add-noqa` only TFS900 is
reported, and only comments changed (`add_noqa_problems`).

The long run prints how many programs it tried and every failure, and saves each failing
input (with what failed) under `--out`. tests/fuzz/test_fuzz.py runs a bounded, deterministic
slice of the same in the test suite.
"""
from __future__ import annotations

import argparse
import ast
import difflib
import hashlib
import io
import random
import re
import time
import tokenize
import traceback
import warnings
from collections import Counter
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import libcst as cst

from syncadvisor import fixes as fixes_module
from syncadvisor.config import Settings
from syncadvisor.engine import Run
from syncadvisor.files import decode_source, encode_source
from syncadvisor.findings import Finding
from tests import paths

ROOT = paths.TESTS

SETTINGS = {
    "unknown": Settings(root=str(ROOT)),
    "mirrored": Settings(root=str(ROOT), assume_strategy="mirrored"),
    "keras2": Settings(root=str(ROOT), target_tensorflow=(2, 15)),
}


# --- the oracle ----------------------------------------------------------------------

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def _line_starts(text: str) -> List[int]:
    """Where each line starts, written apart from syncadvisor.fixes on purpose."""
    return [0] + [m.end() for m in _LINE_BREAK.finditer(text)]


def _offset(starts: List[int], length: int, line: int, column: int) -> int:
    if line > len(starts):
        return length
    return min(starts[line - 1] + column - 1, length)


def _declared_edits(text: str, findings: Sequence[Finding], unsafe: bool
                    ) -> List[Tuple[int, int, str]]:
    starts = _line_starts(text)
    edits = set()
    for f in findings:
        if fixes_module.applicable(f, unsafe):
            for e in f.fix.edits:  # type: ignore[union-attr]
                edits.add((_offset(starts, len(text), e.line, e.column),
                           _offset(starts, len(text), e.end_line, e.end_column), e.content))
    return sorted(edits)


def _outside_edits(before: str, after: str, edits: List[Tuple[int, int, str]]) -> Optional[str]:
    """None when `after` is `before` with some of the declared edits applied, and nothing
    else changed; otherwise where the first unexplained difference is."""
    seen = set()
    furthest = [0]

    def explains(i: int, j: int, first: int) -> bool:
        if (i, j, first) in seen:
            return False
        seen.add((i, j, first))
        furthest[0] = max(furthest[0], i)
        for index in range(first, len(edits)):
            start, end, content = edits[index]
            if start < i:
                continue
            k = j + start - i
            if before[i:start] != after[j:k]:
                break  # a difference before this edit: no later edit can explain it
            if after.startswith(content, k) and explains(end, k + len(content), index + 1):
                return True
        return before[i:] == after[j:]

    if explains(0, 0, 0):
        return None
    at = furthest[0]
    return (f"the result is not the text with some of its declared edits applied "
            f"(near offset {at}: {before[max(0, at - 30):at + 30]!r}); edits {edits}")


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def _apply_unified_diff(old: str, diff: str) -> str:
    """`old` patched with `diff` (one file, as syncadvisor prints it), like `patch` would."""
    from syncadvisor.lines import physical_lines

    source = physical_lines(old)
    rows = physical_lines(diff)  # a CR-only file's rows end in \r
    out: List[str] = []
    taken = 0
    i = 2  # past the ---/+++ header
    while i < len(rows):
        match = _HUNK.match(rows[i])
        if not match:
            raise ValueError(f"not a hunk header: {rows[i]!r}")
        start = int(match.group(1)) - (0 if match.group(2) == "0" else 1)
        out.extend(source[taken:start])
        taken = start
        i += 1
        while i < len(rows) and not rows[i].startswith("@@"):
            kind, text = rows[i][0], rows[i][1:]
            i += 1
            if i < len(rows) and rows[i].startswith("\\ No newline at end of file"):
                text = text[:-1]  # the \n the diff added to a file's unterminated last line
                i += 1
            if kind in " -":
                if taken >= len(source) or source[taken] != text:
                    raise ValueError(f"context mismatch at line {taken + 1}: {text!r}")
                if kind == " ":
                    out.append(source[taken])
                taken += 1
            elif kind == "+":
                out.append(text)
            else:
                raise ValueError(f"bad diff row {rows[i - 1]!r}")
    out.extend(source[taken:])
    return "".join(out)


def _diff_problem(path: str, old: str, new: str) -> Optional[str]:
    """What is wrong with `syncadvisor check --diff`'s output for this change, if anything."""
    diff = fixes_module.unified_diff(path, old, new)
    try:
        patched = _apply_unified_diff(old, diff)
    except (ValueError, IndexError) as exc:
        return f"--diff output for {path} does not apply: {exc}\n{diff}"
    if patched != new:
        return f"--diff output for {path} does not give the fixed file:\n{diff}"
    return None


# A comment is text that TFS901's fix edits inside (it removes codes from a noqa comment).
_SKIPPED_TOKENS = (tokenize.NEWLINE, tokenize.NL, tokenize.INDENT, tokenize.DEDENT,
                   tokenize.ENDMARKER, tokenize.COMMENT)


def _split_tokens(text: str, edits: List[Tuple[int, int, str]]) -> Optional[str]:
    """An edit that starts or ends inside a token (`tf.VariableSynchronizatiAUTOULT`) was
    placed from a wrong position: say which, if any. Unknown when Python cannot tokenize."""
    from syncadvisor.lines import physical_lines

    starts = _line_starts(text)
    lines = [line.rstrip("\r\n") + "\n" if line.endswith(("\r", "\n")) else line
             for line in physical_lines(text)]
    inside: List[Tuple[int, int]] = []
    try:
        for tok in tokenize.generate_tokens(iter(lines).__next__):
            if tok.type in _SKIPPED_TOKENS:
                continue
            inside.append((starts[tok.start[0] - 1] + tok.start[1],
                           starts[tok.end[0] - 1] + tok.end[1]))
    except (tokenize.TokenError, SyntaxError, IndexError):
        return None
    for start, end, content in edits:
        for point in {start, end}:
            for a, b in inside:
                if a < point < b:
                    return (f"an edit at offset {point} cuts the token {text[a:b]!r} "
                            f"(edit {text[start:end]!r} -> {content!r})")
    return None


def _compiles(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings about the generated code
            compile(text, "<fuzz>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return False
    return True


def _libcst_reproduces(text: str) -> bool:
    """libcst's code for `text` is `text`, give or take the backslash-newlines it drops."""
    from syncadvisor.roundtrip import align_to_text

    try:
        code = cst.parse_module(text).code
    except Exception:  # noqa: BLE001
        return False
    return code == text or align_to_text(code, text) is not None


def _py_parses(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _cst_parses(text: str) -> bool:
    try:
        cst.parse_module(text)
    except Exception:  # noqa: BLE001 - anything libcst throws means "does not parse"
        return False
    return True


@contextmanager
def _recording_rounds(log: List[Tuple[str, Sequence[Finding], bool, str]]):
    """Record every (text, findings, unsafe) -> new text that the fixer computes."""
    original = fixes_module.apply_fixes

    def recording(text, findings, unsafe):
        new, count = original(text, findings, unsafe)
        log.append((text, list(findings), unsafe, new))
        return new, count

    fixes_module.apply_fixes = recording
    try:
        yield
    finally:
        fixes_module.apply_fixes = original


def new_findings(before: Sequence[Finding], after: Sequence[Finding]
                 ) -> List[Tuple[str, int, int, str, str]]:
    """(path, line, column, code, message) of each finding `after` that no finding `before`
    matches by path, code and message up to its numbers (a line a message names moves when
    a fix adds an import) and the code it quotes in backquotes (which a fix of that code
    changes: `aggregation=X.NONE1` becomes `aggregation=X.NONE`), counting repeats: what a
    fix brought."""
    def key(f: Finding) -> Tuple[str, str, str]:
        return (f.path, f.code, _NUMBERS.sub("#", _QUOTED.sub("`", f.message)))

    have = Counter(key(f) for f in before)
    # A finding at the same place with the same code is the same finding, its message
    # refined by the fix (as the fixer's `_descent` judges: TFS301's ON_READ leaves
    # TFS110's warning at the update, naming fewer strategies).
    places = Counter((f.path, f.code, f.line, f.column) for f in before)
    brought = []
    for f in after:
        if have[key(f)]:
            have[key(f)] -= 1
        elif places[(f.path, f.code, f.line, f.column)]:
            places[(f.path, f.code, f.line, f.column)] -= 1
        else:
            brought.append((f.path, f.line, f.column, f.code, f.message))
    return brought


_NUMBERS = re.compile(r"[0-9]+")
_QUOTED = re.compile(r"`[^`]*`")


def _code_tokens(text: str) -> Optional[List[Tuple[int, str]]]:
    """The tokens of `text` but its comments and line breaks, as (type, string); None
    where Python cannot tokenize it."""
    from syncadvisor.lines import physical_lines

    lines = [line.rstrip("\r\n") + "\n" if line.endswith(("\r", "\n")) else line
             for line in physical_lines(text)]
    try:
        return [(tok.type, tok.string) for tok in tokenize.generate_tokens(iter(lines).__next__)
                if tok.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE)]
    except (tokenize.TokenError, SyntaxError):
        return None


def add_noqa_problems(sources: Dict[str, str], settings: Settings) -> List[str]:
    """What is wrong with `check --add-noqa` on these sources: a finding reported after it
    (TFS900 excepted, and those it said no comment can suppress), a file that parsed and
    no longer does, or a change to anything but comments."""
    outcome = _run(sources, settings).add_noqa()
    again = dict(sources)
    again.update(outcome.files)
    cannot = {(f.path, f.line, f.code) for f in outcome.cannot}
    problems = [f"--add-noqa left {f.path}:{f.line}:{f.column}: {f.code} {f.message}"
                for f in _run(again, settings).check().findings
                if f.code != "TFS900" and (f.path, f.line, f.code) not in cannot]
    for path, text in outcome.files.items():
        if _py_parses(sources[path]) and not _py_parses(text):
            problems.append(f"--add-noqa made {path} unparsable:\n{text}")
        before = _code_tokens(sources[path])
        if before is not None and _code_tokens(text) != before:
            problems.append(f"--add-noqa changed more than comments in {path}:\n{text}")
    return problems


def _run(sources: Dict[str, str], settings: Settings) -> Run:
    run = Run(settings)
    for path, text in sources.items():
        run.add_text(path, text)
    return run


def _analyze(sources: Dict[str, str], settings: Settings):
    run = _run(sources, settings)
    return run.analyze(), run.check()


def _fix(sources: Dict[str, str], settings: Settings, unsafe: bool):
    return _run(sources, settings).fix(unsafe)


def _internal_traceback(source: str, path: str, settings: Settings) -> str:
    """The traceback behind an internal-error finding, to make a failure actionable."""
    from syncadvisor.engine.analyze import rewrites_for
    from syncadvisor.model.builder import build_model
    from syncadvisor.model.project import Project
    from syncadvisor.rules import enabled_rules
    from syncadvisor.rules.base import RuleContext

    try:
        model = build_model(ast.parse(source), path, "fuzz", rewrites_for(settings),
                                     source)
        ctx = RuleContext(Project([model]).link(model), settings)
        for rule in enabled_rules(settings):
            list(rule.check(ctx.for_rule(rule)))
    except Exception:  # noqa: BLE001
        return traceback.format_exc(limit=-6)
    return "(not reproduced alone)"


def check_program(sources, settings: Settings = SETTINGS["unknown"],
                  newline_variants: bool = True, stats: Optional[Dict[str, int]] = None
                  ) -> List[str]:
    """Every way the engine or the fixer mishandles these sources; [] when all is well.

    `sources`: one text, or {path: text} for a multi-file run. `stats`, when given, counts
    the programs that parsed, had findings, and were changed by a safe / an unsafe fix.
    """
    stats = {} if stats is None else stats
    if isinstance(sources, str):
        sources = {"fuzz.py": sources}
    problems: List[str] = []
    try:
        results, run = _analyze(sources, settings)
    except Exception:  # noqa: BLE001
        return ["the engine raised:\n" + traceback.format_exc(limit=-8)]
    for f in run.findings:
        text = sources[f.path]
        lines = len(_line_starts(text))
        if "internal error" in f.message:
            problems.append(f"{f.path}: {f.message}\n{_internal_traceback(text, f.path, settings)}")
        elif f.code == "TFS900" and _py_parses(text):
            problems.append(f"{f.path}: TFS900 on a file Python parses: {f.message}")
        if not (1 <= f.line <= lines and 1 <= f.end_line <= lines + 1 and f.column >= 1
                and (f.end_line, f.end_column) >= (f.line, f.column)):
            problems.append(f"{f.path}: a finding outside the file: {f.line}:{f.column}-"
                            f"{f.end_line}:{f.end_column} in {lines} lines ({f.code})")
    if any(r.internal_error for r in results) and not problems:
        problems.append("internal_error set without an internal-error finding")
    parsed = all(_cst_parses(text) for text in sources.values())
    for key, hit in (("programs", True), ("parsed", parsed), ("with findings", bool(run.findings))):
        stats[key] = stats.get(key, 0) + hit
    if problems:
        return problems
    if any(f.code != "TFS900" for f in run.findings):
        try:
            problems.extend(add_noqa_problems(sources, settings))
        except Exception:  # noqa: BLE001
            problems.append("--add-noqa raised:\n" + traceback.format_exc(limit=-8))
        stats["noqa added"] = stats.get("noqa added", 0) + 1
    if problems or not any(f.fix is not None for f in run.findings):
        return problems
    for unsafe in (False, True):
        label = "unsafe" if unsafe else "safe"
        rounds: List[Tuple[str, Sequence[Finding], bool, str]] = []
        try:
            with _recording_rounds(rounds):
                outcome = _fix(sources, settings, unsafe)
        except Exception:  # noqa: BLE001
            problems.append(f"{label} fix raised:\n" + traceback.format_exc(limit=-8))
            continue
        for before, findings, was_unsafe, after in rounds:
            declared = _declared_edits(before, findings, was_unsafe)
            where = _outside_edits(before, after, declared)
            if where:
                problems.append(f"{label} fix changed bytes outside its edits: {where}")
            cut = _split_tokens(before, declared)
            if cut and _libcst_reproduces(before):  # else the fixer refuses, as it must
                problems.append(f"{label} fix misplaced: {cut}")
        for path, why in outcome.refused.items():
            if why.startswith("libcst could crash"):  # refused before any fix is tried
                stats["refused: libcst could crash"] = stats.get("refused: libcst could crash",
                                                                 0) + 1
                continue
            if not _libcst_reproduces(sources[path]):
                # libcst misreads the file (a lone `\` line after a block): refusing to fix
                # it is the right answer, see test_fuzz.py
                stats["refused: libcst misreads"] = stats.get("refused: libcst misreads", 0) + 1
                continue
            problems.append(f"{label} fix of {path} would not parse (rejected by the fixer): "
                            + _unparsable_round(rounds))
        for path, fixed in outcome.files.items():
            problem = _diff_problem(path, sources[path], fixed)
            if problem:
                problems.append(f"{label} fix: {problem}")
            if not _cst_parses(fixed):
                problems.append(f"{label} fix of {path} does not parse:\n{fixed}")
            elif _compiles(sources[path]) and not _compiles(fixed):
                problems.append(f"{label} fix of {path} does not compile any more:\n{fixed}")
        if outcome.files:
            stats[f"{label} fix applied"] = stats.get(f"{label} fix applied", 0) + 1
        if outcome.reverted:  # held back: it would have brought a finding
            stats[f"{label} fix reverted"] = stats.get(f"{label} fix reverted", 0) + 1
        if outcome.files and not problems:
            again = dict(sources)
            again.update(outcome.files)
            try:
                fresh = _run(again, settings).check().findings
                brought = new_findings(run.findings, fresh)
            except Exception:  # noqa: BLE001
                problems.append(f"{label} check of the fixed code raised:\n"
                                + traceback.format_exc(limit=-8))
                continue
            for path, line, column, code, message in brought:
                problems.append(f"{label} fix brought a finding the run did not have: "
                                f"{path}:{line}:{column}: {code} {message}")
            # What the fixer says remains, found on the projects it kept across its rounds
            # (files replaced), is what a run of the fixed code finds.
            if fresh != outcome.run.findings:
                diff = _findings_diff(outcome.run.findings, fresh)
                problems.append(f"{label} fix's remaining findings are not those of a fresh "
                                f"check of the fixed code: {diff}")
            try:
                second = _fix(again, settings, unsafe)
            except Exception:  # noqa: BLE001
                problems.append(f"{label} second fix raised:\n" + traceback.format_exc(limit=-8))
                continue
            for path, text in second.files.items():
                diff = "".join(difflib.unified_diff(again[path].splitlines(True),
                                                    text.splitlines(True)))
                problems.append(f"{label} second fix of {path} is not a no-op:\n{diff}")
        if newline_variants and unsafe and outcome.files and not problems:
            problems.extend(_newline_problems(sources, outcome.files, settings))
    return problems


def _findings_diff(kept: Sequence[Finding], fresh: Sequence[Finding]) -> str:
    shown = [f"{f.path}:{f.line}:{f.column}: {f.code} {f.message}" for f in kept]
    again = [f"{f.path}:{f.line}:{f.column}: {f.code} {f.message}" for f in fresh]
    return "\n" + "\n".join(difflib.unified_diff(shown, again, "fixer", "fresh", lineterm=""))


def _unparsable_round(rounds) -> str:
    """Which codes' fixes made the text unparsable, and the lines they wrote."""
    for before, findings, unsafe, after in rounds:
        if not _py_parses(after):
            codes = sorted({f.code for f in findings if fixes_module.applicable(f, unsafe)})
            culprits = sorted({f.code for f in findings if fixes_module.applicable(f, unsafe)
                               and not _py_parses(fixes_module.apply_fixes(
                                   before, [f], unsafe)[0])})
            written = [line for line in difflib.unified_diff(
                before.splitlines(), after.splitlines(), lineterm="", n=0)
                if line.startswith("+") and not line.startswith("+++")]
            return f"{', '.join(culprits) or 'together: ' + ', '.join(codes)} wrote {written}"
    return "(round not found)"


def _newline_problems(sources: Dict[str, str], fixed: Dict[str, str],
                      settings: Settings) -> List[str]:
    """The same program with CRLF or CR newlines (and a BOM) is fixed identically."""
    if any("\r" in text or "\x00" in text for text in sources.values()):
        return []
    problems = []
    for newline in ("\r\n", "\r"):
        variant = {p: t.replace("\n", newline) for p, t in sources.items()}
        try:
            outcome = _fix(variant, settings, True)
        except Exception:  # noqa: BLE001
            return [f"fixing the {newline!r} variant raised:\n" + traceback.format_exc(limit=-8)]
        for path, text in sources.items():
            want = fixed.get(path, text).replace("\n", newline)
            got = outcome.files.get(path, variant[path])
            if got != want:
                problems.append(f"the {newline!r} variant of {path} is fixed differently: "
                                f"{got!r} != {want!r}")
            data = b"\xef\xbb\xbf" + variant[path].encode("utf-8")
            try:
                source = decode_source(data)
            except Exception as exc:  # noqa: BLE001
                problems.append(f"decoding {path} with BOM and {newline!r} failed: {exc!r}")
                continue
            if encode_source(source, source.text) != data:
                problems.append(f"{path}: BOM/{newline!r} bytes do not survive decode+encode")
    return problems


# --- model-aware programs (hypothesis) ------------------------------------------------

_GENERATED = "__generated_statement__"
_GRAMMARS: Dict[str, object] = {}


def _grammar(start: str):
    """hypothesmith's strategy for a grammar rule, built once (building it takes seconds)."""
    if start not in _GRAMMARS:
        import hypothesmith

        _GRAMMARS[start] = hypothesmith.from_grammar(start, auto_target=False)
    return _GRAMMARS[start]


def model_programs(with_hypothesmith: bool = True):
    """A hypothesis strategy for programs full of what the model looks at.

    Most of them parse (about one in six does not, on purpose: broken code must not crash
    the tool either); one in four or so carries a hypothesmith statement somewhere.
    """
    from hypothesis import strategies as st

    imports = st.sampled_from([
        "import tensorflow as tf", "import tensorflow as tf", "import tensorflow.compat.v1 as tf",
        "import tensorflow as tensorflow", "from tensorflow import keras", "import keras",
        "import tf_keras", "import tf_keras as keras", "from tensorflow.python.ops import variables",
        "from tensorflow import VariableSynchronization as VS, VariableAggregation as VA",
        "from tensorflow.distribute import MirroredStrategy", "from tensorflow import *",
        "from . import model", "from .model import strategy", "import tensorflow.keras as K",
        "from tensorflow.distribute.experimental import CentralStorageStrategy as CSS",
        "from __future__ import annotations", "'''docstring'''", "# comment",
        "from tensorflow.keras import layers", "from keras import layers as L",
    ])
    strategy_ctor = st.sampled_from([
        "tf.distribute.MirroredStrategy()", "tf.distribute.MirroredStrategy(['/cpu:0', '/cpu:1'])",
        "tf.distribute.experimental.CentralStorageStrategy()", "tf.distribute.TPUStrategy(r)",
        "tf.distribute.MultiWorkerMirroredStrategy()", "tf.distribute.OneDeviceStrategy('/cpu:0')",
        "tf.distribute.experimental.ParameterServerStrategy(r)", "tf.distribute.get_strategy()",
        "MirroredStrategy()", "CSS()", "make_strategy()", "tf.distribute.experimental.TPUStrategy(r)",
        "tf.distribute.experimental.MultiWorkerMirroredStrategy()", "None",
        "tf.distribute.MirroredStrategy() if flag else None",
    ])
    strategy_name = st.sampled_from(["strategy", "strategy", "self.strategy", "s", "strat"])
    # The first choice of each list is what hypothesis tries first and shrinks to: make it
    # one that gives a finding with a fix.
    sync = st.sampled_from(
        [f"tf.VariableSynchronization.{m}" for m in ("DEFAULT", "NONE", "ON_WRITE", "ON_READ",
                                                      "AUTO", "ON_READ", "NONE")]
        + ['"on_read"', '"ON_READ"', "'auto'", "None", "0", "3", "VS.ON_READ", "VS.NONE", "sync",
           "tf.VariableSynchronization", "tf.compat.v1.VariableSynchronization.ON_READ",
           "keras.VariableSynchronization.ON_READ", '"none"', "-1", "'on_write'",
           "tensorflow.VariableSynchronization.NONE", "tf.VariableSynchronization . DEFAULT",
           "(tf.VariableSynchronization.ON_READ)"])
    agg = st.sampled_from(
        [f"tf.VariableAggregation.{m}" for m in ("ONLY_FIRST_TOWER", "SUM", "MEAN",
                                                  "ONLY_FIRST_REPLICA", "NONE", "SUM")]
        + ['"sum"', "'mean'", '"MEAN"', "None", "1", "VA.SUM", "agg", '"only_first_replica"',
           "tf.compat.v1.VariableAggregation.ONLY_FIRST_TOWER", "tf.VariableAggregationV2.SUM",
           "tf.VariableAggregation.MEAN if flag else None"])
    creator = st.sampled_from([
        "tf.Variable", "tf.Variable", "tf.Variable", "tf.compat.v1.Variable",
        "tf.compat.v1.get_variable", "tf.compat.v2.Variable", "variables.Variable", "keras.Variable",
        "self.add_weight", "self.add_weight", "layer.add_weight", "tf.keras.Variable",
        "keras.layers.BatchNormalization", "tf.keras.layers.BatchNormalization",
        "tf.keras.metrics.Mean", "tf.keras.metrics.Sum", "V", "tf.Variable.__call__",
        "self.add_variable", "tf.compat.v1.get_local_variable", "keras.backend.Variable",
        "tf_keras.layers.Dense", "K.Variable", "tf.keras.Sequential", "layers.BatchNormalization",
        "tf.Variable(1.).assign", "tensorflow.Variable", "tf_keras.Variable",
    ])
    names = st.sampled_from(["v", "w", "x", "step", "counter", "total", "strategy", "model",
                             "layer", "self", "fn", "self.v", "self.w", "m", "tf", "keras"])
    value = st.sampled_from([
        "0", "0.0", "1.", "True", "False", "-1", "tf.zeros([3])", "[1, 2]", "x", "None", "'s'",
        "tf.constant(1, tf.int64)", "1j", "0x10", "tf.reduce_sum(x)", "lambda: 0",
        "tf.cast(x, tf.float32)", "v + 1", "(1,)", "f'{x}'", "b'b'", "...", "not x", "1_000",
        "tf.ones([4]) * 2", "v.read_value()", "'''multi\nline'''", "(\n  1.0\n)", "{'a': 1}",
        "[i for i in range(3)]", "tf.distribute.get_replica_context().replica_id_in_sync_group",
    ])

    def keyword(draw, name, choices):
        return f"{name}={draw(st.sampled_from(choices))}"

    @st.composite
    def creation(draw):
        positional = []
        if draw(st.booleans()):
            positional.append(draw(value))
        for _ in range(draw(st.integers(0, 2)) if draw(st.integers(0, 3)) == 0 else 0):
            positional.append(draw(st.one_of(sync, agg, value, st.just("*args"))))
        keywords = [draw(st.sampled_from(["synchronization", "aggregation"]))]
        for _ in range(draw(st.integers(0, 3))):
            keywords.append(draw(st.sampled_from([
                "synchronization", "synchronization", "aggregation", "aggregation", "trainable",
                "dtype", "name", "shape", "initializer", "synchronized", "**kwargs"])))
        if draw(st.integers(0, 9)):  # usually no keyword twice (a SyntaxError in Python)
            keywords = list(dict.fromkeys(keywords))
        rendered = []
        for word in keywords:
            if word == "synchronization":
                rendered.append(f"synchronization={draw(sync)}")
            elif word == "aggregation":
                rendered.append(f"aggregation={draw(agg)}")
            elif word == "trainable":
                rendered.append(keyword(draw, word, ["True", "False", "flag", "None"]))
            elif word == "dtype":
                rendered.append(keyword(draw, word, ["tf.int32", "tf.float32", "tf.bool", '"int64"',
                                                     "tf.dtypes.int64", "int", "dt", "'float32'"]))
            elif word == "name":
                rendered.append(keyword(draw, word, ['"v"', "'w'", "n"]))
            elif word == "shape":
                rendered.append(keyword(draw, word, ["(2,)", "()", "[3, 3]", "s"]))
            elif word == "initializer":
                rendered.append(keyword(draw, word, ['"zeros"', "tf.zeros_initializer()"]))
            elif word == "synchronized":
                rendered.append(keyword(draw, word, ["True", "False"]))
            else:
                rendered.append(word)
        if "**kwargs" in rendered:  # last, as Python wants it
            rendered = [r for r in rendered if r != "**kwargs"] + ["**kwargs"]
        args = positional + rendered
        sep = draw(st.sampled_from([", ", ", ", ",", ",\n    ", " , ", ",  # c\n  ", ",\\\n "]))
        trailing = draw(st.sampled_from(["", "", ",", ",\n"])) if args and "*args" not in args[-1:] else ""
        opening = draw(st.sampled_from(["(", "(", "(\n    ", "( "]))
        return f"{draw(creator)}{opening}{sep.join(args)}{trailing})"

    @st.composite
    def simple_statement(draw):
        kind = draw(st.integers(0, 15))
        v = draw(names)
        if kind <= 3:
            target = draw(st.sampled_from(["v", "w", "self.v", "self.w", "counter", "x[0]",
                                           "a, b", "v: tf.Variable", "(v)", "step", "self.total",
                                           "self.v, self.w"]))
            op = draw(st.sampled_from(["=", "=", "=", "+=", ":="]))
            if op == ":=" and target.isidentifier():
                return f"({target} := {draw(creation())})"
            if op == "+=" and target.isidentifier():
                return f"{target} += {draw(creation())}"
            return f"{target} = {draw(creation())}"
        if kind <= 6:
            method = draw(st.sampled_from(["assign", "assign_add", "assign_sub", "scatter_update",
                                           "scatter_add", "scatter_max", "read_value", "numpy",
                                           "assign_add", "scatter_nd_update", "value", "assign"]))
            args = draw(st.sampled_from(["", "v", "x", "1", "1.0", "tf.reduce_mean(x)", "0.9 * v",
                                         "tf.IndexedSlices(x, [0])", "v + 1", "tf.ones([4])",
                                         "tf.cast(tf.size(x), tf.float32)", "-1", "True"]))
            return f"{v}.{method}({args})"
        if kind == 7:
            fn = draw(st.sampled_from(["fn", "step_fn", "self.step", "lambda: v.assign_add(1)",
                                       "tf.function(fn)", "functools.partial(fn, 1)", "lambda x: x",
                                       "replica_fn", "train_step"]))
            call = draw(st.sampled_from(["run", "run", "experimental_run_v2",
                                         "extended.call_for_each_replica", "reduce",
                                         "experimental_distribute_dataset", "gather"]))
            args = draw(st.sampled_from(["", ", args=(x,)", ", args=(batch,)", ", (x,)",
                                         ", args=(x,), kwargs={}", ", *a"]))
            return f"{draw(strategy_name)}.{call}({fn}{args})"
        if kind == 8:
            return f"{draw(strategy_name)} = {draw(strategy_ctor)}"
        if kind == 9:
            return draw(st.sampled_from([
                "model.compile(optimizer='sgd', loss='mse')", "model.fit(ds, epochs=1)",
                "model = tf.keras.Sequential([tf.keras.layers.Dense(1)])", "model.build((None, 3))",
                "opt = tf.keras.optimizers.SGD()", "ckpt = tf.train.Checkpoint(v=v)",
                "ckpt.save('/tmp/x')", "print(v.numpy())", "tf.print(v)", "v.read_value()",
                "m = tf.keras.metrics.Mean()", "m.update_state(x)", "super().__init__()",
                "super().build(input_shape)", "return v", "yield v", "del v", "pass",
                "global strategy", "raise ValueError", "assert v", "import tensorflow as tf",
                "model = build_model()", "layer = MyLayer()", "metric = M()",
                "model.fit(x, y); model.evaluate(x)", "self.built = True", "return super().call(x)",
                "optimizer.apply_gradients(zip(grads, model.trainable_variables))",
                "x = v.value() if flag else v", "v = w = tf.Variable(0)", "strategy.reduce('SUM', v, axis=None)",
            ]))
        if kind == 10:
            return draw(imports)
        if kind == 11:
            return f"{v} = {draw(value)}"
        if kind == 12 and with_hypothesmith:
            return _GENERATED  # becomes a hypothesmith statement (one per program: they are slow)
        return draw(creation())

    def indent(text: str, prefix: str) -> str:
        return "\n".join(prefix + line if line.strip() else line for line in text.split("\n"))

    def block(depth: int, unit: str):
        @st.composite
        def build(draw):
            statements = []
            for _ in range(draw(st.integers(1, 4))):
                if depth > 0 and draw(st.integers(0, 2)) == 0:
                    statements.append(draw(compound(depth - 1, unit)))
                else:
                    statements.append(draw(simple_statement()))
            return "\n".join(statements)
        return build()

    def compound(depth: int, unit: str):
        @st.composite
        def build(draw):
            body = indent(draw(block(depth, unit)), unit)
            kind = draw(st.integers(0, 9))
            if kind <= 2:
                head = draw(st.sampled_from([
                    "with strategy.scope():", "with strategy.scope():", "with self.strategy.scope():",
                    "with tf.distribute.MirroredStrategy().scope():", "with s.scope() as sc, other:",
                    "with strategy.scope(), tf.device('/cpu:0'):", "with strategy.scope() as scope:",
                    "with tf.keras.utils.custom_object_scope({}):", "with (strategy.scope()):",
                    "with keras.StatelessScope():", "with tf.name_scope('x'):",
                    "with make_strategy().scope():", "with strat.scope():",
                ]))
                return f"{head}\n{body}"
            if kind <= 5:
                deco = draw(st.sampled_from(["", "", "@tf.function\n", "@tf.function(jit_compile=True)\n",
                                             "@staticmethod\n", "@property\n", "@functools.wraps(f)\n"]))
                name = draw(st.sampled_from(["fn", "step_fn", "train_step", "build", "call",
                                             "update_state", "__init__", "make_strategy", "step",
                                             "test_step", "make", "replica_fn", "build_model"]))
                params = draw(st.sampled_from(["", "self", "self, x", "x", "self, input_shape",
                                               "*args, **kwargs", "x=v", "self, /, x, *, y=1",
                                               "self, data", "batch"]))
                prefix = draw(st.sampled_from(["def", "def", "def", "async def"]))
                return f"{deco}{prefix} {name}({params}):\n{body}"
            if kind <= 7:
                base = draw(st.sampled_from([
                    "tf.keras.layers.Layer", "keras.layers.Layer", "tf.keras.Model", "keras.Model",
                    "tf.keras.metrics.Metric", "object", "tf.Module", "", "tf_keras.layers.Layer",
                    "Base", "tf.keras.layers.Layer, metaclass=M", "K.layers.Layer", "layers.Layer",
                ]))
                name = draw(st.sampled_from(["L", "M", "MyLayer", "Base", "Model"]))
                methods = [indent(draw(compound(max(depth - 1, 0), unit)), unit)
                           for _ in range(draw(st.integers(1, 3)))]
                return f"class {name}({base}):\n" + "\n".join(methods)
            head = draw(st.sampled_from(["for x in ds:", "if flag:", "while v:", "try:",
                                         "for step in range(10):", "if __name__ == '__main__':",
                                         "for batch in strategy.experimental_distribute_dataset(ds):"]))
            tail = ""
            if head == "try:":
                tail = "\nexcept Exception:\n" + unit + "pass"
            elif head == "if flag:" and draw(st.booleans()):
                tail = "\nelse:\n" + indent(draw(block(0, unit)), unit)
            return f"{head}\n{body}{tail}"
        return build()

    @st.composite
    def program(draw):
        unit = draw(st.sampled_from(["    ", "    ", "  ", "\t", "        "]))
        parts = [draw(st.sampled_from(["import tensorflow as tf", "import tensorflow as tf",
                                       "import tensorflow.compat.v1 as tf", "import keras",
                                       "import tf_keras as keras", "# no import"]))]
        parts += [draw(imports) for _ in range(draw(st.integers(0, 2)))]
        if draw(st.integers(0, 3)):
            parts.append(f"{draw(strategy_name)} = {draw(strategy_ctor)}")
        for _ in range(draw(st.integers(1, 6))):
            if draw(st.booleans()):
                parts.append(draw(compound(2, unit)))
            else:
                parts.append(draw(simple_statement()))
        newline = draw(st.sampled_from(["\n", "\n", "\n", "\n\n"]))
        text = newline.join(parts)
        if _GENERATED in text:
            generated = draw(_grammar("single_input")).rstrip("\n").split("\n")

            def place(match):
                return "\n".join(match.group(1) + line for line in generated)
            text = re.sub(r"^([ \t]*)" + _GENERATED, place, text, count=1, flags=re.M)
            text = text.replace(_GENERATED, "pass")
        return text + draw(st.sampled_from(["\n", "\n", "", "\n\n", "  # end\n"]))

    return program()


def hypothesmith_programs():
    """Generated modules with variable statements around them, under a TF preamble."""
    from hypothesis import strategies as st

    preamble = st.sampled_from([
        "import tensorflow as tf\nstrategy = tf.distribute.MirroredStrategy()\n",
        "import tensorflow as tf\n",
        "import keras\nimport tensorflow as tf\n",
        "",
    ])
    around = st.sampled_from([
        "v = tf.Variable(0, synchronization=tf.VariableSynchronization.DEFAULT)\n",
        "with strategy.scope():\n    v = tf.Variable(0., synchronization=tf.VariableSynchronization.NONE)\n",
        "w = tf.Variable(1, aggregation=tf.VariableAggregation.MEAN, trainable=False)\n",
        "def fn():\n    v.assign_add(1)\nstrategy.run(fn)\n",
        "s = tf.Variable(0., synchronization='on_read')\n",
        "",
    ])
    return st.tuples(preamble, around, _grammar("file_input"), around).map(
        lambda parts: parts[0] + parts[1] + parts[2] + ("" if parts[2].endswith("\n") or not parts[2]
                                                         else "\n") + parts[3])


# --- mutations of the fixtures ---------------------------------------------------------

def seed_files() -> List[Path]:
    found = sorted(paths.FIXTURES.rglob("*.py")) + sorted(paths.SNIPPETS.glob("*.py"))
    return [p for p in found if p.name != "__init__.py"]


_ODD = ["\r", "\r\n", "\x0c", "\t", "\\\n", " ", "\n", "\n\n", "#", "# noqa", "# noqa: TFS101",
        "é", "\U0001f600", "\u2028", "'", '"', '"""', "(", ")", "[", "]", "{", "}", ":", ",",
        "=", ".", "*", "**", "@", "lambda", "with", "def", "class", "async", "await", "yield",
        "return", "if", "else", "not", "in", "is", "and", ";", "\\", "strategy.scope()",
        "tf.Variable(", "synchronization=", "aggregation=", "tf.VariableSynchronization.NONE",
        "tf.VariableAggregation.SUM", "strategy.run(", "self.add_weight(", "trainable=False",
        "dtype=tf.int32", "NONE", "ON_READ", "DEFAULT", "0", "1.0", "None", "\x00", "\ufeff"]


def _tokens(text: str) -> List[Tuple[int, int]]:
    """(start, end) offsets of every token, or of every word/punctuation run when untokenizable."""
    try:
        starts = [0] + [m.end() for m in re.finditer(r"\n", text)]
        spans = []
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in (tokenize.ENDMARKER, tokenize.DEDENT, tokenize.INDENT) or tok.start == tok.end:
                continue
            spans.append((starts[tok.start[0] - 1] + tok.start[1], starts[tok.end[0] - 1] + tok.end[1]))
        return spans
    except (tokenize.TokenError, SyntaxError, IndexError):
        return [m.span() for m in re.finditer(r"\w+|[^\w\s]+|\s+", text)]


def mutate(text: str, rng: random.Random, vocabulary: Sequence[str] = ()) -> str:
    """1-4 random token deletions, insertions, duplications, line swaps or odd whitespace."""
    for _ in range(rng.randint(1, 4)):
        spans = _tokens(text)
        if not spans:
            return text + rng.choice(_ODD)
        kind = rng.randrange(7)
        s, e = rng.choice(spans)
        if kind == 0:  # delete a token
            text = text[:s] + text[e:]
        elif kind == 1:  # insert a token from the fixtures' own, or an odd one
            pick = rng.choice(vocabulary) if vocabulary and rng.random() < 0.5 else rng.choice(_ODD)
            at = rng.choice((s, e))
            text = text[:at] + pick + text[at:]
        elif kind == 2:  # duplicate a token
            text = text[:e] + text[s:e] + text[e:]
        elif kind == 3:  # swap two lines, or duplicate one
            lines = text.splitlines(keepends=True)
            if len(lines) > 1:
                i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
                if rng.random() < 0.5:
                    lines[i], lines[j] = lines[j], lines[i]
                else:
                    lines.insert(j, lines[i])
                text = "".join(lines)
        elif kind == 4:  # delete a span of tokens
            t = rng.randrange(len(spans))
            end = spans[min(len(spans) - 1, t + rng.randint(1, 6))][1]
            text = text[:spans[t][0]] + text[end:]
        elif kind == 5:  # re-indent a line
            lines = text.splitlines(keepends=True)
            if lines:
                i = rng.randrange(len(lines))
                lines[i] = rng.choice(["", " ", "\t", "    ", "        "]) + lines[i].lstrip(" \t")
                text = "".join(lines)
        else:  # change the newline style of the whole text
            text = re.sub(r"\r\n|\r|\n", rng.choice(["\n", "\r\n", "\r"]), text)
    return text


def vocabulary_of(texts: Sequence[str]) -> List[str]:
    words = set()
    for text in texts:
        words.update(text[s:e] for s, e in _tokens(text) if e - s < 40)
    return sorted(words)


def mutants(seed: int, count: Optional[int] = None) -> Iterator[Tuple[str, Dict[str, str]]]:
    """(label, sources) for `count` mutants (forever when None), deterministic in `seed`.

    One in eight is a two-file run (the cross-module fixtures, mutated together).
    """
    rng = random.Random(seed)
    files = seed_files()
    texts = {p: p.read_text(encoding="utf-8") for p in files}
    vocabulary = vocabulary_of(list(texts.values()))
    cross = sorted(p for p in files if p.parent.name == "crossmodule")
    n = 0
    while count is None or n < count:
        n += 1
        if cross and rng.random() < 0.125:
            sources = {str(p): texts[p] for p in cross}  # real paths: module names link
            victim = rng.choice(sorted(sources))
            sources[victim] = mutate(sources[victim], rng, vocabulary)
            yield f"mutant {n} of crossmodule/{Path(victim).name}", sources
        else:
            path = rng.choice(files)
            yield f"mutant {n} of {path.name}", {path.name: mutate(texts[path], rng, vocabulary)}


# --- the long run ---------------------------------------------------------------------

class Report:
    def __init__(self, out: Path):
        self.out = out
        self.tried = 0
        self.by_kind: Dict[str, int] = {}
        self.failures: List[Tuple[str, List[str]]] = []
        self.seen: set = set()

    def check(self, kind: str, label: str, sources, settings_name: str = "unknown") -> bool:
        if isinstance(sources, str):
            sources = {"fuzz.py": sources}
        self.tried += 1
        self.by_kind[kind] = self.by_kind.get(kind, 0) + 1
        problems = check_program(sources, SETTINGS[settings_name])
        if not problems:
            return True
        signature = problems[0].splitlines()[0][:120]
        digest = hashlib.sha1(repr(sorted(sources.items())).encode("utf-8", "surrogatepass")).hexdigest()[:10]
        folder = self.out / f"{kind}-{digest}"
        folder.mkdir(parents=True, exist_ok=True)
        for path, text in sources.items():
            (folder / Path(path).name).write_bytes(text.encode("utf-8", "surrogatepass"))
        (folder / "PROBLEMS.txt").write_text(f"{label} (settings: {settings_name})\n\n"
                                             + "\n\n".join(problems), encoding="utf-8")
        self.failures.append((label, problems))
        if signature not in self.seen:
            self.seen.add(signature)
            print(f"FAIL {label}: {signature}\n  saved in {folder}", flush=True)
        return False


def _hypothesis_batch(strategy, report: Report, kind: str, seed: int, examples: int,
                      deadline: float) -> None:
    from hypothesis import HealthCheck, Phase, given, settings as hsettings
    from hypothesis import seed as hseed

    settings_names = sorted(SETTINGS)

    @hseed(seed)
    @hsettings(max_examples=examples, deadline=None, database=None, phases=[Phase.generate],
               suppress_health_check=list(HealthCheck))
    @given(strategy)
    def run(program):
        if time.monotonic() < deadline:
            report.check(kind, f"{kind} (seed {seed})", program,
                         settings_names[report.tried % len(settings_names)])

    run()


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     allow_abbrev=False)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--out", default="fuzz-failures", help="folder for failing inputs")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kinds", default="model,hypothesmith,mutant")
    args = parser.parse_args(argv)
    # Python's SyntaxWarnings about generated code, and hypothesmith's own deprecations,
    # are noise here (the tool's own warnings are tested in test_reliability.py).
    warnings.simplefilter("ignore")
    out = Path(args.out).resolve()
    report = Report(out)
    start = time.monotonic()
    deadline = start + args.minutes * 60
    kinds = args.kinds.split(",")
    strategies: Dict[str, Callable] = {}
    if "model" in kinds:
        strategies["model"] = model_programs()
    if "hypothesmith" in kinds:
        strategies["hypothesmith"] = hypothesmith_programs()
    mutant_stream = mutants(args.seed) if "mutant" in kinds else None
    print(f"fuzzing for {args.minutes:g} minutes; failing inputs go under {out}", flush=True)
    batch = 0
    last_print = start
    while time.monotonic() < deadline:
        batch += 1
        for kind, strategy in strategies.items():
            _hypothesis_batch(strategy, report, kind, args.seed * 100_003 + batch, 100, deadline)
        if mutant_stream is not None:
            for _ in range(300):
                if time.monotonic() >= deadline:
                    break
                label, sources = next(mutant_stream)
                report.check("mutant", f"{label} (seed {args.seed})", sources,
                             sorted(SETTINGS)[report.tried % len(SETTINGS)])
        if time.monotonic() - last_print > 60:
            last_print = time.monotonic()
            print(f"  {report.tried} programs so far {report.by_kind}, "
                  f"{len(report.failures)} failing", flush=True)
    elapsed = time.monotonic() - start
    print(f"tried {report.tried} programs in {elapsed / 60:.1f} minutes {report.by_kind}; "
          f"{len(report.failures)} failed"
          + (f" ({len(report.seen)} distinct), inputs saved under {out}" if report.failures else ""))
    return 1 if report.failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
