"""Models from Python's `ast` agree with models from libcst's tree, and findings do not
depend on which one a run starts from (engine.run_rules models files with findings
again from libcst).

The model-level check compares everything but positions and source texts, which are
where the two trees differ (Python leaves enclosing parentheses out of a node). The
run-level check compares findings exactly, positions, messages and fixes included, over
every fixture, every runtime snippet, and the installed keras and tf_keras packages.
"""
from __future__ import annotations

import ast
import dataclasses
import importlib.util
import multiprocessing
import os
import pickle
import sys
import textwrap
import time
from pathlib import Path

import pytest

from syncadvisor import engine
from syncadvisor.config import Settings
from syncadvisor.engine import Job
from syncadvisor.model import tfapi
from syncadvisor.model.ast_builder import build_model_from_ast
from syncadvisor.model.builder import build_model
from syncadvisor.model.likely import likely_reported
from syncadvisor.model.project import projects
from syncadvisor.parsing import parse_chunks

sys.path.insert(0, str(Path(__file__).parent))
from fuzz_long import skeleton  # noqa: E402

TESTS = Path(__file__).parent
SOURCES = sorted(p for folder in (TESTS / "fixtures", TESTS / "runtime" / "snippets")
                 for p in folder.rglob("*.py"))
PARSED = [p for p in SOURCES if p.name != "syntax_error.py"]
@pytest.mark.parametrize("path", PARSED, ids=lambda p: str(p.relative_to(TESTS)))
def test_both_trees_give_the_same_model(path):
    text = path.read_text(encoding="utf-8")
    rewrites = tfapi.prefix_rewrites(False)
    exact = build_model(parse_chunks(text), str(path), "m", rewrites, text)
    fast = build_model_from_ast(ast.parse(text), str(path), "m", rewrites, text)
    assert exact.exact and not fast.exact
    assert skeleton(fast) == skeleton(exact)
    # Lines agree too wherever a variable is created.
    assert [c.span.line for c in fast.creations] == [c.span.line for c in exact.creations]


def _same(a, b, seen) -> bool:
    """Structural equality that follows each pair of objects once (Bounds can cycle)."""
    if type(a) is not type(b):
        return False
    if dataclasses.is_dataclass(a):
        if (id(a), id(b)) in seen:
            return True
        seen.add((id(a), id(b)))
        return all(_same(getattr(a, f.name), getattr(b, f.name), seen)
                   for f in dataclasses.fields(a))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y, seen) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k], seen) for k in a)
    return a == b


@pytest.mark.parametrize("path", PARSED[::3], ids=lambda p: str(p.relative_to(TESTS)))
def test_a_model_pickles_back_to_itself(path):
    """Models travel between processes and to the cache as pickles, their call edges as
    one flat tuple (facts._flat_calls): what comes back is the same model."""
    text = path.read_text(encoding="utf-8")
    rewrites = tfapi.prefix_rewrites(False)
    for model in (build_model(parse_chunks(text), str(path), "m", rewrites, text),
                  build_model_from_ast(ast.parse(text), str(path), "m", rewrites, text)):
        back = pickle.loads(pickle.dumps(model))
        assert _same(back, model, set()) and back.calls


def _findings(jobs, settings, monkeypatch, exact_only, refine_workers=1):
    with monkeypatch.context() as patch:
        if exact_only:  # every model from libcst, as before the ast path existed
            patch.setattr(engine, "_build_from_ast", lambda *args: False)
        with engine.Refiner(settings, refine_workers) as refiner:
            results = engine.analyze_jobs(jobs, settings, workers=os.cpu_count() or 1)
            texts = {job.path: job.data.decode("utf-8", "surrogateescape") for job in jobs}
            run = engine.run_rules(results, settings, lambda r: texts[r.path], refiner)
    assert all(r.model is None or r.model.exact for r in run.refined)
    return [(f.path, f.line, f.column, f.end_line, f.end_column, f.code, f.severity,
             f.message, f.fix) for f in run.findings]


def _jobs(paths):
    return [Job(str(p), p.read_bytes()) for p in paths]


def test_fixture_findings_do_not_depend_on_the_tree(monkeypatch):
    jobs = _jobs(SOURCES)
    settings = Settings()
    fast = _findings(jobs, settings, monkeypatch, exact_only=False)
    assert fast == _findings(jobs, settings, monkeypatch, exact_only=True)
    assert len(fast) > 100


