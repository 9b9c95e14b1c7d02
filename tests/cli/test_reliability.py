"""Reliability: inputs that a user (or their file system) gets wrong never crash the tool,
and `--fix` never loses a byte, even when killed.

What tests/cli/test_check.py and tests/fix/test_fixes.py already cover is not repeated here (a NUL
binary file, a latin-1 file, BOM + CRLF, CR and LF fixes byte for byte, five bad config
keys, `--select TFS999`, a missing file, an empty folder, file modes). This file adds the
rest of issue 8: every kind of bad input, each in a run where the other files are still
checked; a 100k-line file; symlink loops and unreadable files; a run killed during --fix;
two runs sharing a cache at once, and a corrupt cache.
"""
from __future__ import annotations

import ast
import json
import os
import pickle
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from syncadvisor.engine import Run
from syncadvisor import fixes, roundtrip
from syncadvisor.api import check_source, fix_source
from syncadvisor.cli import main
from syncadvisor.roundtrip import MAX_EXPRESSION_DEPTH, parse_hazard
from tests import paths

BAD = ("import tensorflow as tf\n"
       "v = tf.Variable(1., synchronization=tf.VariableSynchronization.DEFAULT)\n")
BAD_FIXED = BAD.replace("DEFAULT", "AUTO")
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    """Every test runs in its own folder, with its own cache (if any)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SYNCADVISOR_CACHE_DIR", raising=False)


def cli(*args, cwd=None, timeout=60, input=None):
    """`python -m syncadvisor ARGS`, as a user runs it; it must end by itself, traceback-free.

    (`python -m` puts the current folder first on sys.path: the test files are not named
    after standard modules, or `string.py` would replace `string` for the tool itself.)
    """
    result = subprocess.run([sys.executable, "-m", "syncadvisor", *args], capture_output=True,
                            text=True, cwd=cwd, timeout=timeout, input=input)
    assert result.returncode in (0, 1, 2), (result.returncode, result.stderr[-3000:])
    assert "Traceback" not in result.stdout + result.stderr, result.stderr[-3000:]
    return result


def run(args, capsys):
    """main() in this process: an exception escaping it is a traceback for the user."""
    code = main(args)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def lines_for(out: str, name: str):
    return [line for line in out.splitlines() if Path(line.split(":", 1)[0]).name == name]


# --- bad input files -----------------------------------------------------------------------

SYNTAX_ERRORS = {
    "unclosed.py": "import tensorflow as tf\nv = tf.Variable(1.0,\nw = 2\n",
    "indent.py": "import tensorflow as tf\ndef f():\nv = tf.Variable(1.0)\n",
    "dedent.py": "import tensorflow as tf\nif True:\n        v = tf.Variable(1.0)\n    w = 1\n",
    "tabs.py": "import tensorflow as tf\nif True:\n        v = tf.Variable(1.0)\n\tw = 1\n",
    "unterminated.py": "import tensorflow as tf\nv = tf.Variable(1.0)\ns = '''never closed\n\n",
    "py2.py": "import tensorflow as tf\nprint 'strategy'\n",
    "char.py": "import tensorflow as tf\nv = tf.Variable(1.0) \u20ac 2\n",
    "eof.py": "import tensorflow as tf\nwith tf.distribute.MirroredStrategy().scope():",
    "reserved.py": "import tensorflow as tf\nclass = tf.Variable(1.0)\n",
    "fstring.py": "import tensorflow as tf\nv = tf.Variable(1.0)\nx = f'{v!}'\n",
    "crlf.py": "import tensorflow as tf\r\nv = tf.Variable(1.0,\r\nw = 2\r\n",
}


def test_syntax_errors_are_findings_at_pythons_position_and_the_rest_is_checked(tmp_path):
    for name, text in SYNTAX_ERRORS.items():
        (tmp_path / name).write_bytes(text.encode())
    (tmp_path / "bad.py").write_text(BAD)
    result = cli("check", "--no-cache", ".", cwd=tmp_path)
    assert result.returncode == 1
    for name, text in SYNTAX_ERRORS.items():
        with pytest.raises(SyntaxError) as python:
            ast.parse(text)
        found = lines_for(result.stdout, name)
        assert len(found) == 1 and " TFS900 " in found[0], (name, result.stdout)
        line, column = found[0].split(":")[1:3]
        assert (int(line), int(column)) == (python.value.lineno, python.value.offset), \
            (name, found, python.value)
        assert python.value.msg in found[0]
    assert lines_for(result.stdout, "bad.py")[0].split()[1] == "TFS001"


@pytest.mark.parametrize("data", [b"", b"\n", b"   \n\n", b"\xef\xbb\xbf", b"# only a comment\n",
                                  b"\r\n\r\n", b"\x0c", b"\t"],
                         ids=["empty", "newline", "blank", "bom", "comment", "crlf", "ff", "tab"])
def test_empty_and_blank_files_give_nothing_and_are_never_rewritten(tmp_path, capsys, data):
    target = tmp_path / "empty.py"
    target.write_bytes(data)
    assert run(["check", "--no-cache", str(target)], capsys)[:2] == (0, "All checks passed.\n")
    assert run(["check", "--no-cache", "--fix", "--unsafe-fixes", str(target)], capsys)[0] == 0
    assert target.read_bytes() == data


@pytest.mark.parametrize("data", [
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR strategy",
    b"\xff\xfe" + "strategy = 1\n".encode("utf-16-le"),
    b"strategy = '\xff\xfe\x80'\n",
    b"strategy = 1\n" + b"x" * 9000 + b"\x00\x01",  # the NUL lies beyond the first 8 KiB
    bytes(random.Random(8).randrange(1, 256) for _ in range(4096)) + b"Variable",
], ids=["png", "utf16", "invalid-utf8", "late-nul", "random"])
def test_binary_files_named_py_are_findings_and_left_alone(tmp_path, capsys, data):
    (tmp_path / "blob.py").write_bytes(data)
    (tmp_path / "bad.py").write_text(BAD)
    code, out, _ = run(["check", "--no-cache", "--fix", str(tmp_path)], capsys)
    assert (tmp_path / "blob.py").read_bytes() == data
    assert (tmp_path / "bad.py").read_text() == BAD_FIXED
    assert code == 1 and [line.split()[1] for line in lines_for(out, "blob.py")] == ["TFS900"]


@pytest.mark.parametrize("data, why", [
    (b"# -*- coding: klingon -*-\nimport tensorflow as tf\n", "bad encoding declaration"),
    (b"# coding: utf-8\nv = 'caf\xe9'  # strategy\n", "cannot decode as utf-8"),
    (b"\xef\xbb\xbf# coding: latin-1\nstrategy = 1\n", "bad encoding declaration"),
    (b"#!/usr/bin/env python\n# vim: set fileencoding=ascii :\ns = '\xc3\xa9'  # strategy\n",
     "cannot decode as ascii"),
], ids=["unknown-codec", "not-utf8", "bom-and-latin1", "ascii"])
def test_wrong_encoding_declarations(tmp_path, capsys, data, why):
    (tmp_path / "enc.py").write_bytes(data)
    code, out, _ = run(["check", "--no-cache", str(tmp_path / "enc.py")], capsys)
    assert code == 1 and "TFS900" in out and why in out


def test_columns_count_characters_whatever_the_encoding(tmp_path, capsys):
    """Non-ASCII text before a finding on its line: the column is the same in UTF-8, in
    latin-1 and with a BOM, and the fix writes each file back in its own encoding."""
    line = "v = tf.Variable(1., name='d\u00e9j\u00e0', synchronization=tf.VariableSynchronization.DEFAULT)\n"
    variants = {
        "utf8.py": ("import tensorflow as tf\n" + line).encode("utf-8"),
        "bom.py": b"\xef\xbb\xbf" + ("import tensorflow as tf\r\n" + line.replace("\n", "\r\n")).encode(),
        "latin1.py": ("# -*- coding: latin-1 -*-\nimport tensorflow as tf\n" + line).encode("latin-1"),
    }
    for name, data in variants.items():
        (tmp_path / name).write_bytes(data)
    _, out, _ = run(["check", "--no-cache", "--format", "json", str(tmp_path)], capsys)
    columns = {Path(d["path"]).name: (d["column"], d["end_column"]) for d in json.loads(out)}
    assert len(set(columns.values())) == 1 and len(columns) == 3, columns
    run(["check", "--no-cache", "--fix", str(tmp_path)], capsys)
    for name, data in variants.items():
        assert (tmp_path / name).read_bytes() == data.replace(b"DEFAULT", b"AUTO")


@pytest.mark.parametrize("newline", ["\r\n", "\r"], ids=["crlf", "cr"])
def test_every_fixture_gives_the_same_findings_with_other_newlines_and_a_bom(tmp_path, newline):
    fixtures = paths.FIXTURES / "check"
    for path in sorted(fixtures.glob("*.py")):
        text = path.read_text()
        want = [(f.line, f.column, f.end_line, f.end_column, f.code) for f in check_source(text, path.name)]
        other = text.replace("\n", newline)
        got = [(f.line, f.column, f.end_line, f.end_column, f.code) for f in check_source(other, path.name)]
        assert got == want, path.name


def test_bom_crlf_file_whose_fix_adds_an_import(tmp_path, capsys):
    """The inserted `import tensorflow as tf` line takes the file's CRLF, after the BOM."""
    source = (paths.FIXTURES / "fix" / "no_tf_alias.py").read_text()
    want = (paths.FIXTURES / "fix" / "no_tf_alias.fixed.py").read_text()
    target = tmp_path / "a.py"
    target.write_bytes(b"\xef\xbb\xbf" + source.replace("\n", "\r\n").encode())
    run(["check", "--no-cache", "--fix", "--exit-zero", str(target)], capsys)
    assert target.read_bytes() == b"\xef\xbb\xbf" + want.replace("\n", "\r\n").encode()


