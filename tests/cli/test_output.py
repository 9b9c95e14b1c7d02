"""The command's output options: -V, --quiet, --output-file, --show-fixes."""
from __future__ import annotations

import subprocess
import sys

import pytest

from syncadvisor import __version__
from syncadvisor.cli import main
from tests import paths
from tests.samples import BAD


@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_version(flag, capsys):
    with pytest.raises(SystemExit) as exit:
        main([flag])
    assert exit.value.code == 0
    assert capsys.readouterr().out == f"syncadvisor {__version__}\n"


def test_version_from_the_command_line():
    result = subprocess.run([sys.executable, "-m", "syncadvisor", "-V"], capture_output=True,
                            text=True, cwd=paths.REPO)
    assert result.returncode == 0 and result.stdout == f"syncadvisor {__version__}\n"


FIXABLE = ("import tensorflow as tf\n"
           "w = tf.Variable(1., synchronization=tf.VariableSynchronization.DEFAULT)\n")


def _check(args, capsys):
    code = main(["check", "--no-cache", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("quiet", ["-q", "--quiet"])
def test_quiet_prints_the_findings_and_no_summary(quiet, tmp_path, capsys):
    (tmp_path / "bad.py").write_text(BAD)
    target = str(tmp_path / "bad.py")
    _, loud, _ = _check(["--format", "concise", target], capsys)
    code, out, err = _check(["--format", "concise", quiet, target], capsys)
    assert code == 1 and err == ""
    assert out.splitlines() == loud.splitlines()[:-1]  # without the summary
    _, loud, _ = _check([target], capsys)
    _, out, _ = _check([quiet, target], capsys)
    assert out == loud[:loud.rindex("2 findings")]  # full: every block, no summary
    _, out, _ = _check([quiet, "--statistics", target], capsys)
    assert out.splitlines() == ["     1  TFS001  [*] unknown-enum-member",
                                "     1  TFS101      none-under-strategy"]


def test_quiet_says_nothing_when_all_is_well(tmp_path, capsys):
    (tmp_path / "good.py").write_text("import tensorflow as tf\nv = tf.Variable(1.)\n")
    assert _check(["-q", str(tmp_path / "good.py")], capsys) == (0, "", "")
    (tmp_path / "empty").mkdir()
    assert _check(["-q", str(tmp_path / "empty")], capsys) == (0, "", "")  # no warning


def test_quiet_fix_prints_nothing_on_success_and_what_remains_otherwise(tmp_path, capsys):
    target = tmp_path / "fixable.py"
    target.write_text(FIXABLE)
    assert _check(["-q", "--fix", str(target)], capsys) == (0, "", "")
    assert "AUTO" in target.read_text()
    target.write_text(BAD)
    code, out, err = _check(["-q", "--fix", "--format", "concise", str(target)], capsys)
    assert code == 1 and err == "" and len(out.splitlines()) == 1 and "TFS101" in out


def test_quiet_diff_prints_the_diff_only(tmp_path, capsys):
    target = tmp_path / "fixable.py"
    target.write_text(FIXABLE)
    code, out, err = _check(["-q", "--diff", str(target)], capsys)
    assert code == 1 and out.startswith("---") and err == ""


@pytest.mark.parametrize("fmt", ["full", "concise", "json", "sarif", "github"])
def test_output_file_holds_what_standard_output_would(fmt, tmp_path, capsys, monkeypatch):
    (tmp_path / "bad.py").write_text(BAD)
    target = str(tmp_path / "bad.py")
    code, expected, _ = _check(["--format", fmt, target], capsys)
    monkeypatch.setenv("FORCE_COLOR", "1")  # a file never has colour
    report = tmp_path / "reports" / "deep" / f"report.{fmt}"
    for option in ("-o", "--output-file"):
        assert _check(["--format", fmt, option, str(report), target], capsys) == (code, "", "")
        assert report.read_bytes() == expected.encode("utf-8")


def test_output_file_with_statistics_and_quiet(tmp_path, capsys):
    (tmp_path / "bad.py").write_text(BAD)
    report = tmp_path / "stats.txt"
    _check(["-q", "--statistics", "-o", str(report), str(tmp_path / "bad.py")], capsys)
    assert report.read_text().splitlines() == ["     1  TFS001  [*] unknown-enum-member",
                                               "     1  TFS101      none-under-strategy"]


def test_output_file_from_standard_input_with_fix(tmp_path, capsys, monkeypatch):
    import io

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(BAD.encode())))
    report = tmp_path / "report.txt"
    code, out, err = _check(["--fix", "--format", "concise", "-o", str(report), "-",
                             "--stdin-filename", "bad.py"], capsys)
    assert code == 1 and "VariableSynchronization.AUTO" in out and err == ""
    assert report.read_text().startswith("bad.py:4:25: TFS101")