@pytest.mark.skipif(os.name != "posix", reason="the pool forks on POSIX only")
def test_refining_in_worker_processes_gives_the_same_findings(monkeypatch):
    jobs = _jobs(SOURCES)
    settings = Settings()
    here = _findings(jobs, settings, monkeypatch, exact_only=False)
    assert _findings(jobs, settings, monkeypatch, exact_only=False, refine_workers=2) == here


@pytest.mark.skipif(os.name != "posix", reason="the pool forks on POSIX only")
def test_files_go_to_the_refining_workers_as_their_findings_appear_largest_first(monkeypatch):
    """Each file with findings is sent to be modelled again while the first pass checks
    the rest, the largest first: the refining step's wait is its largest file."""
    jobs = _jobs(SOURCES)
    settings = Settings()
    sizes, waiting = [], []
    real_start, real_refine = engine.Refiner.start, engine.Refiner.refine

    def start(self, result, source_of):
        sizes.append(result.size)
        return real_start(self, result, source_of)

    def refine(self, results, paths, source_of):
        waiting.append((len(self.started), len(paths)))
        return real_refine(self, results, paths, source_of)

    monkeypatch.setattr(engine.Refiner, "start", start)
    monkeypatch.setattr(engine.Refiner, "refine", refine)
    monkeypatch.setattr(engine, "likely_reported", lambda model: False)  # no guess
    pooled = _findings(jobs, settings, monkeypatch, exact_only=False, refine_workers=2)
    assert pooled == _findings(jobs, settings, monkeypatch, exact_only=False)
    started, inexact = waiting[0]
    assert started == inexact > 10 and sizes[:started] == sorted(sizes[:started], reverse=True)


def _slow_refining(item):
    """A refining job (module level, for the pool) that takes its time on one file."""
    if item[1].endswith("/check/silent_keras_patterns.py"):
        time.sleep(60)
    return _REFINE_JOB(item)


@pytest.mark.skipif(os.name != "posix", reason="the pool forks on POSIX only")
def test_a_guess_goes_first_and_one_that_finds_nothing_is_not_waited_for(monkeypatch):
    """The largest file that looks likely to have a finding is sent to be modelled again
    before the first pass begins. A guess that was wrong, and is still being modelled
    when the run is done, is not waited for: its worker is stopped."""
    jobs = _jobs(SOURCES)
    settings = Settings()
    here = _findings(jobs, settings, monkeypatch, exact_only=False)
    assert not [f for f in here if f[0].endswith("/check/silent_keras_patterns.py")]  # silent
    monkeypatch.setattr(engine, "_refine_job", _slow_refining)  # workers inherit it
    monkeypatch.setattr(engine, "likely_reported",
                        lambda model: model.path.endswith("/check/silent_keras_patterns.py"))
    order = []
    real_start = engine.Refiner.start
    monkeypatch.setattr(engine.Refiner, "start", lambda self, result, source_of: (
        order.append(result.path), real_start(self, result, source_of)))
    before = time.monotonic()
    assert _findings(jobs, settings, monkeypatch, exact_only=False, refine_workers=2) == here
    assert time.monotonic() - before < 45
    assert order[0].endswith("/check/silent_keras_patterns.py") and len(order) > 10
    assert not multiprocessing.active_children()


def test_a_guess_looks_for_a_replica_update_of_a_variable_the_class_made():
    layer = textwrap.dedent("""\
        import tensorflow as tf
        class Counter(tf.keras.layers.Layer):
            def build(self, shape):
                self.seen = self.add_weight(name="seen", shape=(), trainable=False)
            def {method}(self, x):
                self.seen.assign_add(1.0)
                return x
        """)
    rewrites = tfapi.prefix_rewrites(False)

    def guess(method):
        text = layer.format(method=method)
        return likely_reported(build_model_from_ast(ast.parse(text), "m.py", "m", rewrites, text))
    assert guess("call") and guess("update_state")
    assert not guess("reset_state")  # run once, not once per replica