def _notebook(cells, **top) -> bytes:
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, **top}).encode()


@pytest.mark.parametrize("data", [
    pytest.param(b"not json { strategy", id="not-json"),
    pytest.param(b'["strategy"]', id="a-list"),
    pytest.param(b'{"cells": "strategy"}', id="cells-not-a-list"),
    pytest.param(_notebook([{"cell_type": "code", "source": [1, 2]}], x="strategy"),
                 id="source-of-ints"),
    pytest.param(_notebook([{"cell_type": "code", "source": "strategy"}], metadata="python"),
                 id="metadata-a-string"),
    pytest.param(b'{"cells": [], "strategy": "caf\xe9"}', id="latin1-json"),
    pytest.param(_notebook(["strategy", 3, None]), id="cells-not-dicts"),
    pytest.param(_notebook([{"cell_type": "code"}], x="strategy"), id="no-source"),
    pytest.param(_notebook([{"cell_type": "code", "source": 5}], x="strategy"), id="source-an-int"),
])
def test_broken_notebooks_are_findings_or_nothing_never_a_traceback(tmp_path, capsys, data):
    (tmp_path / "nb.ipynb").write_bytes(data)
    (tmp_path / "bad.py").write_text(BAD)
    for extra in ([], ["--format", "json"], ["--fix"]):
        code, out, _ = run(["check", "--no-cache", "--jobs", "1", *extra, str(tmp_path)], capsys)
        if extra == ["--format", "json"]:
            codes = {d["code"] for d in json.loads(out) if Path(d["path"]).name == "nb.ipynb"}
        else:
            codes = {line.split()[1] for line in lines_for(out, "nb.ipynb")}
        assert codes <= {"TFS900"}, out
        assert code == (1 if codes or "--fix" not in extra else 0), out
    assert (tmp_path / "nb.ipynb").read_bytes() == data


