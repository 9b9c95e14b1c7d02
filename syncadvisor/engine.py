"""Files -> findings: read, prefilter, parse once, model, link, run rules, suppress.

Stage 1 (per file, independent, cacheable): source -> `FileResult` holding the
`FileModel` (or a TFS900 finding) and the file's `# noqa` table. The model comes
from Python's `ast` (fast), or from libcst's tree when `exact` is asked for.
Stage 2 (the whole run): link the models, run every enabled rule over each
linked file; a file with findings from an `ast` model is modelled again from
libcst and the run linked again, so that every finding and fix comes from
libcst's tree. Then drop suppressed and deselected findings, sort.
"""
from __future__ import annotations

import ast
import multiprocessing
import os
import pickle
import re
import shutil
import signal
import tempfile
import traceback
import warnings
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from . import __version__
from .collector import collector_paused
from .config import Settings
from .files import SourceText, UnreadableSource, module_name, read_source, reads_as_itself
from .findings import ERROR, Finding
from .model import tfapi
from .model.facts import FileModel
from .model.likely import likely_reported
from .model.contexts import CalleeTable
from .model.project import projects
from .model.usage import CallTargets
from .notebook import is_notebook
from .parsing import parse_chunks, parse_hazard
from .rules import enabled_rules
from .rules.base import RuleContext
from .suppress import Suppressions, parse_suppressions

if TYPE_CHECKING:
    import libcst as cst

    from .cache import Cache

PARSE_ERROR = "TFS900"
PARSE_ERROR_NAME = "parse-error"

# A file without any of these words cannot hold a variable site, an enum reference
# or a strategy scope (`X.scope()`; the word "scope" alone also kept every file with a
# `tf.name_scope`: 87 more of keras+tf_keras, 11% more bytes parsed, not one finding
# more in keras, tf_keras or tensorflow), so it is never parsed. Searched for one at a
# time: `in` finds a word several times faster than a regular expression of the ten.
PREFILTER_WORDS = ("Variable", ".scope", "strategy", "Strategy", "add_weight", "get_variable",
                   "get_local_variable", "add_variable", "Synchronization", "Aggregation")
# The same words in a file's bytes, for every encoding a source file may have (an
# ASCII-compatible one; anything else fails to decode, wherever that is done).
_PREFILTER_BYTES = tuple(word.encode("ascii") for word in PREFILTER_WORDS)
# "Variable" counts only where a variable can be made (`tf.Variable(`, `KerasVariable(`)
# or a name bound to its class (`V = tf.Variable`, `import Variable as V`, `[V] = [...]`,
# in a notebook's JSON `"V = tf.Variable\n"`): followed, after spaces, by one of
# `(` `)` `]` `,` `;` `#` `\` a quote, a line end or ` as `. Not in prose ("Variables in
# the list", "`Variable` must be", "VariableScope for"), nor in `variables.Variable.X` or
# `v: tf.Variable = ...`: a file with no other word is then dropped (keras+tf_keras 11
# files, 3.2% of the bytes kept before; tensorflow 33 files, 8.2%; the same findings in
# all three; in those files the word is in comments, docstrings and messages, and in
# `variables.Variable.SaveSliceInfo`).
_VARIABLE_USE = r"Variable\w*[ \t\f]*(?:[()\],;#\\\r\n\"']|$| as )"
_VARIABLE_USES = (re.compile(_VARIABLE_USE, re.ASCII),  # as in bytes: `\w` is [a-zA-Z0-9_]
                  re.compile(_VARIABLE_USE.encode("ascii")))
_OTHER_WORDS = (PREFILTER_WORDS[1:], _PREFILTER_BYTES[1:])


def may_hold_a_finding(source) -> bool:
    """False when `source` (text, or a file's bytes) has none of `PREFILTER_WORDS`, or
    only "Variable", nowhere a variable can be made or its class named (`_VARIABLE_USE`)."""
    encoded = isinstance(source, bytes)
    variable = _PREFILTER_BYTES[0] if encoded else PREFILTER_WORDS[0]
    if variable in source and _VARIABLE_USES[encoded].search(source):
        return True
    return any(word in source for word in _OTHER_WORDS[encoded])


