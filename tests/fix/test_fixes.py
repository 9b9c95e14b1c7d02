"""Autofix: golden fixed files, stability, and byte-exact, atomic writes."""
from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import libcst as cst
import pytest

from syncadvisor.api import check_source, fix_source
from syncadvisor.cli import main
from syncadvisor.findings import SAFE
from tests import paths
from tests.fuzz.harness import new_findings

ROOT = paths.FIXTURES / "fix"
INPUTS = sorted(p for p in ROOT.glob("*.py") if not p.name.endswith("fixed.py"))
REGENERATE = os.environ.get("SYNCADVISOR_REGENERATE") == "1"


def _golden(path: Path, text: str) -> str:
    if REGENERATE:
        path.write_text(text)
    return path.read_text()


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.name)
def test_safe_fixes_match_golden_file(path):
    fixed = fix_source(path.read_text(), path.name)
    assert fixed == _golden(path.with_name(path.stem + ".fixed.py"), fixed)


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.name)
def test_unsafe_fixes_match_golden_file(path):
    fixed = fix_source(path.read_text(), path.name, unsafe=True)
    assert fixed == _golden(path.with_name(path.stem + ".unsafe-fixed.py"), fixed)


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.name)
@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
def test_fixed_code_parses_rechecks_clean_and_is_stable(path, unsafe):
    source = path.read_text()
    before = check_source(source, path.name)
    assert any(f.fix is not None for f in before), "a fix fixture must have something to fix"
    fixed = fix_source(source, path.name, unsafe=unsafe)
    cst.parse_module(fixed)
    after = check_source(fixed, path.name)
    leftover = [f for f in after if f.fix is not None and (unsafe or f.fix.applicability == SAFE)]
    assert not leftover, [(f.line, f.code, f.message) for f in leftover]
    assert fix_source(fixed, path.name, unsafe=unsafe) == fixed


def test_every_fixable_rule_is_exercised_by_a_fix_fixture():
    from syncadvisor.rules import all_rules

    fixed_codes = set()
    for path in INPUTS:
        fixed_codes |= {f.code for f in check_source(path.read_text(), path.name)
                        if f.fix is not None}
    fixable = {r.code for r in all_rules() if r.fix_availability}
    assert fixable <= fixed_codes, sorted(fixable - fixed_codes)


# --- the command line ------------------------------------------------------------

BAD = ("import tensorflow as tf\n"
       "v = tf.Variable(1., synchronization=tf.VariableSynchronization.DEFAULT)\n"
       "def make():\n"
       "    return tf.Variable(1., synchronization=tf.VariableSynchronization.NONE)\n")


def _cli(args, capsys):
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_fix_writes_safe_fixes_and_reports_what_remains(tmp_path, capsys):
    target = tmp_path / "a.py"
    target.write_text(BAD)
    code, out, _ = _cli(["check", "--fix", str(target)], capsys)
    assert target.read_text() == BAD.replace("DEFAULT", "AUTO")
    assert code == 1 and "TFS101" in out and "TFS001" not in out
    assert out.splitlines()[-1] == "1 finding (1 warning), 1 fixed, 1 more with --unsafe-fixes."
    code, out, _ = _cli(["check", "--fix", "--unsafe-fixes", str(target)], capsys)
    assert code == 0 and out.strip() == "Fixed 1 finding; nothing remains."
    assert "synchronization" not in target.read_text().splitlines()[3]


def test_diff_and_check_write_nothing(tmp_path, capsys):
    target = tmp_path / "a.py"
    target.write_text(BAD)
    os.utime(target, (1_000_000_000, 1_000_000_000))
    before = (target.read_bytes(), target.stat().st_mtime_ns)
    code, out, err = _cli(["check", "--diff", str(target)], capsys)
    assert code == 1
    assert f"--- {target}" in out and "-v = tf.Variable(1., synchronization=tf.VariableSynchronization.DEFAULT)" in out
    assert "+v = tf.Variable(1., synchronization=tf.VariableSynchronization.AUTO)" in out
    assert "Would fix 1 finding in 1 file." in err
    _cli(["check", "--diff", "--unsafe-fixes", str(target)], capsys)
    _cli(["check", str(target)], capsys)
    _cli(["check", "--format", "json", str(target)], capsys)
    assert (target.read_bytes(), target.stat().st_mtime_ns) == before


def test_diff_with_nothing_to_fix_is_exit_0(tmp_path, capsys):
    (tmp_path / "ok.py").write_text("import tensorflow as tf\nv = tf.Variable(1.)\n")
    assert _cli(["check", "--diff", str(tmp_path)], capsys)[0] == 0