# --- a huge file -----------------------------------------------------------------------------

def generated_module(n_lines: int) -> str:
    """A generated-looking module: mostly tables and helpers, a strategy block every 150 lines."""
    lines = ["import tensorflow as tf", "", "strategy = tf.distribute.MirroredStrategy()", ""]
    i = 0
    while len(lines) < n_lines - 10:
        i += 1
        if i % 50 == 0:
            lines += ["with strategy.scope():",
                      f"    acc{i} = tf.Variable(0.0, trainable=False, aggregation=tf.VariableAggregation.SUM)",
                      f"    bad{i} = tf.Variable(0, synchronization=tf.VariableSynchronization.DEFAULT)",
                      f"def step{i}(x):",
                      f"    acc{i}.assign_add(tf.reduce_sum(x))",
                      f"strategy.run(step{i}, args=(1.0,))"]
        else:
            lines += [f"TABLE_{i} = {{'name': 'entry{i}', 'size': {i}, 'scale': {i}.5}}",
                      f"def helper_{i}(a, b={i}):",
                      f"    return a * b + TABLE_{i}['size']"]
    lines += [f"# filler {k}" for k in range(n_lines - len(lines) - 2)]
    lines += ["with strategy.scope():",
              "    last = tf.Variable(0., synchronization=tf.VariableSynchronization.NONE)"]
    return "\n".join(lines) + "\n"


_MEASURE = ("import resource, sys\nfrom syncadvisor.cli import main\ncode = main(sys.argv[1:])\n"
            "sys.stderr.write('MAXRSS %d\\n' % resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
            "raise SystemExit(code)\n")


def _measured_check(path: Path):
    start = time.monotonic()
    result = subprocess.run([sys.executable, "-c", _MEASURE, "check", "--no-cache", "--jobs", "1",
                             "--format", "json", str(path)], capture_output=True, text=True,
                            timeout=600)
    seconds = time.monotonic() - start
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr[-2000:]
    rss = int(result.stderr.rsplit("MAXRSS ", 1)[1])  # KiB; bytes on macOS
    return json.loads(result.stdout), seconds, rss if sys.platform == "darwin" else rss * 1024


@pytest.mark.skipif(sys.platform == "win32", reason="resource.getrusage")
def test_a_100k_line_file_in_reasonable_time_and_memory(tmp_path):
    """Measured here (2 cores): 10k lines 2.6 s, 100k lines 40 s and 2.1 GB, nearly all of
    it libcst's parse and tree. The limits leave room for slow machines; the ratio catches
    anything quadratic in the file's size."""
    small, big = tmp_path / "small.py", tmp_path / "big.py"
    small.write_text(generated_module(10_000))
    big.write_text(generated_module(100_000))
    assert big.read_text().count("\n") == 100_000
    small_findings, small_seconds, small_rss = _measured_check(small)
    findings, seconds, rss = _measured_check(big)
    assert abs(len(findings) - 10 * len(small_findings)) <= 20, (len(findings), len(small_findings))
    assert findings[-1]["line"] == 100_000 and findings[-1]["code"] == "TFS101"
    assert seconds < 240, f"100k lines took {seconds:.0f} s"
    assert seconds < 25 * small_seconds, (seconds, small_seconds)
    assert rss < 4 * 1024 ** 3, f"100k lines took {rss / 1024 ** 3:.1f} GiB"


def test_fix_spelling_scans_the_module_names_once_per_file(monkeypatch):
    """Each fix that spells an enum member looped over all of the file's module-level names
    (functions, classes, imports): 8,000 findings next to 8,000 functions took 11.4 s
    instead of 7.9 s, growing with the square of the file. Counted, not timed: the
    lookups in the enum table stay one per name, however many fixes there are."""
    from syncadvisor.config import Settings
    from syncadvisor.model import tfapi

    class Counting(dict):
        lookups = 0

        def get(self, *args):
            Counting.lookups += 1
            return super().get(*args)

    monkeypatch.setattr(tfapi, "ENUM_CLASSES", Counting(tfapi.ENUM_CLASSES))
    finding = 'v{i} = tf.Variable(0.0, synchronization="on_read", aggregation=tf.VariableAggregation.SUM)\n'
    for n in (10, 300):
        text = "import tensorflow as tf\n" + "".join(finding.format(i=i) + f"def f{i}(): pass\n"
                                                    for i in range(n))
        settings = Settings()
        run = Run(settings)
        run.add_text("m.py", text)
        run.analyze()
        Counting.lookups = 0
        findings = run.check().findings
        assert len(findings) == n and all(f.fix is not None for f in findings)
        assert Counting.lookups <= 2 * n + 10, (n, Counting.lookups)  # v{i} and f{i}