@dataclass
class FileResult:
    path: str
    model: Optional[FileModel] = None
    suppressions: Suppressions = field(default_factory=Suppressions)
    errors: List[Finding] = field(default_factory=list)  # TFS900: unreadable, unparsable
    internal_error: bool = False
    size: int = 0  # characters in the text analysed
    # The text an inexact model was built from, while this run may need it to model the
    # file again from libcst; never pickled (the cache, worker processes).
    source: Optional[str] = field(default=None, repr=False, compare=False)

    def __getstate__(self):
        state = dict(self.__dict__)
        state["source"] = None
        return state

    def __setstate__(self, state) -> None:
        self.__dict__.update(state)


def tool_error(path: str, message: str, line: int = 1, column: int = 1) -> Finding:
    return Finding(path, line, column, line, column, PARSE_ERROR, PARSE_ERROR_NAME, ERROR, message)


def rewrites_for(settings: Settings):
    return tfapi.prefix_rewrites(tfapi.tf_keras_is_keras3(settings.target_tensorflow,
                                                           settings.keras))


class NeedsLibcst(Exception):
    """Only libcst can model this file, and the caller wants that done elsewhere."""


def analyze_text(text: str, path: str, settings: Settings, module: Optional[str] = None,
                 exact: bool = False, tree: Optional[ast.Module] = None,
                 libcst_here: bool = True) -> FileResult:
    """Stage 1 for one decoded source text: a model from Python's `ast` (`tree`, when
    the caller has parsed `text` already, as flake8 has), or, with `exact` (and for
    what Python cannot parse), from libcst's tree. Without `libcst_here`, raises
    `NeedsLibcst` instead of parsing with libcst (whose native parser could crash the
    process)."""
    result = FileResult(path, size=len(text))
    if not may_hold_a_finding(text):
        return result
    with collector_paused():
        if exact or not _build_from_ast(text, path, settings, module, result, tree):
            # Only libcst's parser can crash or stall on such code: Python's, and the
            # model from its tree, do not (measured: 0.1 s of a run over keras+tf_keras
            # went to looking for it in every file).
            hazard = parse_hazard(text)
            if hazard is not None:
                line, column, why = hazard
                result.errors.append(tool_error(path, f"cannot check: {why}", line, column))
                return result
            if not libcst_here:
                raise NeedsLibcst(path)
            _parse_and_build(text, path, settings, module, result)
    if result.model is None or result.model.exact:
        # An inexact model's findings are never reported (its file is modelled again,
        # exactly, first), so its `# noqa` comments are not needed.
        result.suppressions = parse_suppressions(text)
    else:
        result.source = text  # kept for that: only an inexact model is modelled again
    return result


def _build_from_ast(text: str, path: str, settings: Settings, module: Optional[str],
                    result: FileResult, tree: Optional[ast.Module] = None) -> bool:
    """The model from Python's own tree; False where libcst must do it (a syntax error,
    which libcst reports, or nesting too deep for this walk)."""
    from .model.ast_builder import build_model_from_ast

    try:
        if tree is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # SyntaxWarnings are not the user's question
                tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    try:
        result.model = build_model_from_ast(tree, path, module or module_name(path),
                                            rewrites_for(settings), text)
    except RecursionError:
        return False
    except Exception as exc:  # noqa: BLE001 - one file's bug must not stop the run
        result.errors.append(_internal(path, exc))
        result.internal_error = True
    return True


def _parse_and_build(text: str, path: str, settings: Settings, module: Optional[str],
                     result: FileResult) -> None:
    import libcst as cst  # only files that pass the prefilter pay for it

    from .model.builder import build_model

    try:
        tree = parse_chunks(text)
    except cst.ParserSyntaxError as exc:
        result.errors.append(_syntax_error(path, text, exc))
        return
    except (RecursionError, MemoryError) as exc:  # pathological nesting
        result.errors.append(tool_error(path, f"cannot parse: {type(exc).__name__}"))
        return
    try:
        result.model = build_model(tree, path, module or module_name(path), rewrites_for(settings),
                                   text)
    except RecursionError:
        result.errors.append(tool_error(path, "cannot analyse: the code is nested too deeply"))
    except Exception as exc:  # noqa: BLE001 - one file's bug must not stop the run
        result.errors.append(_internal(path, exc))
        result.internal_error = True


