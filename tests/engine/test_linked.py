"""Linked projects kept across changes (`engine.check.Linked`): the language server keeps
one for its workspace and `--fix` one for its rounds. Whatever files are replaced, in
whatever order, every file's findings are those of the same files linked afresh."""
from __future__ import annotations

import random
import textwrap
from pathlib import Path

import pytest

from syncadvisor.config import Settings
from syncadvisor.engine.analyze import analyze_text
from syncadvisor.engine.check import Linked, check
from tests import paths

SETTINGS = Settings(root=str(paths.FIXTURES))


def _result(path: str, text: str, module: str):
    return analyze_text(text, path, SETTINGS, module=module, prefilter=False)


def _shown(findings):
    return [(f.path, f.line, f.column, f.code, f.message) for f in findings]


def _kept_and_fresh(linked: Linked, results):
    for result in results:
        if linked.model(result.path) is not result.model:
            assert linked.replace(result.path, result.model)
    kept = check(results, SETTINGS, lambda path: None, linked=linked.projects).findings
    fresh = check(results, SETTINGS, lambda path: None).findings
    return _shown(kept), _shown(fresh)


def test_an_update_is_settled_again_when_a_variable_it_reads_goes_out_of_sync():
    """`u.assign(w * 2.0)` is the same on every replica while `w` is in sync; once `w` is
    ON_READ (an edit of the file that makes it, not of the update's), it is not: TFS201.
    The update records a kept update table holds are settled anew by each link."""
    update = _result("/p/pkg/a.py", textwrap.dedent("""\
        import tensorflow as tf
        from pkg.b import w, strategy
        with strategy.scope():
            u = tf.Variable(0.0, aggregation=tf.VariableAggregation.NONE)
        def step():
            u.assign(w * 2.0)
        strategy.run(step)
        """), "pkg.a")
    variable = textwrap.dedent("""\
        import tensorflow as tf
        strategy = tf.distribute.MirroredStrategy()
        with strategy.scope():
            w = tf.Variable(1.0{})
        """)
    in_sync = _result("/p/pkg/b.py", variable.format(""), "pkg.b")
    on_read = _result("/p/pkg/b.py", variable.format(
        ", synchronization=tf.VariableSynchronization.ON_READ, "
        "aggregation=tf.VariableAggregation.SUM"), "pkg.b")
    linked = Linked([update.model, in_sync.model])
    kept, fresh = _kept_and_fresh(linked, [update, in_sync])
    assert kept == fresh == []
    kept, fresh = _kept_and_fresh(linked, [update, on_read])
    assert kept == fresh and [f[3] for f in fresh] == ["TFS201"]
    kept, fresh = _kept_and_fresh(linked, [update, in_sync])
    assert kept == fresh == []


def test_a_replaced_file_keeps_its_classes_place_in_the_run():
    """Of two trackable classes that hold a variable (a base, and a subclass in a later
    file), the first in the run's order is named: still after the base's file is replaced."""
    base = textwrap.dedent("""\
        import tensorflow as tf
        class Base(tf.Module):
            def __init__(self):
                self.total = tf.Variable(0., trainable=False,
                                         synchronization=tf.VariableSynchronization.ON_READ)
        """)
    sub = _result("/p/pkg/b.py", "import tensorflow as tf\nfrom pkg.a import Base\n"
                                 "class Sub(Base):\n    pass\n", "pkg.b")
    before = _result("/p/pkg/a.py", base, "pkg.a")
    edited = _result("/p/pkg/a.py", base + "# edited\n", "pkg.a")
    linked = Linked([before.model, sub.model])
    _kept_and_fresh(linked, [before, sub])
    kept, fresh = _kept_and_fresh(linked, [edited, sub])
    assert kept == fresh
    assert "`Base` tracks it" in fresh[0][4]


# --- any sequence of replacements ------------------------------------------------------

FIX = paths.FIXTURES / "fix"
VERSIONS = {p: [p.read_text()] + [p.with_name(p.stem + suffix).read_text()
                                  for suffix in (".fixed.py", ".unsafe-fixed.py")]
            for p in sorted(FIX.glob("*.py")) if not p.name.endswith("fixed.py")}
CROSS = sorted((paths.FIXTURES / "check" / "crossmodule").glob("*.py"))


def _versions(path: Path):
    """A file's texts to replace it with: as the user wrote it, fixed and unsafe-fixed
    (the edits `--fix` makes: synchronization and aggregation changed), and the fix
    fixtures' texts under its name (everything changed)."""
    own = VERSIONS.get(path, [path.read_text()])
    return own + [t for texts in VERSIONS.values() for t in texts[:1]]


@pytest.mark.parametrize("seed", range(3))
def test_any_sequence_of_replacements_gives_the_findings_of_a_fresh_link(seed):
    rng = random.Random(seed)
    files = CROSS + sorted(VERSIONS)[:5]
    modules = {p: ("crossmodule." if p in CROSS else "fix.") + p.stem for p in files}
    current = {p: _result(str(p), p.read_text(), modules[p]) for p in files}
    linked = Linked(r.model for r in current.values())
    for step in range(25):
        path = rng.choice(files)
        current[path] = _result(str(path), rng.choice(_versions(path)), modules[path])
        kept, fresh = _kept_and_fresh(linked, list(current.values()))
        assert kept == fresh, (seed, step, path)