# --- pathologically nested code -------------------------------------------------------------

DEEP = {
    "parens": "x = " + "(" * 5000 + "1" + ")" * 5000,
    "unary": "x = " + "-" * 20000 + "1",
    "sum": "x = " + " + ".join(["1"] * 5000),
    "and-chain": "x = " + " and ".join(["1"] * 9000),
    "lambdas": "x = " + "lambda: " * 8000 + "1",
    "subscripts": "x = a" + "[0]" * 5000,
}


@pytest.mark.parametrize("shape", sorted(DEEP))
def test_parse_hazard_flags_what_would_crash_or_stall_libcst(shape):
    """Each of these kills the process with SIGSEGV inside libcst's native parser, or keeps
    it busy for minutes (measured: 5,000 nested brackets segfault; 5,000 subscripts > 20 s)."""
    hazard = parse_hazard("import tensorflow as tf\n" + DEEP[shape] + "\n")
    assert hazard is not None and hazard[0] in (1, 2), hazard  # line 1: Python did not say


def test_parse_hazard_leaves_ordinary_code_alone():
    assert parse_hazard(BAD) is None
    assert parse_hazard("x = (\n") is None  # a plain syntax error: libcst reports it
    assert parse_hazard("x = " + " + ".join(["1"] * (MAX_EXPRESSION_DEPTH - 5)) + "\n") is None
    assert parse_hazard("x = [" + ", ".join(["[1]"] * 20000) + "]\n") is None  # long, flat
    assert parse_hazard("if a:\n pass\n" + "elif a:\n pass\n" * 500) is None
    assert not roundtrip.roundtrips("x = " + "(" * 3000 + ")" * 3000 + "\n")  # never reaches libcst


def test_deeply_nested_code_is_a_finding_not_a_segfault(tmp_path):
    (tmp_path / "deep.py").write_text("import tensorflow as tf\nv = tf.Variable("
                                      + "(" * 3000 + "1" + ")" * 3000 + ")\n")
    (tmp_path / "bad.py").write_text(BAD)
    result = subprocess.run([sys.executable, "-m", "syncadvisor", "check", "--no-cache", "."],
                            capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert result.returncode == 1, (result.returncode, result.stderr[-2000:])
    assert "deep.py:2:" in result.stdout and "TFS900" in result.stdout
    assert "bad.py:2:37: TFS001" in result.stdout


def test_code_only_libcst_would_choke_on_is_checked_and_left_unfixed(tmp_path):
    """An `and` chain of 9,000 operands kills libcst's parser, not Python's, whose tree
    keeps it flat: the file is checked from that tree. libcst checks every fix, so such
    a file is not fixed, and says why; the run survives."""
    chain = "x = " + " and ".join(["a"] * 9000) + "\n"
    (tmp_path / "clean.py").write_text("import tensorflow as tf\nv = tf.Variable(1.0)\n" + chain)
    found = 'import tensorflow as tf\nv = tf.Variable(1.0, synchronization="on_read")\n' + chain
    (tmp_path / "found.py").write_text(found)
    run = [sys.executable, "-m", "syncadvisor", "check", "--no-cache"]
    clean = subprocess.run(run + ["clean.py"], capture_output=True, text=True, cwd=tmp_path,
                           timeout=120)
    assert clean.returncode == 0 and "All checks passed" in clean.stdout, clean.stdout
    report = subprocess.run(run + ["found.py"], capture_output=True, text=True, cwd=tmp_path,
                            timeout=120)
    assert report.returncode == 1, (report.returncode, report.stderr[-2000:])
    assert "found.py:2:38: TFS002 [*]" in report.stdout, report.stdout
    fixing = subprocess.run(run + ["--fix", "found.py"], capture_output=True, text=True,
                            cwd=tmp_path, timeout=120)
    assert fixing.returncode == 1 and "found.py:2:38: TFS002" in fixing.stdout
    assert "not fixed, left unchanged: libcst could crash on it" in fixing.stderr
    assert "an `and`/`or` chain" in fixing.stderr
    assert (tmp_path / "found.py").read_text() == found


def test_a_syntax_error_prints_no_python_warnings(tmp_path):
    (tmp_path / "warn.py").write_text("import tensorflow as tf\nx = '\\d'\ny = 1if x else 2\n"
                                      "v = tf.Variable(1,\n")
    result = subprocess.run([sys.executable, "-W", "default", "-m", "syncadvisor", "check",
                             "--no-cache", "warn.py"], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 1 and "TFS900" in result.stdout
    assert "Warning" not in result.stderr, result.stderr


# --- the file system ---------------------------------------------------------------------------

@pytest.mark.skipif(not hasattr(os, "symlink") or not hasattr(os, "mkfifo"), reason="POSIX only")
def test_symlink_loops_dangling_links_and_fifos_in_a_folder(tmp_path):
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "bad.py").write_text(BAD)
    (tmp_path / "pkg" / "sub" / "also.py").write_text(BAD)
    os.symlink(".", tmp_path / "pkg" / "loop")  # pkg/loop/loop/loop/...
    os.symlink("..", tmp_path / "pkg" / "sub" / "up")  # pkg/sub/up/sub/up/...
    os.symlink("self.py", tmp_path / "pkg" / "self.py")  # a file link to itself
    os.symlink("nowhere.py", tmp_path / "pkg" / "dangling.py")
    os.mkfifo(tmp_path / "pkg" / "pipe.py")  # reading it would block for ever
    result = cli("check", "--no-cache", "pkg", cwd=tmp_path, timeout=60)
    assert result.returncode == 1
    reported = sorted(line.split(":")[0] for line in result.stdout.splitlines() if ": TFS" in line)
    assert reported == ["pkg/bad.py", "pkg/dangling.py", "pkg/self.py", "pkg/sub/also.py"], \
        result.stdout
    assert "Too many levels of symbolic links" in result.stdout
    # Named through the loop, a file is still just that file.
    assert cli("check", "--no-cache", "pkg/loop/loop/sub/up/bad.py", cwd=tmp_path).returncode == 1


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="POSIX only")
def test_files_named_one_by_one_resolve_as_realpath_does(tmp_path, monkeypatch):
    """Folders are resolved once per run (files._real_file), to the same paths as
    os.path.realpath, through linked folders, linked files, `..` and dangling links."""
    from syncadvisor.files import _real_file

    (tmp_path / "real" / "sub").mkdir(parents=True)
    (tmp_path / "real" / "sub" / "a.py").write_text(BAD)
    os.symlink("real", tmp_path / "lnk")
    os.symlink("sub/a.py", tmp_path / "real" / "b.py")
    os.symlink("..", tmp_path / "real" / "up")
    os.symlink("nowhere.py", tmp_path / "dangling.py")
    monkeypatch.chdir(tmp_path)
    names = ["real/sub/a.py", "lnk/sub/a.py", "lnk/sub/../sub/a.py", "real/b.py", "lnk/b.py",
             "./real/sub/a.py", "lnk/./sub/a.py", "real/up/lnk/sub/a.py", "lnk/../real/sub/a.py",
             "dangling.py", "missing.py", "nodir/x.py", "a.py", str(tmp_path / "lnk/sub/a.py")]
    shared: dict = {}
    for name in names:
        assert _real_file(name, shared) == _real_file(name, {}) == os.path.realpath(name), name
    # The same file named five ways is checked, and reported, once.
    result = cli("check", "--no-cache", "real/sub/a.py", "lnk/sub/a.py", "real/b.py",
                 "lnk/sub/../sub/a.py", "real/up/lnk/sub/a.py", cwd=tmp_path)
    assert [line.split(":")[0] for line in result.stdout.splitlines() if ": TFS" in line] == \
        ["real/sub/a.py"], result.stdout


