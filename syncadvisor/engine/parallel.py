"""Stage 1 for many files: in this process, or in a pool of worker processes. The only
code that knows about processes.

A worker that dies (a crash in native code, the OOM killer) costs its file a TFS900,
never the run: what was not done yet is checked again, one file per process. The
process machinery is imported only when a pool is started: a run of one file (an
editor's) never needs it.
"""
from __future__ import annotations

import os
import pickle
import shutil
import tempfile
from typing import TYPE_CHECKING, Callable, List, Optional, Sequence, Tuple

from ..collector import collector_paused
from ..config import Settings
from .analyze import FileResult, analyze_bytes, analyze_unmodelled, died
from .prefilter import may_hold_a_finding

if TYPE_CHECKING:
    from concurrent.futures import Future

Item = Tuple[str, bytes, Settings]  # a file's path, its bytes (a notebook's JSON), its settings

# Below this much source that may hold a finding, starting worker processes costs more
# than it saves.
POOL_THRESHOLD = 1_000_000  # bytes
# A chunk of work is a file of at least this size, or consecutive smaller files adding
# up to it: small enough that a worker's last chunk does not keep everyone waiting, and
# that this process, between two of its own chunks, keeps the workers' queue filled.
CHUNK_BYTES = 32_000


def analyze_files(items: Sequence[Item], workers: int = 1) -> List[FileResult]:
    """Stage 1 for every item, in order: in `workers` processes when there is enough to
    model; the files the prefilter drops are done here, in no time."""
    with collector_paused():  # the workers inherit it; here it spares the unpickling
        results: List[Optional[FileResult]] = [None] * len(items)
        heavy: List[int] = []
        light: List[int] = []
        for i, (_, data, _) in enumerate(items):
            (heavy if may_hold_a_finding(data) else light).append(i)

        def analyze_light() -> None:
            for i in light:
                results[i] = analyze_unmodelled(*items[i])

        size = sum(len(items[i][1]) for i in heavy)
        if workers > 1 and len(heavy) > 1 and size > POOL_THRESHOLD:
            heavy.sort(key=lambda i: -len(items[i][1]))  # largest first: no straggler at the end
            pooled = _analyze_in_pool([items[i] for i in heavy], workers, meanwhile=analyze_light)
            for i, result in zip(heavy, pooled):
                results[i] = result
        else:
            analyze_light()
            for i in heavy:
                results[i] = analyze_bytes(*items[i])
        return results  # type: ignore[return-value]


def chunks(sizes: Sequence[int]) -> List[range]:
    """Consecutive indices of `sizes`, cut where a chunk reaches CHUNK_BYTES."""
    found: List[range] = []
    start, size = 0, 0
    for i, length in enumerate(sizes):
        size += length
        if size >= CHUNK_BYTES:
            found.append(range(start, i + 1))
            start, size = i + 1, 0
    if start < len(sizes):
        found.append(range(start, len(sizes)))
    return found


def _pool_context():
    """Fork where there is fork: a worker starts at once, with everything imported."""
    import multiprocessing

    return multiprocessing.get_context("fork" if os.name == "posix" else "spawn")


# A worker's share of the run: the files with their settings (inherited when forked, so
# never sent through a pipe), and the folder its results go to. `analyze_job` (what a
# worker runs for a file) and `unspool` (reading a chunk's results back) are module-level
# names: the tests make a worker die, or a chunk get lost, there.
_WORKER_ITEMS: Sequence[Item] = ()
_WORKER_SPOOL = ""


def _init_worker(items: Sequence[Item] = (), spool: str = "") -> None:
    global _WORKER_ITEMS, _WORKER_SPOOL
    _WORKER_ITEMS, _WORKER_SPOOL = items, spool


def analyze_job(item: Item) -> FileResult:
    return analyze_bytes(*item)


def _analyze_chunk(indices: Sequence[int]) -> str:
    """Analyse `_WORKER_ITEMS[i]` for each index; the results are pickled to a file,
    whose name is returned. Sent back through the pool's pipe, a chunk's models would
    hold the worker until the parent's result thread had read them all, 64 KB at a
    time, each read waiting for the GIL that the parent's own analysis holds: the
    worker would sit idle."""
    results = [analyze_job(_WORKER_ITEMS[i]) for i in indices]
    handle, name = tempfile.mkstemp(dir=_WORKER_SPOOL)
    with os.fdopen(handle, "wb") as spooled:
        pickle.dump(results, spooled, protocol=pickle.HIGHEST_PROTOCOL)
    return name


def _nothing() -> None:
    return None


def unspool(name: str) -> List[FileResult]:
    with open(name, "rb") as spooled:
        data = spooled.read()
    os.unlink(name)
    return pickle.loads(data)


def _analyze_in_pool(items: Sequence[Item], workers: int,
                     meanwhile: Callable[[], None] = _nothing) -> List[FileResult]:
    """`workers` processes in all: this one, and `workers - 1` forked ones; this one
    calls `meanwhile` as soon as the workers have their first chunks.

    The workers are fed chunks from the front (the largest files), this process takes
    them from the back until the two meet, so that no one waits: what a worker does
    costs pickling there and unpickling here, what this process does costs neither.
    """
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    context = _pool_context()
    pieces = chunks([len(data) for _, data, _ in items])
    results: List[Optional[FileResult]] = [None] * len(items)
    sent: List[Tuple[range, "Future"]] = []
    unread = 0  # sent[unread:] are not read back yet
    head, tail = 0, len(pieces)  # pieces[head:tail] are nobody's yet
    in_flight = 2 * (workers - 1)  # enough that a worker never waits for this process

    def read_back(block: bool) -> None:
        nonlocal unread
        while unread < len(sent) and (block or sent[unread][1].done()):
            indices, future = sent[unread]
            unread += 1
            try:
                for i, result in zip(indices, unspool(future.result())):
                    results[i] = result
            except Exception:  # noqa: BLE001 - a chunk that did not come back, as it may
                pass  # (a dead pool, a full disk): its files are checked again below

    spool = tempfile.mkdtemp(prefix="syncadvisor-")
    try:
        with ProcessPoolExecutor(workers - 1, mp_context=context, initializer=_init_worker,
                                 initargs=(items, spool)) as pool:
            while head < tail:
                waiting = sum(1 for _, future in sent[-in_flight:] if not future.done()) \
                    if in_flight else 0
                try:
                    while waiting < in_flight and head < tail:
                        sent.append((pieces[head], pool.submit(_analyze_chunk, pieces[head])))
                        head, waiting = head + 1, waiting + 1
                except BrokenProcessPool:
                    in_flight = 0  # this process does the rest, and nothing more is sent
                meanwhile()
                meanwhile = _nothing
                if head < tail:
                    tail -= 1
                    for i in pieces[tail]:
                        results[i] = analyze_bytes(*items[i])
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
            results[i] = _analyze_isolated(items[i], context)
    return results  # type: ignore[return-value]


def _analyze_isolated(item: Item, context) -> FileResult:
    """`item` alone in a new worker process; an internal error if that dies too."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    try:
        with ProcessPoolExecutor(1, mp_context=context) as pool:
            return pool.submit(analyze_job, item).result()
    except BrokenProcessPool:
        return died(item[0], "the process checking it")