def test_fix_on_stdin_prints_the_fixed_source(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(BAD.encode())))
    code, out, err = _cli(["check", "--fix", "-", "--stdin-filename", "a.py"], capsys)
    assert out == BAD.replace("DEFAULT", "AUTO")
    assert "TFS101" in err and code == 1


def test_a_fix_that_would_not_parse_is_never_written(tmp_path, capsys, monkeypatch):
    import syncadvisor.fixes as fixes

    monkeypatch.setattr(fixes, "apply_fixes", lambda text, findings, unsafe: (text + "(\n", 1))
    target = tmp_path / "a.py"
    target.write_text(BAD)
    code, _, err = _cli(["check", "--fix", str(target)], capsys)
    assert target.read_text() == BAD and "would not parse" in err and code == 1


# --- bytes --------------------------------------------------------------------------

def _fix_bytes(tmp_path, data: bytes, name="f.py") -> bytes:
    target = tmp_path / name
    target.write_bytes(data)
    main(["check", "--fix", "--exit-zero", str(target)])
    return target.read_bytes()


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"], ids=["lf", "crlf", "cr"])
def test_newlines_are_kept_and_only_the_edit_changes(tmp_path, capsys, newline):
    lines = [b"import tensorflow as tf", b"# caf\xc3\xa9 \xe2\x98\x95",
             b"v = tf.Variable(1., synchronization=tf.VariableSynchronization.DEFAULT)",
             b"w = tf.Variable(2.)", b""]
    data = newline.join(lines)
    assert _fix_bytes(tmp_path, data) == data.replace(b"DEFAULT", b"AUTO")


@pytest.mark.parametrize("newline", ["\r\n", "\r"], ids=["crlf", "cr"])
def test_unsafe_fixes_keep_the_files_newlines(newline):
    """A fix that writes lines (TFS108's move into a scope) writes the file's newline."""
    for path in INPUTS:
        source = path.read_text()
        fixed = fix_source(source.replace("\n", newline), path.name, unsafe=True)
        assert fixed == fix_source(source, path.name, unsafe=True).replace("\n", newline), path


def test_utf8_bom_and_crlf(tmp_path, capsys):
    data = (b"\xef\xbb\xbfimport tensorflow as tf\r\n"
            b"v = tf.Variable(1., synchronization=\"ON_READ\", aggregation=tf.VariableAggregation.SUM)\r\n")
    assert _fix_bytes(tmp_path, data) == data.replace(
        b'"ON_READ"', b"tf.VariableSynchronization.ON_READ")


def test_latin1_with_coding_line(tmp_path, capsys):
    data = (b"# -*- coding: latin-1 -*-\n# r\xe9sum\xe9 na\xefve\n"
            b"import tensorflow as tf\n"
            b"v = tf.Variable(1., synchronization=tf.VariableSynchronization.DEFAULT)  # \xa9\n")
    assert _fix_bytes(tmp_path, data) == data.replace(b"DEFAULT", b"AUTO")


def test_tabs_and_odd_formatting(tmp_path, capsys):
    data = (b"import tensorflow as tf\n"
            b"if True:\n"
            b"\tv = tf.Variable(  1.,\\\n"
            b"\t\tsynchronization = tf.VariableSynchronization . DEFAULT ,  # odd\n"
            b"\t\t\taggregation=tf.VariableAggregation.NONE,\n"
            b"\t)\n")
    assert _fix_bytes(tmp_path, data) == data.replace(b". DEFAULT", b". AUTO")


def test_file_mode_is_kept(tmp_path, capsys):
    target = tmp_path / "f.py"
    target.write_bytes(BAD.encode())
    target.chmod(0o750)
    main(["check", "--fix", "--exit-zero", str(target)])
    assert target.stat().st_mode & 0o777 == 0o750
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".syncadvisor-")]


