"""Files -> findings: read, prefilter, parse once, model, link, run rules, suppress.

Stage 1 (per file, independent, cacheable): source -> `FileResult` holding the
`FileModel` built from Python's `ast` (or a TFS900 finding) and the file's `# noqa`
table. Stage 2 (the whole run): link the models, run every enabled rule over each
linked file, drop suppressed and deselected findings, sort.
"""
from __future__ import annotations

import ast
import multiprocessing
import os
import pickle
import re
import shutil
import tempfile
import traceback
import warnings
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from . import __version__
from .collector import collector_paused
from .config import Settings
from .files import SourceText, UnreadableSource, module_name, read_source, reads_as_itself
from .findings import ERROR, Finding
from .model import tfapi
from .model.facts import FileModel
from .model.project import projects
from .notebook import is_notebook
from .rules import enabled_rules
from .rules.base import RuleContext
from .suppress import Suppressions, parse_suppressions

if TYPE_CHECKING:
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


def tool_error(path: str, message: str, line: int = 1, column: int = 1) -> Finding:
    return Finding(path, line, column, line, column, PARSE_ERROR, PARSE_ERROR_NAME, ERROR, message)


def rewrites_for(settings: Settings):
    return tfapi.prefix_rewrites(tfapi.tf_keras_is_keras3(settings.target_tensorflow,
                                                           settings.keras))


def analyze_text(text: str, path: str, settings: Settings, module: Optional[str] = None,
                 tree: Optional[ast.Module] = None) -> FileResult:
    """Stage 1 for one decoded source text: its model from Python's `ast` (`tree`, when
    the caller has parsed `text` already, as flake8 has), or a TFS900 finding."""
    result = FileResult(path, size=len(text))
    if not may_hold_a_finding(text):
        return result
    with collector_paused():
        if tree is None:
            tree = _parse(text, path, result)
            if tree is None:
                return result
        from .model.builder import build_model

        try:
            result.model = build_model(tree, path, module or module_name(path),
                                       rewrites_for(settings), text)
        except RecursionError:
            result.errors.append(tool_error(path, "cannot analyse: the code is nested too deeply"))
        except Exception as exc:  # noqa: BLE001 - one file's bug must not stop the run
            result.errors.append(_internal(path, exc))
            result.internal_error = True
    result.suppressions = parse_suppressions(text)
    return result


def _parse(text: str, path: str, result: FileResult) -> Optional[ast.Module]:
    """Python's tree of `text`; None, with a TFS900 finding in `result`, where Python
    cannot parse it (its own message and position)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings are not the user's question
            return ast.parse(text)
    except SyntaxError as exc:
        result.errors.append(tool_error(path, f"cannot parse: {exc.msg}", exc.lineno or 1,
                                        max(1, exc.offset or 1)))
    except ValueError as exc:  # NUL bytes (before Python 3.12)
        result.errors.append(tool_error(path, f"cannot parse: {exc}"))
    except (RecursionError, MemoryError):
        result.errors.append(tool_error(path, "cannot parse: too deeply nested for Python's "
                                              "own parser"))
    return None


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


def run_rules(results: Sequence[FileResult], settings: Settings) -> RunResult:
    """Stage 2: link every model of the run, then check every file: its TFS900 findings,
    the enabled rules, its `# noqa` comments; sorted."""
    with collector_paused():
        project_of = {}
        for project in projects(r.model for r in results if r.model is not None):
            for fm in project.index.files:
                project_of[fm.path] = project
        rules = enabled_rules(settings)
        findings: List[Finding] = []
        internal = any(r.internal_error for r in results)
        for result in results:
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
            sup = result.suppressions
            findings.extend(f for f in file_findings if not sup.suppressed(f.code, f.line))
        findings.sort(key=Finding.sort_key)
        return RunResult(findings, len(results), internal)


# --- many files: a process pool, and the cache ---------------------------------------

# Below this much source, starting worker processes costs more than it saves.
POOL_THRESHOLD = 1_000_000  # bytes
_WORKER_SETTINGS: Optional[Settings] = None


@dataclass
class Job:
    path: str
    data: bytes  # the file's bytes (a notebook's JSON)
    key: Optional[str] = None  # cache digest; None: do not cache


def analyze_bytes(path: str, data: bytes, settings: Settings) -> FileResult:
    """Stage 1 for a file's bytes: decode (notebooks: their code cells), then analyse."""
    from .inputs import Input

    try:
        text = Input(path, data).text
    except UnreadableSource as exc:
        return unreadable(path, exc)
    return analyze_text(text, path, settings)


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
                        results[i] = analyze_bytes(*items[i], settings)
                read_back(block=False)
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
                 cache: Optional["Cache"] = None) -> List[FileResult]:
    """Stage 1 for many files, in input order: from the cache, or in `workers` processes."""
    with collector_paused():  # the workers inherit it; here it spares the unpickling
        return _analyze_jobs(jobs, settings, workers, cache)


def _analyze_jobs(jobs: Sequence[Job], settings: Settings, workers: int,
                  cache: Optional["Cache"]) -> List[FileResult]:
    results: List[Optional[FileResult]] = [None] * len(jobs)
    todo: List[int] = []
    for i, job in enumerate(jobs):
        if cache is not None and job.key is not None:
            cached = cache.load_model(job.key)
            if isinstance(cached, FileResult) and cached.path == job.path:
                results[i] = cached
                continue
        todo.append(i)
    items = [(jobs[i].path, jobs[i].data) for i in todo]
    computed: List[Optional[FileResult]] = [None] * len(items)
    heavy: List[int] = []
    light: List[int] = []  # done in no time, and not worth sending to a worker
    for k, (_, data) in enumerate(items):
        (heavy if may_hold_a_finding(data) else light).append(k)

    def analyze_light() -> None:
        for k in light:
            computed[k] = _unmodelled(*items[k], settings)

    size = sum(len(items[k][1]) for k in heavy)
    if workers > 1 and len(heavy) > 1 and size > POOL_THRESHOLD:
        heavy.sort(key=lambda k: -len(items[k][1]))  # largest first: no straggler at the end
        pooled = _analyze_in_pool([items[k] for k in heavy], settings, workers,
                                  meanwhile=analyze_light)
        for k, result in zip(heavy, pooled):
            computed[k] = result
    else:
        analyze_light()
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