def _syntax_error(path: str, text: str, exc: "cst.ParserSyntaxError") -> Finding:
    """Python's own message and position where it has one: libcst's point later."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings are not the user's question
            ast.parse(text)
    except SyntaxError as syntax:
        if syntax.lineno:
            return tool_error(path, f"cannot parse: {syntax.msg}", syntax.lineno,
                              max(1, syntax.offset or 1))
    except (ValueError, RecursionError, MemoryError):
        pass
    return tool_error(path, f"cannot parse: {exc.message}".rstrip(), max(1, exc.raw_line),
                      max(1, exc.raw_column + 1))


def _internal(path: str, exc: BaseException) -> Finding:
    where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    origin = f" at {where.filename.rsplit('/', 1)[-1]}:{where.lineno}" if where else ""
    return tool_error(path, f"internal error while checking this file: "
                            f"{type(exc).__name__}: {exc}{origin} (please report it)")


def unreadable(path: str, exc: UnreadableSource) -> FileResult:
    result = FileResult(path)
    result.errors.append(tool_error(path, str(exc)))
    return result


def analyze_path(path: str, settings: Settings) -> FileResult:
    try:
        source = read_source(path)
    except UnreadableSource as exc:
        return unreadable(path, exc)
    return analyze_text(source.text, path, settings)


@dataclass
class RunResult:
    findings: List[Finding]
    files: int
    internal_error: bool = False
    # The files modelled again from libcst in this run, for the cache to keep.
    refined: List[FileResult] = field(default_factory=list)


SourceOf = Callable[[FileResult], Optional[str]]


def run_rules(results: Sequence[FileResult], settings: Settings,
              source_of: Optional[SourceOf] = None, refiner: Optional["Refiner"] = None
              ) -> RunResult:
    """Stage 2: link every model of the run, run the rules, filter, sort.

    Files with findings from an `ast` model are modelled again from libcst (their text
    from `source_of`, by default the one kept in the result, else the file) and the
    run linked again: the models agree on everything but positions and texts, which
    findings and fixes must take from libcst's tree. A `Refiner` with worker processes
    does that there; by default it is done here.
    """
    with collector_paused():
        refiner = refiner or Refiner(settings)
        refiner.guess(results, source_of)  # modelled again while this process links
        # Each file is sent to be modelled again as soon as its rules find something,
        # largest first, while this process checks the others.
        first = _run_rules(results, settings,
                           found=lambda result: refiner.start(result, source_of))
        if not first.inexact:
            return first.run
        refined = refiner.refine(results, first.inexact, source_of)
        # Linked again with the new models, but only their files checked again: the
        # others' findings cannot change, as the two models agree but for positions.
        # The files not modelled again are the same objects: what their calls may run
        # stands (the project functions, and the methods of project instances).
        known = {path: table for path, table in first.call_targets.items()
                 if path not in first.inexact}
        known_callees = {path: table for path, table in first.callee_table.items()
                         if path not in first.inexact}
        again = _run_rules(refined, settings, only=first.inexact, known_calls=known,
                           known_callees=known_callees)
        findings = [f for f in first.run.findings if f.path not in first.inexact]
        findings += again.run.findings
        findings.sort(key=Finding.sort_key)
        internal = bool(first.crashed - first.inexact) or again.run.internal_error or any(
            r.internal_error for r in refined)
        return RunResult(findings, len(results), internal,
                         [r for r in refined if r.path in first.inexact])


def _refining_item(result: FileResult, source_of: Optional[SourceOf]
                   ) -> Optional[Tuple[str, str, Optional[str]]]:
    """What a refining job needs: (text, path, module); None if the file is gone."""
    text = _source_for_refining(result, source_of)
    if text is None:
        return None
    return text, result.path, result.model.module if result.model is not None else None


def _source_for_refining(result: FileResult, source_of: Optional[SourceOf]) -> Optional[str]:
    text = source_of(result) if source_of is not None else result.source
    if text is None:
        from .inputs import load_input

        try:
            text = load_input(result.path).text
        except (UnreadableSource, OSError):
            return None  # gone since: its findings keep Python's positions
    return text


def _model_exactly(item: Tuple[str, str, Optional[str]], settings: Settings) -> FileResult:
    text, path, module = item
    return analyze_text(text, path, settings, module, exact=True)


def _refine_job(item: Tuple[str, str, Optional[str]]) -> FileResult:
    assert _WORKER_SETTINGS is not None
    return _model_exactly(item, _WORKER_SETTINGS)


def _init_refiner(settings: Settings, pids) -> None:
    """A refining worker, just forked, at the lowest priority: libcst imported at once
    (0.2 s, nothing if inherited), taking only what stage 1 leaves of the CPUs, so that
    the worker is ready when the run is linked. `pids` tells the parent who to stop
    (`Refiner.close`)."""
    _init_worker(settings)
    pids.put(os.getpid())
    try:
        os.nice(19)
    except (AttributeError, OSError):  # not on this system: at the usual priority
        pass
    _import_libcst()


def _import_libcst() -> None:
    """libcst and the model builder on it (0.2 s): imported before a file needs them."""
    from .model import builder  # noqa: F401 - it imports libcst


def _started() -> None:
    return None


class Refiner:
    """Models files again from libcst (stage 2): with `exactly` (by default here), or in
    `workers` processes.

    The processes are forked early in stage 1 (`begin`), while this process is small:
    forked later, they would hold a copy of every page of models that linking then
    touches here (keras+tf_keras: the run's memory, summed as PSS, 308 MB with two
    forked late). They inherit libcst from this process (imported while stage 1's
    workers model their first files), or import it themselves at the lowest priority,
    and parse side by side; a crash in libcst's native parser costs only its file (it
    is never used here). One file is sent before any finding is known (`guess`): the
    largest that looks likely to have one.
    """

    def __init__(self, settings: Settings, workers: int = 1,
                 exactly: Callable[[Tuple[str, str, Optional[str]], Settings], FileResult]
                 = _model_exactly, deferred: bool = False):
        self.settings = settings
        self.workers = workers
        self.exactly = exactly  # without workers (the flake8 plugin: in a helper process)
        self.pool: Optional[ProcessPoolExecutor] = None
        self.context = _pool_context()
        # path -> (job, future): files sent to a worker before `refine` was called
        self.started: Dict[str, Tuple[Tuple[str, str, Optional[str]], Future]] = {}
        if workers > 1 and not deferred:
            self.begin()

    def begin(self, import_here: bool = False) -> None:
        """Fork the workers (once). With `import_here`, libcst is imported here first,
        and the workers inherit it: one import for the run, not one per worker (0.19 s
        of CPU each, which stage 1 paid for). Stage 1 calls this with it once its
        workers have their first files (`analyze_jobs`' `meanwhile`), so that the
        import overlaps their work; without a pool in stage 1 it would only delay
        this process, and the workers import libcst themselves, at low priority."""
        if self.pool is not None or self.workers <= 1:
            return
        if import_here:
            _import_libcst()
        self._pids = self.context.SimpleQueue()
        self.pool = ProcessPoolExecutor(self.workers, mp_context=self.context,
                                        initializer=_init_refiner,
                                        initargs=(self.settings, self._pids))
        self.pool.submit(_started)  # starts every worker process now

    @classmethod
    def for_jobs(cls, jobs: Sequence["Job"], settings: Settings, workers: int) -> "Refiner":
        """Worker processes for a run large enough for a pool in stage 1; else none.
        They are started by `begin` (stage 1 calls it)."""
        large = workers > 1 and sum(len(job.data) for job in jobs) > POOL_THRESHOLD
        return cls(settings, workers if large else 1, deferred=True)

    def __enter__(self) -> "Refiner":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def close(self) -> None:
        if self.pool is None:
            return
        pool, self.pool = self.pool, None
        # What is still running was a guess that found nothing: not waited for, its
        # workers stopped (they only compute), then reaped.
        if any(not future.done() for _, future in self.started.values()):
            alive = {child.pid for child in multiprocessing.active_children()}
            while not self._pids.empty():
                pid = self._pids.get()
                if pid in alive:  # a child of ours still (never a reused number)
                    try:
                        os.kill(pid, signal.SIGTERM)
                    except OSError:  # gone since
                        pass
        pool.shutdown(wait=True, cancel_futures=True)

    def guess(self, results: Sequence[FileResult], source_of: Optional[SourceOf]) -> None:
        """Begin modelling again, before any finding is known, the largest file that
        looks likely to have one (`likely_reported`): modelling the largest file with
        findings again is what a run waits for at its end, and this worker would
        otherwise sit idle while this process links the run."""
        if self.pool is None:
            return
        candidates = [r for r in results if r.model is not None and not r.model.exact
                      and likely_reported(r.model)]
        if candidates:
            self.start(max(candidates, key=lambda r: r.size), source_of)

    def start(self, result: FileResult, source_of: Optional[SourceOf]) -> None:
        """Begin modelling `result`'s file again in a worker, if there are workers;
        `refine` collects it."""
        if self.pool is None or result.path in self.started:
            return
        item = _refining_item(result, source_of)
        if item is None:
            return
        try:
            self.started[result.path] = (item, self.pool.submit(_refine_job, item))
        except BrokenProcessPool:
            pass

    def refine(self, results: Sequence[FileResult], paths: Set[str],
               source_of: Optional[SourceOf]) -> List[FileResult]:
        refined = list(results)
        jobs: List[Tuple[int, Tuple[str, str, Optional[str]]]] = []
        futures: List[Tuple[int, Tuple[str, str, Optional[str]], Future]] = []
        for i, result in enumerate(results):
            if result.path not in paths:
                continue
            if result.path in self.started:
                item, future = self.started.pop(result.path)
                jobs.append((i, item))
                futures.append((i, item, future))
            else:
                item = _refining_item(result, source_of)
                if item is not None:
                    jobs.append((i, item))
        if self.pool is None:
            for i, item in jobs:
                refined[i] = self.exactly(item, self.settings)
            return refined
        sent = {i for i, _, _ in futures}
        try:
            # Largest first, so that no worker is left with a large file at the end.
            for i, item in sorted(jobs, key=lambda job: -len(job[1][0])):
                if i not in sent:
                    futures.append((i, item, self.pool.submit(_refine_job, item)))
        except BrokenProcessPool:
            pass
        done = set()
        for i, item, future in futures:
            try:
                refined[i] = future.result()
                done.add(i)
            except BrokenProcessPool:
                pass
        for i, item in jobs:  # a worker died: each file left alone in its own process
            if i not in done:
                refined[i] = _isolated(_refine_job, item, item[1], self.settings, self.context)
        return refined


@dataclass
class _Pass:
    run: RunResult
    inexact: Set[str]  # files with findings from an inexact model
    crashed: Set[str]  # files where a rule raised
    call_targets: CallTargets  # of every linked file (UsageAnalysis.call_targets)
    callee_table: CalleeTable  # of every linked file (ContextAnalysis.callee_table)


def _run_rules(results: Sequence[FileResult], settings: Settings,
               only: Optional[Set[str]] = None,
               found: Optional[Callable[[FileResult], None]] = None,
               known_calls: Optional[CallTargets] = None,
               known_callees: Optional[CalleeTable] = None) -> _Pass:
    """Link every model, then check every file (or those in `only`); `found(result)`
    for each file with findings from an inexact model, as soon as they are known (the
    files are checked largest first)."""
    project_of = {}
    call_targets: CallTargets = {}
    callee_table: CalleeTable = {}
    for project in projects((r.model for r in results if r.model is not None), known_calls,
                            known_callees):
        call_targets.update(project.usage.call_targets)
        callee_table.update(project.contexts.callee_table)
        for fm in project.index.files:
            project_of[fm.path] = project
    rules = enabled_rules(settings)
    findings: List[Finding] = []
    inexact: Set[str] = set()
    crashed: Set[str] = set()
    internal = any(r.internal_error for r in results)
    order = results if found is None else sorted(results, key=lambda r: -r.size)
    for result in order:
        if only is not None and result.path not in only:
            continue
        findings.extend(f for f in result.errors if settings.enabled(f.code, result.path))
        if result.model is None:
            continue
        file_findings: List[Finding] = []
        try:
            ctx = RuleContext(project_of[result.path].link(result.model), settings)
            for rule in rules:
                if not settings.enabled(rule.code, result.path):
                    continue
                file_findings.extend(rule.check(ctx.for_rule(rule)))
        except Exception as exc:  # noqa: BLE001 - report, go on with the next file
            file_findings = [_internal(result.path, exc)]
            internal = True
            crashed.add(result.path)
        if file_findings and not result.model.exact:
            inexact.add(result.path)
            if found is not None:
                found(result)
        sup = result.suppressions
        findings.extend(f for f in file_findings if not sup.suppressed(f.code, f.line))
    findings.sort(key=Finding.sort_key)
    return _Pass(RunResult(findings, len(results), internal), inexact, crashed, call_targets,
                 callee_table)


# --- many files: a process pool, and the cache ---------------------------------------

# Below this much source, starting worker processes costs more than it saves.
POOL_THRESHOLD = 1_000_000  # bytes
_WORKER_SETTINGS: Optional[Settings] = None


@dataclass
class Job:
    path: str
    data: bytes  # the file's bytes (a notebook's JSON)
    key: Optional[str] = None  # cache digest; None: do not cache


def analyze_bytes(path: str, data: bytes, settings: Settings, libcst_here: bool = True
                  ) -> FileResult:
    """Stage 1 for a file's bytes: decode (notebooks: their code cells), then analyse."""
    from .inputs import Input

    try:
        text = Input(path, data).text
    except UnreadableSource as exc:
        return unreadable(path, exc)
    return analyze_text(text, path, settings, libcst_here=libcst_here)


def _unmodelled(path: str, data: bytes, settings: Settings) -> FileResult:
    """Stage 1 for a file the prefilter drops: nothing to model, only
    whether it can be read. Plain ASCII without NUL bytes or a coding line decodes as
    itself, so that is all there is to know (keras+tf_keras: 1,194 files, whose
    decoding and second look for the words took 0.05-0.07 s)."""
    if reads_as_itself(data) and not is_notebook(path):
        return FileResult(path, size=len(data))
    return analyze_bytes(path, data, settings)


def _pool_context():
    """Fork where there is fork: a worker starts at once, with everything imported."""
    return multiprocessing.get_context("fork" if os.name == "posix" else "spawn")


def _init_worker(settings: Settings) -> None:
    global _WORKER_SETTINGS
    _WORKER_SETTINGS = settings


def _analyze_job(item: Tuple[str, bytes]) -> FileResult:
    assert _WORKER_SETTINGS is not None
    return analyze_bytes(item[0], item[1], _WORKER_SETTINGS)


# A stage-1 worker's share of the run: the files (inherited when forked, so never sent
# through a pipe), and the folder its results go to.
_WORKER_ITEMS: Sequence[Tuple[str, bytes]] = ()
_WORKER_SPOOL = ""


def _init_stage_one(settings: Settings, items: Sequence[Tuple[str, bytes]], spool: str) -> None:
    global _WORKER_ITEMS, _WORKER_SPOOL
    _init_worker(settings)
    _WORKER_ITEMS, _WORKER_SPOOL = items, spool


def _analyze_chunk(indices: Sequence[int]) -> str:
    """Analyse `_WORKER_ITEMS[i]` for each index; the results are pickled to a file,
    whose name is returned. Sent back through the pool's pipe, a chunk's models held
    the worker until the parent's result thread had read them all, 64 KB at a time,
    each read waiting for the GIL that the parent's own analysis holds: keras+tf_keras,
    the worker sat idle 0.7 s of a 2.6 s stage."""
    results = [_analyze_job(_WORKER_ITEMS[i]) for i in indices]
    handle, name = tempfile.mkstemp(dir=_WORKER_SPOOL)
    with os.fdopen(handle, "wb") as spooled:
        pickle.dump(results, spooled, protocol=pickle.HIGHEST_PROTOCOL)
    return name


def _nothing() -> None:
    return None


def _unspool(name: str) -> List[FileResult]:
    with open(name, "rb") as spooled:
        data = spooled.read()
    os.unlink(name)
    return pickle.loads(data)


# A chunk of work is a file of at least this size, or consecutive smaller files adding
# up to it: small enough that a worker's last chunk does not keep everyone waiting, and
# that this process, between two of its own chunks, keeps the workers' queue filled.
CHUNK_BYTES = 32_000


def _chunks(sizes: Sequence[int]) -> List[range]:
    chunks: List[range] = []
    start, size = 0, 0
    for i, length in enumerate(sizes):
        size += length
        if size >= CHUNK_BYTES:
            chunks.append(range(start, i + 1))
            start, size = i + 1, 0
    if start < len(sizes):
        chunks.append(range(start, len(sizes)))
    return chunks


def _analyze_in_pool(items: List[Tuple[str, bytes]], settings: Settings, workers: int,
                     meanwhile: Callable[[], None] = _nothing) -> List[FileResult]:
    """`workers` processes in all: this one, and `workers - 1` forked ones; this one
    calls `meanwhile` as soon as the workers have their first chunks.

    The workers are fed chunks from the front (the largest files), this process takes
    them from the back until the two meet, so that no one waits: what a worker does
    costs pickling there and unpickling here, what this process does costs neither.
    This process models only from Python's tree; a file that needs libcst goes to a
    worker, so that a crash in libcst's native parser cannot take the run with it.
    """
    context = _pool_context()
    chunks = _chunks([len(data) for _, data in items])
    results: List[Optional[FileResult]] = [None] * len(items)
    sent: List[Tuple[range, Future]] = []
    unread = 0  # sent[unread:] are not read back yet
    head, tail = 0, len(chunks)  # chunks[head:tail] are nobody's yet
    in_flight = 2 * (workers - 1)  # enough that a worker never waits for this process

    def read_back(block: bool) -> None:
        nonlocal unread
        while unread < len(sent) and (block or sent[unread][1].done()):
            indices, future = sent[unread]
            unread += 1
            try:
                for i, result in zip(indices, _unspool(future.result())):
                    results[i] = result
            except Exception:  # noqa: BLE001 - a chunk that did not come back, as it may
                pass  # (a dead pool, a full disk): its files are checked again below

    spool = tempfile.mkdtemp(prefix="syncadvisor-")
    try:
        with ProcessPoolExecutor(workers - 1, mp_context=context, initializer=_init_stage_one,
                                 initargs=(settings, items, spool)) as pool:
            deferred: List[int] = []
            while head < tail:
                waiting = sum(1 for _, future in sent[-in_flight:] if not future.done()) \
                    if in_flight else 0
                try:
                    while waiting < in_flight and head < tail:
                        sent.append((chunks[head], pool.submit(_analyze_chunk, chunks[head])))
                        head, waiting = head + 1, waiting + 1
                except BrokenProcessPool:
                    in_flight = 0  # this process does the rest, and nothing more is sent
                meanwhile()
                meanwhile = _nothing
                if head < tail:
                    tail -= 1
                    for i in chunks[tail]:
                        try:
                            results[i] = analyze_bytes(*items[i], settings, libcst_here=False)
                        except NeedsLibcst:
                            deferred.append(i)
                read_back(block=False)
            for i in deferred:  # if the pool is broken by now, they are isolated below
                try:
                    sent.append((range(i, i + 1), pool.submit(_analyze_chunk, [i])))
                except BrokenProcessPool:
                    break
            read_back(block=True)
    except BrokenProcessPool:
        pass
    finally:
        shutil.rmtree(spool, ignore_errors=True)
    # A worker died (a crash in native code, the OOM killer) and took the pool with it:
    # what was not done yet is checked again, one file per process, so that only the
    # file that kills its process is reported, and every other file is still checked.
    for i, result in enumerate(results):
        if result is None:
            results[i] = _analyze_isolated(items[i], settings, context)
    return results  # type: ignore[return-value]


def _analyze_isolated(item: Tuple[str, bytes], settings: Settings, context) -> FileResult:
    return _isolated(_analyze_job, item, item[0], settings, context)


def _isolated(job: Callable, item, path: str, settings: Settings, context) -> FileResult:
    """`job(item)` alone in a new worker process; an internal error if that dies too."""
    try:
        with ProcessPoolExecutor(1, mp_context=context, initializer=_init_worker,
                                 initargs=(settings,)) as pool:
            return pool.submit(job, item).result()
    except BrokenProcessPool:
        return died(path, "the process checking it")


def died(path: str, process: str) -> FileResult:
    """The result for a file whose `process` died while it was checked."""
    result = FileResult(path)
    result.errors.append(tool_error(path, f"internal error while checking this file: {process} "
                                    "died (a crash in native code, or out of memory) "
                                    "(please report it)"))
    result.internal_error = True
    return result


def analyze_jobs(jobs: Sequence[Job], settings: Settings, workers: int = 1,
                 cache: Optional["Cache"] = None,
                 meanwhile: Callable[[bool], None] = lambda in_pool: None) -> List[FileResult]:
    """Stage 1 for many files, in input order: from the cache, or in `workers` processes.
    `meanwhile(in_pool)` is called once, while this process holds at most one model:
    with True while the workers of a pool model their first files; with False as soon
    as the cache supplies a model or, without a pool, before any file is modelled."""
    with collector_paused():  # the workers inherit it; here it spares the unpickling
        return _analyze_jobs(jobs, settings, workers, cache, _once(meanwhile))


def _once(call: Callable[[bool], None]) -> Callable[[bool], None]:
    called = []

    def first(in_pool: bool) -> None:
        if not called:
            called.append(True)
            call(in_pool)
    return first


def _analyze_jobs(jobs: Sequence[Job], settings: Settings, workers: int,
                  cache: Optional["Cache"], meanwhile: Callable[[bool], None]) -> List[FileResult]:
    results: List[Optional[FileResult]] = [None] * len(jobs)
    todo: List[int] = []
    for i, job in enumerate(jobs):
        if cache is not None and job.key is not None:
            cached = cache.load_model(job.key)
            if isinstance(cached, FileResult) and cached.path == job.path:
                # Workers forked after this process has read the cache's models would
                # each end up with a copy of every page of them that linking touches.
                meanwhile(False)
                results[i] = cached
                continue
        todo.append(i)
    items = [(jobs[i].path, jobs[i].data) for i in todo]
    computed: List[Optional[FileResult]] = [None] * len(items)
    heavy: List[int] = []
    light: List[int] = []  # done in no time, and not worth sending to a worker
    for k, (_, data) in enumerate(items):
        (heavy if may_hold_a_finding(data) else light).append(k)

    def analyze_light(in_pool: bool) -> None:
        for k in light:
            computed[k] = _unmodelled(*items[k], settings)
        meanwhile(in_pool)

    size = sum(len(items[k][1]) for k in heavy)
    if workers > 1 and len(heavy) > 1 and size > POOL_THRESHOLD:
        heavy.sort(key=lambda k: -len(items[k][1]))  # largest first: no straggler at the end
        pooled = _analyze_in_pool([items[k] for k in heavy], settings, workers,
                                  meanwhile=lambda: analyze_light(True))
        for k, result in zip(heavy, pooled):
            computed[k] = result
    else:
        analyze_light(False)
        for k in heavy:
            computed[k] = analyze_bytes(*items[k], settings)
    for i, result in zip(todo, computed):
        assert result is not None
        results[i] = result
        key = jobs[i].key
        if cache is not None and key is not None and not result.internal_error:
            cache.store_model(key, result)
    return [r for r in results if r is not None]


def check_paths(paths: Iterable[str], settings: Settings) -> RunResult:
    results = [analyze_path(p, settings) for p in paths]
    return run_rules(results, settings)


def check_sources(sources: Dict[str, str], settings: Settings) -> RunResult:
    """Check in-memory sources, keyed by path, as one run."""
    results = [analyze_text(text, path, settings) for path, text in sources.items()]
    return run_rules(results, settings)


__all__ = ["analyze_text", "analyze_path", "run_rules", "check_paths", "check_sources",
           "FileResult", "RunResult", "SourceText", "__version__"]