def test_fix_from_a_subprocess_leaves_the_tree_parseable(tmp_path):
    for i in range(3):
        (tmp_path / f"m{i}.py").write_text(BAD)
    result = subprocess.run([sys.executable, "-m", "syncadvisor", "check", "--fix",
                             "--unsafe-fixes", str(tmp_path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    for i in range(3):
        cst.parse_module((tmp_path / f"m{i}.py").read_text())


# --- a fix never brings a finding --------------------------------------------------

KERAS3_MEAN = ("import keras\n"
               "import tensorflow as tf\n"
               "\n"
               "class Counter(keras.layers.Layer):\n"
               "    def build(self, input_shape):\n"
               "        self.count = self.add_weight(shape=(), dtype=\"int64\", aggregation=\"MEAN\")\n"
               "        self.seen = tf.Variable(0., synchronization=tf.VariableSynchronization.DEFAULT)\n")


def test_a_safe_fix_that_would_bring_a_finding_is_not_applied_and_said(tmp_path, capsys):
    """`aggregation="MEAN"` -> "mean" (TFS003's safe fix) on an int64 weight would make it
    TFS104, MEAN on an integer, which the user never saw: that fix is held back and said on
    stderr; the other fix of the file (DEFAULT -> AUTO) is kept."""
    target = tmp_path / "layer.py"
    target.write_text(KERAS3_MEAN)
    # (a project that settles Keras 3: where it is a guess, TFS003's fix is unsafe)
    (tmp_path / "requirements.txt").write_text("tensorflow>=2.16\n")
    code, out, err = _cli(["check", "--no-cache", "--fix", str(target)], capsys)
    assert target.read_text() == KERAS3_MEAN.replace("DEFAULT", "AUTO")
    assert code == 1 and "TFS003" in out and "TFS104" not in out
    assert (f"syncadvisor: warning: {target}:6:75: TFS003 fix not applied: it would introduce "
            "TFS104 (mean-on-integer) at 6:63") in err
    code, out, _ = _cli(["check", "--no-cache", str(target)], capsys)
    assert "TFS104" not in out and "TFS003" in out
    # --unsafe-fixes fixes TFS104 too: nothing new remains, so both fixes are kept
    code, out, err = _cli(["check", "--no-cache", "--fix", "--unsafe-fixes", str(target)], capsys)
    assert code == 0 and err == ""
    assert 'aggregation="only_first_replica"' in target.read_text()


def _fixture_runs():
    """The check fixtures as one run (they link across modules), and each fix fixture."""
    check_root = paths.FIXTURES / "check"
    yield pytest.param(sorted(p for p in check_root.rglob("*.py")), id="check")
    for path in INPUTS:
        yield pytest.param([path], id=f"fix/{path.name}")


def _texts(files):
    return {str(p): p.read_text() for p in files}


def _run_of(texts):
    from syncadvisor.config import Settings
    from syncadvisor.engine import Run

    run = Run(Settings(root=str(paths.FIXTURES)))
    for path, text in texts.items():
        run.add_text(path, text)
    return run


@pytest.mark.parametrize("files", list(_fixture_runs()))
@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
def test_fixing_the_fixtures_brings_no_new_finding(files, unsafe):
    texts = _texts(files)
    before = _run_of(texts).check().findings
    outcome = _run_of(texts).fix(unsafe)
    fixed = dict(texts, **outcome.files)
    after = _run_of(fixed).check().findings
    assert not new_findings(before, after)
    assert after == outcome.run.findings


# --- what "Fixed N" counts ----------------------------------------------------------

@pytest.mark.parametrize("files", list(_fixture_runs()))
@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
def test_the_fixed_count_is_what_the_report_before_called_fixable(files, unsafe):
    """The report's fixable counts (`[*]` for --fix; every fix with --unsafe-fixes) are what
    the fix then applies, less the fixes held back for bringing a finding; and found =
    fixed + remaining, as the user's findings are the only ones counted."""
    from syncadvisor.fixes import applicable

    texts = _texts(files)
    before = _run_of(texts).check().findings
    fixable = sum(applicable(f, unsafe) for f in before)
    outcome = _run_of(texts).fix(unsafe)
    assert outcome.applied == fixable - len(outcome.reverted)
    assert len(before) == outcome.applied + len(outcome.run.findings)


def test_fixed_counts_the_users_findings_not_the_fixes_of_findings_fixing_brought(
        tmp_path, capsys):
    """strategy_rules.py: 7 findings, all with unsafe fixes; the TFS201 fix (aggregation=SUM)
    brings a TFS301 that its own fix then removes. That is one finding fixed, not two."""
    target = tmp_path / "strategy_rules.py"
    target.write_text((ROOT / "strategy_rules.py").read_text())
    code, out, _ = _cli(["check", "--no-cache", str(target)], capsys)
    assert out.splitlines()[-1].startswith("7 findings") and "7 more with --unsafe-fixes" in out
    code, out, err = _cli(["check", "--no-cache", "--diff", "--unsafe-fixes", str(target)],
                          capsys)
    assert "Would fix 7 findings in 1 file." in err
    code, out, _ = _cli(["check", "--no-cache", "--fix", "--unsafe-fixes", str(target)], capsys)
    assert code == 0 and "Fixed 7 findings" in out


# --- rounds keep the run's linked projects ---------------------------------------------
# Every round, and every trial of a round's fixes one by one (`_Fixer._blame`), checks the
# whole run again; the projects are linked once and each check replaces only the files
# whose models changed (`_Fixer._linked`). The answers must be those of a run linked
# afresh at every check.

def _relinking(monkeypatch):
    """Make every check of the fixer link the run afresh (the reference)."""
    from syncadvisor import fixes
    from syncadvisor.engine.check import Linked

    def fresh(self, results):
        self.linked = Linked(r.model for r in results if r.model is not None)
        return self.linked

    monkeypatch.setattr(fixes._Fixer, "_linked", fresh)


@pytest.mark.parametrize("files", list(_fixture_runs()) + [
    pytest.param(sorted((paths.FIXTURES / "check" / "crossmodule").glob("*.py")),
                 id="crossmodule")])
@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
def test_rounds_on_kept_projects_fix_as_a_relinked_run_does(files, unsafe, monkeypatch):
    texts = _texts(files)
    kept = _run_of(texts).fix(unsafe)
    with monkeypatch.context() as patched:
        _relinking(patched)
        relinked = _run_of(texts).fix(unsafe)
    assert kept == relinked


CHAIN = ("import tensorflow as tf\n"
         "a = tf.Variable(0.0, synchronization=\"on_read\", aggregation=\"SUM\", trainable=False)\n"
         "b = tf.Variable(0.0, aggregation=tf.VariableAggregation.ONLY_FIRST_TOWER)\n"
         "c = tf.Variable(0.0, synchronization=\"on_write\")\n")


def test_rounds_and_trials_link_once_and_replace_only_the_files_they_change(monkeypatch):
    """Three files to fix among ten: the fix of `c` brings a TFS303 that a safe fix cannot
    take away, so rounds are done again without it and their fixes tried one by one. The
    first checks link afresh; then one project is linked, and each check replaces the
    files whose models differ from the last check's, no others. Texts checked before are
    not checked again."""
    from syncadvisor import fixes
    from syncadvisor.engine import check as check_module
    from syncadvisor.model.project import Project

    made, replaced = [], []
    init, replace = Project.__init__, Project.replace

    def counting_init(self, *args, **kwargs):
        made.append(self)
        init(self, *args, **kwargs)

    def counting_replace(self, path, fm):
        replaced.append(path)
        replace(self, path, fm)

    monkeypatch.setattr(Project, "__init__", counting_init)
    monkeypatch.setattr(Project, "replace", counting_replace)
    asked, checked = [], []
    ask, check = fixes._Fixer._check, fixes.check
    monkeypatch.setattr(fixes._Fixer, "_check", lambda self, results, texts: asked.append(
        frozenset(texts.items())) or ask(self, results, texts))
    monkeypatch.setattr(fixes, "check", lambda results, *args, **kwargs: checked.append(
        {r.path: r.model for r in results}) or check(results, *args, **kwargs))
    ruled = []  # (the check it was in, the file whose rules ran)
    rule_findings = check_module._rule_findings
    monkeypatch.setattr(check_module, "_rule_findings", lambda project, model, *args: (
        ruled.append((len(checked) - 1, model.path)) or rule_findings(project, model, *args)))
    texts = {f"/p/pkg/m{i}.py": CHAIN if i % 3 == 0 and i < 9 else
             f"import tensorflow as tf\nv{i} = tf.Variable({i}.0)\n" for i in range(10)}
    outcome = _run_of(texts).fix(False)
    assert sorted(outcome.files) == ["/p/pkg/m0.py", "/p/pkg/m3.py", "/p/pkg/m6.py"]
    assert len(outcome.reverted) == 3
    assert len(made) == fixes.TRACK_FROM + 1
    assert len(checked) == len(set(asked)) < len(asked)
    kept = checked[fixes.TRACK_FROM:]
    changed = [sorted(p for p in now if now[p] is not before[p])
               for before, now in zip(kept, kept[1:])]
    assert sorted(replaced) == sorted(p for paths_ in changed for p in paths_)
    assert all(len(c) <= 3 for c in changed)
    # The rules run on every file in the first check on kept projects, then only on the
    # files replaced since the check before (the files do not read each other).
    for number, paths_ in enumerate([list(kept[0])] + changed, start=fixes.TRACK_FROM):
        assert sorted(p for n, p in ruled if n == number) == sorted(paths_)


def test_a_creation_moved_into_a_tab_indented_scope_keeps_its_tabs():
    """TFS108's move writes the block's own indentation (found by the fuzzer: a tab
    block got one space, which does not parse), on lines Python numbers as it does
    (a form feed before the statement does not shift them)."""
    source = ("import tensorflow as tf\n\x0c\n"
              "strategy = tf.distribute.MirroredStrategy()\n"
              "model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])\n"
              "with strategy.scope():\n"
              "\tmodel.compile(optimizer='adam', loss='mse')\n"
              "model.fit([[1., 2.]], [[1.]])\n")
    fixed = fix_source(source, "train.py", unsafe=True)
    assert fixed.split("\n")[3:6] == [
        "with strategy.scope():",
        "\tmodel = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])",
        "\tmodel.compile(optimizer='adam', loss='mse')"]