def test_unreadable_file_is_a_finding_and_the_rest_is_checked(tmp_path, capsys, monkeypatch):
    (tmp_path / "secret.py").write_text(BAD)
    (tmp_path / "bad.py").write_text(BAD)
    if IS_ROOT:  # root reads anything: make the file system say no
        import builtins

        import syncadvisor.files as files

        def guarded_open(path, *args, **kwargs):
            if str(path).endswith("secret.py"):
                raise PermissionError(13, "Permission denied", str(path))
            return builtins.open(path, *args, **kwargs)

        monkeypatch.setattr(files, "open", guarded_open, raising=False)
    else:
        (tmp_path / "secret.py").chmod(0)
    code, out, _ = run(["check", "--no-cache", "--fix", str(tmp_path)], capsys)
    assert code == 1
    assert lines_for(out, "secret.py") == [f"{tmp_path / 'secret.py'}:1:1: TFS900 error: cannot "
                                          f"read: Permission denied"]
    assert (tmp_path / "bad.py").read_text() == BAD_FIXED
    (tmp_path / "secret.py").chmod(0o644)
    assert (tmp_path / "secret.py").read_text() == BAD


def test_missing_paths_are_tfs900_findings_and_the_rest_is_checked(tmp_path, capsys):
    """As ruff's E902: a path that is not there is a finding (exit 1), not bad usage."""
    (tmp_path / "bad.py").write_text(BAD)
    code, out, err = run(["check", "--no-cache", "--output-format", "concise", "bad.py",
                          "gone/", "also_gone.py"], capsys)
    assert code == 1 and err == ""
    assert lines_for(out, "gone") == ["gone:1:1: TFS900 error: no such file or directory"]
    assert lines_for(out, "also_gone.py") == \
        ["also_gone.py:1:1: TFS900 error: no such file or directory"]
    assert lines_for(out, "bad.py")
    code, out, err = run(["check", "--no-cache", "--output-format", "json", "gone.py"], capsys)
    [finding] = json.loads(out)
    assert code == 1 and "no Python files" not in err
    assert (finding["path"], finding["code"], finding["line"], finding["column"]) == \
        ("gone.py", "TFS900", 1, 1)
    assert run(["check", "--no-cache", "--exit-zero", "gone.py"], capsys)[0] == 0
    # --fix fixes what is there and reports what is not.
    code, out, _ = run(["check", "--no-cache", "--fix", "bad.py", "gone.py"], capsys)
    assert code == 1 and (tmp_path / "bad.py").read_text() == BAD_FIXED
    assert "gone.py:1:1: TFS900" in out
    code, _, err = run(["check", "--no-cache", "--config", "nope.toml", "bad.py"], capsys)
    assert code == 2 and "nope.toml" in err
    code, _, err = run(["check", "--no-cache", "--config", str(tmp_path), "bad.py"], capsys)
    assert code == 2 and str(tmp_path) in err


