"""Stage 1 in worker processes (`engine.parallel`), through `Run`: every file once, in
order; a worker that dies, or a chunk whose results are lost, costs no other file."""
from __future__ import annotations

import os

import pytest

import syncadvisor.engine.parallel as parallel
from syncadvisor.config import Settings
from syncadvisor.engine import Run

BAD = ("import tensorflow as tf\n"
       "v = tf.Variable(1., synchronization=tf.VariableSynchronization.DEFAULT)\n")
_ANALYZE_JOB = parallel.analyze_job


def _die_on_victim(item):
    """A pool job (module level, so that the pool can pickle it) whose worker dies."""
    if item[0].endswith("victim.py"):
        os._exit(9)  # as a SIGSEGV or the OOM killer would
    return _ANALYZE_JOB(item)


def _check(folder, monkeypatch, jobs=2):
    """Every file of `folder` checked in one Run with a pool, whatever the size."""
    monkeypatch.setattr(parallel, "POOL_THRESHOLD", 0)
    spool = folder / "temp"
    spool.mkdir()
    monkeypatch.setattr(parallel.tempfile, "tempdir", str(spool))
    run = Run(Settings(root=str(folder)), jobs=jobs)
    for path in sorted(folder.glob("*.py")):
        run.add_file(str(path))
    result = run.check()
    assert list(spool.iterdir()) == []  # the workers' results folder is gone
    return result


@pytest.mark.skipif(os.name != "posix", reason="the pool forks on POSIX only")
def test_a_worker_process_that_dies_costs_its_file_only(tmp_path, monkeypatch):
    """A worker killed by the OOM killer, or by a crash in C code, is a TFS900 internal
    error for the file it was checking; every other file is still checked."""
    monkeypatch.setattr(parallel, "analyze_job", _die_on_victim)  # forked workers inherit it
    for k in range(6):
        (tmp_path / f"m{k}.py").write_text(BAD)
    # The largest file: workers take the largest first (this process takes the smallest).
    (tmp_path / "victim.py").write_text(BAD + "# padding\n" * 50)
    result = _check(tmp_path, monkeypatch)
    victim = [f for f in result.findings if f.path.endswith("victim.py")]
    assert result.internal_error and [f.code for f in victim] == ["TFS900"]
    assert "internal error" in victim[0].message and "died" in victim[0].message
    found = {os.path.basename(f.path) for f in result.findings if f.code == "TFS001"}
    assert found == {f"m{k}.py" for k in range(6)}


def test_stage_one_chunks_cover_every_file_once_in_order():
    size = parallel.CHUNK_BYTES
    sizes = [5 * size, size, size - 1, 1, size // 2, size // 2, 3, 2, 1]
    chunks = parallel.chunks(sizes)
    assert [i for chunk in chunks for i in chunk] == list(range(len(sizes)))
    assert [len(chunk) for chunk in chunks] == [1, 1, 2, 2, 3]  # a large file alone
    assert all(sum(sizes[i] for i in chunk) >= size for chunk in chunks[:-1])
    assert parallel.chunks([]) == []


@pytest.mark.skipif(os.name != "posix", reason="the pool forks on POSIX only")
def test_a_chunk_whose_results_cannot_be_read_back_is_checked_again(tmp_path, monkeypatch):
    """A worker's results come back through a file: one that cannot be read (a full disk,
    a cleaner of temporary files) costs a second look at its files, not their findings."""
    for k in range(12):
        (tmp_path / f"m{k:02}.py").write_text(BAD + "# padding\n" * k)
    lost, real_unspool = [], parallel.unspool

    def unspool(name):
        if not lost:
            lost.append(name)
            os.unlink(name)
        return real_unspool(name)

    monkeypatch.setattr(parallel, "unspool", unspool)
    result = _check(tmp_path, monkeypatch)
    assert lost and not result.internal_error
    assert sorted(os.path.basename(f.path) for f in result.findings) == \
        [f"m{k:02}.py" for k in range(12)]
    assert {f.code for f in result.findings} == {"TFS001"}