def test_a_link_takes_known_call_targets_as_they_are():
    """The second link of a run reuses the first's call targets (what each call may run)
    for the files it did not model again (finding them is most of a link)."""
    results = engine.analyze_jobs(_jobs(SOURCES), Settings())
    models = [r.model for r in results if r.model is not None]
    first = projects(models)
    known, known_callees = {}, {}
    for project in first:
        known.update(project.usage.call_targets)
        known_callees.update(project.contexts.callee_table)
    assert sum(len(table) for table in known.values()) > 50
    assert 50 < sum(len(table) for table in known_callees.values()) < sum(
        len(table) for table in known.values())  # the instance methods are usage's own
    again = projects(models, known, known_callees)
    assert [p.usage.where for p in again] == [p.usage.where for p in first]
    assert [p.contexts.function_contexts for p in again] == \
        [p.contexts.function_contexts for p in first]
    # Taken, not worked out again:
    blind = projects(models, {path: {} for path in known}, {path: [] for path in known})
    assert all(not table for p in blind for table in p.usage.call_targets.values())
    assert all(not table for p in blind for table in p.contexts.callee_table.values())
    assert all(not contexts for p in blind for contexts in p.contexts.function_contexts.values())


def _die_refining_victim(item):
    """A refining job (module level, for the pool) whose worker dies on one file."""
    if item[1].endswith("/TFS101_none_mirrored.py"):
        os._exit(9)  # as a crash in libcst's native parser would
    return _REFINE_JOB(item)


_REFINE_JOB = engine._refine_job


@pytest.mark.skipif(os.name != "posix", reason="the pool forks on POSIX only")
def test_a_refining_worker_that_dies_costs_only_its_file(monkeypatch):
    jobs = _jobs(SOURCES)
    settings = Settings()
    here = _findings(jobs, settings, monkeypatch, exact_only=False)
    monkeypatch.setattr(engine, "_refine_job", _die_refining_victim)  # workers inherit it
    pooled = _findings(jobs, settings, monkeypatch, exact_only=False, refine_workers=2)
    victim = [f for f in pooled if f[0].endswith("/TFS101_none_mirrored.py")]
    assert [(f[5], "process checking it died" in f[7]) for f in victim] == [("TFS900", True)]
    assert [f for f in pooled if f not in victim] == [
        f for f in here if not f[0].endswith("/TFS101_none_mirrored.py")]


def _installed(package: str):
    spec = importlib.util.find_spec(package)  # finds, does not import
    return Path(spec.origin).parent if spec is not None and spec.origin else None


@pytest.mark.skipif(not (_installed("keras") and _installed("tf_keras")),
                    reason="keras and tf_keras are installed with the test extras")
def test_corpus_findings_do_not_depend_on_the_tree(monkeypatch):
    """The benchmark's tree: 1,490 files, 470k lines (keras 3.15.1, tf_keras 2.21.0)."""
    paths = sorted(p for package in ("keras", "tf_keras") for p in
                   _installed(package).rglob("*.py"))
    jobs = _jobs(paths)
    settings = Settings()
    fast = _findings(jobs, settings, monkeypatch, exact_only=False)
    assert fast == _findings(jobs, settings, monkeypatch, exact_only=True)
    assert fast  # BatchNormalization's moving statistics, at least


def test_columns_count_characters_not_bytes():
    """Python counts columns in UTF-8 bytes; spans count characters, as libcst does."""
    text = ('# é\nimport tensorflow as tf\nx = "é€😀"; v = tf.Variable(1., '
            'synchronization=tf.VariableSynchronization.NONE)\n')
    rewrites = tfapi.prefix_rewrites(False)
    exact = build_model(parse_chunks(text), "a.py", "a", rewrites, text)
    fast = build_model_from_ast(ast.parse(text), "a.py", "a", rewrites, text)
    assert fast.creations[0].span == exact.creations[0].span
    assert fast.creations[0].args[1].span == exact.creations[0].args[1].span
    assert fast.enum_refs[0].member_span == exact.enum_refs[0].member_span


def test_a_name_python_normalised_keeps_its_source_spelling():
    """Python stores `ﬁlt` (a ligature) as `filt` (NFKC); a name's text is what the user
    wrote, as libcst has it, and its columns count that."""
    text = ("import tensorflow as tf\nﬁlt = tf.Variable(1.)\n"
            "def f():\n    return ﬁlt.assign_add(1.)\n")
    rewrites = tfapi.prefix_rewrites(False)
    exact = build_model(parse_chunks(text), "a.py", "a", rewrites, text)
    fast = build_model_from_ast(ast.parse(text), "a.py", "a", rewrites, text)
    assert [u.receiver.text for u in fast.updates] == ["ﬁlt"]
    assert fast.updates[0].receiver.text == exact.updates[0].receiver.text
    assert fast.updates[0].receiver.span == exact.updates[0].receiver.span