@pytest.mark.parametrize("table, key", [
    ("[tool]\nsyncadvisor = 1\n", "[tool.syncadvisor] must be a table"),
    ('[tool.syncadvisor]\nselect = [1]\n', "select"),
    ('[tool.syncadvisor]\nexclude = 3\n', "exclude"),
    ('[tool.syncadvisor]\nper-file-ignores = ["tests/*"]\n', "per-file-ignores"),
    ('[tool.syncadvisor]\nper-file-ignores = {"tests/*" = ["TFS9999"]}\n', "TFS9999"),
    ('[tool.syncadvisor]\nextend-select = ["XYZ"]\n', "XYZ"),
    ('[tool.syncadvisor]\nkeras = "4"\nassume-strategy = "mirrored"\n', "keras"),
    ('[tool.syncadvisor]\ntarget-tensorflow = "latest"\n', "target-tensorflow"),
    ('[tool.syncadvisor]\n[tool.syncadvisor.select]\nx = 1\n', "select"),
])
def test_more_bad_configs_are_exit_2_naming_the_key(tmp_path, capsys, table, key):
    (tmp_path / "pyproject.toml").write_text(table)
    (tmp_path / "bad.py").write_text(BAD)
    code, out, err = run(["check", "--no-cache", "bad.py"], capsys)
    assert code == 2 and key in err and out == "", err


def test_a_pyproject_that_is_not_utf8_is_exit_2(tmp_path, capsys):
    (tmp_path / "pyproject.toml").write_bytes(b'[tool.syncadvisor]\nselect = ["\xff"]\n')
    (tmp_path / "bad.py").write_text(BAD)
    code, _, err = run(["check", "--no-cache", "bad.py"], capsys)
    assert code == 2 and "pyproject.toml" in err


@pytest.mark.parametrize("option", ["--select", "--ignore", "--extend-select"])
@pytest.mark.parametrize("value", ["TFS999", "XYZ", "TFS1,NOPE", "tfs-1"])
def test_unknown_codes_on_the_command_line_are_exit_2(tmp_path, capsys, option, value):
    (tmp_path / "bad.py").write_text(BAD)
    code, out, err = run(["check", "--no-cache", option, value, "bad.py"], capsys)
    assert code == 2 and out == "" and "unknown rule code" in err


def test_no_files_as_pre_commit_sends_them(tmp_path, capsys):
    """pre-commit runs a hook with no file names when none match (`always_run`), or with
    names that the config then excludes: nothing to check is success."""
    code, out, err = run(["check"], capsys)
    assert code == 0 and "no Python files" in err
    assert run(["check", "--fix"], capsys)[0] == 0
    (tmp_path / "pyproject.toml").write_text('[tool.syncadvisor]\nexclude = ["gen_*.py"]\n')
    (tmp_path / "gen_a.py").write_text(BAD)
    assert run(["check", "gen_a.py"], capsys)[0] == 0
    assert run(["check", "--fix", "gen_a.py"], capsys)[0] == 0
    assert (tmp_path / "gen_a.py").read_text() == BAD


# --- internal errors ---------------------------------------------------------------------------

def _boom_for(name: str, original):
    def boom(*args, **kwargs):
        if any(isinstance(a, str) and a.endswith(name) for a in args):
            raise KeyError("synthetic bug")
        return original(*args, **kwargs)
    return boom


@pytest.mark.parametrize("where", ["model", "rule"])
def test_an_internal_error_is_reported_for_its_file_and_the_run_goes_on(tmp_path, capsys,
                                                                         monkeypatch, where):
    import syncadvisor.model.builder as builder
    from syncadvisor.rules.tfs001_unknown_enum_member import UnknownEnumMember

    (tmp_path / "victim.py").write_text(BAD)
    (tmp_path / "bad.py").write_text(BAD)
    if where == "model":
        monkeypatch.setattr(builder, "build_model",
                            _boom_for("victim.py", builder.build_model))
    else:
        original = UnknownEnumMember.check

        def check(self, ctx):
            if ctx.path.endswith("victim.py"):
                raise KeyError("synthetic bug")
            return original(self, ctx)

        monkeypatch.setattr(UnknownEnumMember, "check", check)
    code, out, _ = run(["check", "--no-cache", "--format", "json", str(tmp_path)], capsys)
    found = {(Path(d["path"]).name, d["code"]): d["message"] for d in json.loads(out)}
    assert code == 2 and set(found) == {("victim.py", "TFS900"), ("bad.py", "TFS001")}
    assert "internal error" in found["victim.py", "TFS900"]
    assert "KeyError" in found["victim.py", "TFS900"] and "please report" in found["victim.py", "TFS900"]
    code, out, _ = run(["check", "--no-cache", "--fix", str(tmp_path)], capsys)
    assert code == 2 and f"{tmp_path / 'victim.py'}:1:1: TFS900 error: internal error" in out
    assert (tmp_path / "bad.py").read_text() == BAD_FIXED  # the other file is still fixed
    assert (tmp_path / "victim.py").read_text() == BAD