def test_an_output_file_that_cannot_be_written_is_a_usage_error(tmp_path, capsys):
    (tmp_path / "bad.py").write_text(BAD)
    (tmp_path / "file").write_text("")
    code, out, err = _check(["-o", str(tmp_path / "file" / "report.txt"),
                             str(tmp_path / "bad.py")], capsys)
    assert code == 2 and out == "" and "cannot write the report to" in err


def test_show_fixes_lists_what_fix_would_apply(tmp_path, capsys):
    (tmp_path / "bad.py").write_text(BAD)
    (tmp_path / "fixable.py").write_text(FIXABLE)
    a, b = str(tmp_path / "bad.py"), str(tmp_path / "fixable.py")
    code, out, _ = _check(["--show-fixes", "--format", "concise", str(tmp_path)], capsys)
    assert code == 1
    assert out.split("\n\n")[1:] == [
        f"Would fix 2 findings:\n- {a}:\n    1 \u00d7 TFS001 (unknown-enum-member)\n"
        f"- {b}:\n    1 \u00d7 TFS001 (unknown-enum-member)",
        "3 findings (3 errors), 2 fixable with --fix, 1 more with --unsafe-fixes.\n"]
    _, out, _ = _check(["--show-fixes", "--unsafe-fixes", str(tmp_path)], capsys)
    assert f"Would fix 3 findings:\n- {a}:\n    1 \u00d7 TFS001 (unknown-enum-member)\n" \
           f"    1 \u00d7 TFS101 (none-under-strategy)\n" in out
    # full: after the blocks, before the summary
    assert out.index("Would fix") > out.rindex("help:")


def test_show_fixes_lists_what_fix_applied(tmp_path, capsys):
    (tmp_path / "bad.py").write_text(BAD)
    (tmp_path / "good.py").write_text("import tensorflow as tf\nv = tf.Variable(1.)\n")
    a = str(tmp_path / "bad.py")
    code, out, _ = _check(["--fix", "--show-fixes", "--format", "concise", str(tmp_path)],
                          capsys)
    assert code == 1
    assert f"\n\nFixed 1 finding:\n- {a}:\n    1 \u00d7 TFS001 (unknown-enum-member)\n\n" in out
    code, out, _ = _check(["--fix", "--unsafe-fixes", "--show-fixes", str(tmp_path)], capsys)
    assert code == 0 and out == (
        f"Fixed 1 finding:\n- {a}:\n    1 \u00d7 TFS101 (none-under-strategy)\n\n"
        "Fixed 1 finding; nothing remains.\n")
    code, out, _ = _check(["--fix", "--show-fixes", str(tmp_path)], capsys)
    assert code == 0 and out == "All checks passed.\n"  # nothing fixed: no list


def test_show_fixes_stays_out_of_quiet_and_machine_formats(tmp_path, capsys):
    import json

    (tmp_path / "bad.py").write_text(BAD)
    _, out, _ = _check(["--show-fixes", "-q", "--format", "concise", str(tmp_path)], capsys)
    assert len(out.splitlines()) == 2
    _, out, _ = _check(["--show-fixes", "--format", "json", str(tmp_path)], capsys)
    assert len(json.loads(out)) == 2