def test_a_fix_that_cannot_be_written_leaves_that_file_and_writes_the_others(tmp_path,
                                                                            monkeypatch):
    from syncadvisor.files import SourceText

    real_open = os.open

    def guarded_open(path, *args, **kwargs):  # a folder the user may not write to
        if Path(path).parent.name == "readonly":
            raise PermissionError(13, "Permission denied")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", guarded_open)
    (tmp_path / "readonly").mkdir()
    stuck, fine = tmp_path / "readonly" / "a.py", tmp_path / "b.py"
    for path in (stuck, fine):
        path.write_text(BAD)
    source = SourceText(BAD, "utf-8", False)
    with pytest.raises(fixes.WriteError) as failure:
        fixes.write_fixed({str(stuck): BAD_FIXED, str(fine): BAD_FIXED},
                          {str(stuck): source, str(fine): source})
    assert list(failure.value.failures) == [str(stuck)] and "Permission denied" in str(failure.value)
    assert stuck.read_text() == BAD and fine.read_text() == BAD_FIXED


def test_a_fix_that_cannot_be_written_is_exit_2_without_a_traceback(tmp_path, capsys, monkeypatch):
    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(fixes, "write_atomically", refuse)
    (tmp_path / "a.py").write_text(BAD)
    code, _, err = run(["check", "--no-cache", "--fix", "a.py"], capsys)
    assert code == 2 and "a.py" in err and "Permission denied" in err


def test_fix_writes_through_a_symlink(tmp_path, capsys):
    """It replaced the link with a regular file and left the real file unfixed."""
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "a.py").write_text(BAD)
    os.symlink("real/a.py", tmp_path / "link.py")
    run(["check", "--no-cache", "--fix", "link.py"], capsys)
    assert os.path.islink(tmp_path / "link.py")
    assert (tmp_path / "real" / "a.py").read_text() == BAD_FIXED


@pytest.mark.parametrize("separator", ["\x0c", "\u2028", "\x1c", "\x85"])
def test_diff_of_a_file_with_odd_line_separators_applies(tmp_path, capsys, separator):
    """str.splitlines cut such a line in two, and the diff said "No newline at end of file"
    in the middle of the file: `patch` refused it."""
    text = f"import tensorflow as tf\n# a{separator}b\n" + BAD.splitlines(True)[1] + "w = 1\n"
    (tmp_path / "a.py").write_text(text, encoding="utf-8")
    code, out, _ = run(["check", "--no-cache", "--diff", "a.py"], capsys)
    assert code == 1 and "No newline" not in out
    assert [row for row in out.splitlines() if row[:1] in "+-" and row[:3] not in ("---", "+++")] \
        == ["-" + BAD.splitlines()[1], "+" + BAD_FIXED.splitlines()[1]]


# --- interruption -----------------------------------------------------------------------------

TEMPLATE = """import tensorflow as tf

strategy = tf.distribute.MirroredStrategy()
with strategy.scope():
    a = tf.Variable(0.0, synchronization=tf.VariableSynchronization.DEFAULT)
    b = tf.Variable(0.0, synchronization="on_read", aggregation="sum", trainable=False)
    c = tf.Variable(1, aggregation=tf.VariableAggregation.ONLY_FIRST_TOWER)
PAYLOAD = {payload!r}
# file {k}
"""


def _tree(root: Path, files: int):
    root.mkdir()
    old, new = {}, {}
    marked = TEMPLATE.format(k="KMARK", payload="PAYLOADMARK")
    marked_fixed = fix_source(marked, "m.py")
    assert marked_fixed != marked
    for k in range(files):
        payload = random.Random(k).randbytes(5_000).hex()  # distinct, 10 kB
        name = f"m{k:03d}.py"
        for table, text in ((old, marked), (new, marked_fixed)):
            table[name] = text.replace("KMARK", str(k)).replace("PAYLOADMARK", payload).encode()
        (root / name).write_bytes(old[name])
    return old, new


def _interrupt_fix(root: Path, sig: int):
    """Start `check --fix` on the tree; send `sig` as soon as the first file is replaced.

    Files are written in path order, so watching the first one alone (one stat a turn,
    not a scan of the folder, which took longer than writing all 200 files on a busy
    machine) lands the signal while the others are still being written."""
    first = str(min(root.glob("*.py")))
    before = os.stat(first).st_ino
    # As a terminal would: a test run started in the background by a shell without job
    # control inherits SIGINT ignored, and Python then leaves it ignored (the run was
    # never interrupted, however early the signal came).
    process = subprocess.Popen([sys.executable, "-m", "syncadvisor", "check", "--no-cache",
                                "--fix", "--exit-zero", str(root)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while process.poll() is None and time.monotonic() < deadline:
        if os.stat(first).st_ino != before:  # replaced: renamed over by its fixed text
            process.send_signal(sig)
            break
    _, err = process.communicate(timeout=60)
    return process.returncode, err


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT, signal.SIGTERM],
                         ids=["SIGKILL", "SIGINT", "SIGTERM"])
def test_a_run_killed_during_fix_leaves_every_file_old_or_new(tmp_path, sig):
    for attempt in range(5):  # the kill must land while files are being written
        root = tmp_path / f"tree{attempt}"
        old, new = _tree(root, 200)
        code, err = _interrupt_fix(root, sig)
        state = {}
        for name in old:
            data = (root / name).read_bytes()
            assert data in (old[name], new[name]), f"{name} is partial ({len(data)} bytes)"
            state[name] = data == new[name]
        if 0 < sum(state.values()) < len(state):
            break
    else:
        pytest.fail("the run was never interrupted while writing")
    assert code != 0 and "Traceback" not in err
    leftovers = sorted(p.name for p in root.iterdir() if not p.name.endswith(".py"))
    if sig == signal.SIGINT:  # a clean stop removes its temporary file
        assert leftovers == [] and "interrupted" in err
    else:  # only a temporary file may remain, and it is never checked nor fixed
        assert all(n.startswith(".syncadvisor-") and n.endswith(".tmp") for n in leftovers)
    # Running again finishes the job.
    cli("check", "--no-cache", "--fix", "--exit-zero", str(root))
    assert all((root / name).read_bytes() == new[name] for name in new)


# --- a shared cache ---------------------------------------------------------------------------

def _has_cache() -> bool:
    help_text = subprocess.run([sys.executable, "-m", "syncadvisor", "check", "--help"],
                               capture_output=True, text=True).stdout
    return "--no-cache" in help_text


needs_cache = pytest.mark.skipif(not _has_cache(), reason="`syncadvisor check` has no cache "
                                 "yet (no --no-cache option): these tests run once it lands")


@pytest.fixture
def cached_project(tmp_path):
    """A project with its own pyproject.toml: the cache goes to .syncadvisor_cache/ beside it."""
    import shutil

    shutil.copytree(paths.FIXTURES / "check", tmp_path / "src")
    for k in range(40):
        (tmp_path / "src" / f"extra{k}.py").write_text(BAD + f"w{k} = tf.Variable({k})\n")
    (tmp_path / "pyproject.toml").write_text("[tool.syncadvisor]\n")
    return tmp_path


def _check_json(root: Path, *extra):
    result = cli("check", "--format", "json", "--exit-zero", *extra, "src", cwd=root, timeout=120)
    return json.loads(result.stdout)


def _at_once(root: Path, runs: int = 2):
    processes = [subprocess.Popen([sys.executable, "-m", "syncadvisor", "check", "--format",
                                   "json", "--exit-zero", "src"], cwd=root,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(runs)]
    outputs = []
    for process in processes:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0 and "Traceback" not in err, err
        outputs.append(json.loads(out))
    return outputs


@needs_cache
def test_two_runs_sharing_a_cache_at_once_agree_with_an_uncached_run(cached_project):
    expected = _check_json(cached_project, "--no-cache")
    assert not (cached_project / ".syncadvisor_cache").exists()
    for _ in range(2):  # cold, then warm
        assert _at_once(cached_project, 3) == [expected] * 3
    assert (cached_project / ".syncadvisor_cache").is_dir()
    edited = cached_project / "src" / "extra7.py"
    edited.write_text(edited.read_text().replace("DEFAULT", "AUTO"))
    expected = _check_json(cached_project, "--no-cache")
    assert _at_once(cached_project, 2) == [expected] * 2
    assert _check_json(cached_project) == expected


def _corrupt_everything(folder: Path) -> int:
    """Every file under the cache folder becomes garbage of one kind or another."""
    rng = random.Random(0)
    kinds = [b"", b"\x80\x04", b"not a pickle at all", pickle.dumps({"files": "?", "findings": 1}),
             pickle.dumps(["a", "list"]), bytes(rng.randrange(256) for _ in range(512))]
    count = 0
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            choice = count % (len(kinds) + 1)
            path.write_bytes(data[: len(data) // 2] if choice == len(kinds) else kinds[choice])
            count += 1
    return count


@needs_cache
def test_a_corrupt_cache_is_ignored(cached_project):
    expected = _check_json(cached_project, "--no-cache")
    assert _check_json(cached_project) == expected
    assert _corrupt_everything(cached_project / ".syncadvisor_cache") > 10
    assert _check_json(cached_project) == expected
    assert _at_once(cached_project, 2) == [expected] * 2
    assert _check_json(cached_project) == expected


@needs_cache
def test_a_corrupt_cache_is_rebuilt(cached_project, monkeypatch, capsys, parsed):
    monkeypatch.chdir(cached_project)
    args = ["check", "--format", "json", "--exit-zero", "--jobs", "1", "src"]
    run(args, capsys)
    _corrupt_everything(cached_project / ".syncadvisor_cache")
    run(args, capsys)  # reads garbage, parses everything, must write good entries back
    edited = cached_project / "src" / "extra3.py"
    edited.write_text(edited.read_text() + "# edited\n")
    parsed.clear()
    run(args, capsys)
    assert set(parsed) == {"extra3.py"}


@needs_cache
def test_a_cache_folder_that_cannot_be_used_is_no_cache(cached_project):
    expected = _check_json(cached_project, "--no-cache")
    (cached_project / ".syncadvisor_cache").write_text("a file where the folder should be")
    assert _check_json(cached_project) == expected
    assert _at_once(cached_project, 2) == [expected] * 2


def test_a_fixed_notebook_cell_keeps_its_form_feeds(tmp_path, capsys):
    """A form feed (or \\u2028) in a code cell came back as a newline once the cell was fixed."""
    source = ["import tensorflow as tf\n", "# page\x0cbreak\n", BAD.splitlines(True)[1]]
    notebook = {"cells": [{"cell_type": "code", "execution_count": None, "metadata": {},
                           "outputs": [], "source": source}],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "a.ipynb"
    path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    run(["check", "--no-cache", "--fix", str(path)], capsys)
    fixed = "".join(json.loads(path.read_text(encoding="utf-8"))["cells"][0]["source"])
    assert fixed == "".join(source).replace("DEFAULT", "AUTO")
