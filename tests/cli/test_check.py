"""The `syncadvisor` command as a user meets it: exit codes, formats, config, suppression."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from syncadvisor.cli import main
from tests import paths
from tests.samples import BAD

GOOD = "import tensorflow as tf\nv = tf.Variable(1.)\n"


def run(args, capsys, cwd=None):
    old = os.getcwd()
    if cwd:
        os.chdir(cwd)
    try:
        code = main(args)
    finally:
        os.chdir(old)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def project(tmp_path):
    (tmp_path / "bad.py").write_text(BAD)
    (tmp_path / "good.py").write_text(GOOD)
    return tmp_path


def test_exit_codes(project, capsys):
    assert run(["check", str(project / "good.py")], capsys)[0] == 0
    assert run(["check", str(project / "bad.py")], capsys)[0] == 1
    assert run(["check", "--exit-zero", str(project / "bad.py")], capsys)[0] == 0
    code, out, _ = run(["check", str(project / "missing.py")], capsys)
    assert code == 1 and "missing.py:1:1: TFS900 error: no such file or directory" in out


def test_a_run_in_a_process_that_goes_on_keeps_nothing(project, capsys, monkeypatch):
    """The command's own process keeps each run's models until it exits (cli._HELD), so
    as not to free them one by one just before exiting; a caller of main() whose process
    goes on, and the flake8 plugin, do not."""
    from syncadvisor import cli

    monkeypatch.setattr(cli, "_HELD", [])
    assert run(["check", str(project)], capsys)[0] == 1
    assert cli._HELD == []


def test_text_output_is_sorted_with_summary(project, capsys):
    code, out, _ = run(["check", "--format", "concise", str(project)], capsys)
    lines = out.splitlines()
    assert code == 1
    assert lines[0].startswith(f"{project / 'bad.py'}:4:")
    assert " TFS101 " in lines[0] and "error:" in lines[0]
    assert lines[1].startswith(f"{project / 'bad.py'}:5:") and "TFS001 [*]" in lines[1]
    assert lines[-1] == "2 findings (2 errors), 1 fixable with --fix, 1 more with --unsafe-fixes."


def test_json_output(project, capsys):
    code, out, _ = run(["check", "--format", "json", str(project / "bad.py")], capsys)
    data = json.loads(out)
    assert code == 1 and [d["code"] for d in data] == ["TFS101", "TFS001"]
    first = data[0]
    assert set(first) == {"path", "line", "column", "end_line", "end_column", "code", "name",
                          "severity", "message", "fix"}
    assert (first["line"], first["column"], first["severity"]) == (4, 25, "error")
    assert first["fix"]["applicability"] == "unsafe"
    assert data[1]["fix"] == {
        "applicability": "safe", "message": "Replace with `tf.VariableSynchronization.AUTO`",
        "edits": [{"line": 5, "column": 68, "end_line": 5, "end_column": 75, "content": "AUTO"}]}


def test_select_and_ignore(project, capsys):
    _, out, _ = run(["check", "--select", "TFS0", str(project / "bad.py")], capsys)
    assert "TFS001" in out and "TFS101" not in out
    _, out, _ = run(["check", "--ignore", "TFS001", str(project / "bad.py")], capsys)
    assert "TFS001" not in out and "TFS101" in out
    code, _, err = run(["check", "--select", "TFS999", str(project)], capsys)
    assert code == 2 and "TFS999" in err


def test_config_in_pyproject(project, capsys):
    (project / "pyproject.toml").write_text(
        '[tool.syncadvisor]\nignore = ["TFS1"]\nper-file-ignores = {"bad.py" = ["TFS001"]}\n')
    code, out, _ = run(["check", str(project)], capsys, cwd=project)
    assert code == 0 and "All checks passed." in out


def test_settings_are_found_from_every_folder_and_a_pyproject_is_parsed_once(tmp_path, monkeypatch):
    """The flake8 plugin looks settings up once per folder: the nearest pyproject.toml with
    the table wins, one without it is passed over, and each file is parsed again only once
    it changes (config._TOML_READ)."""
    from syncadvisor import config

    parsed = []
    real_parse = config._parse_toml
    monkeypatch.setattr(config, "_parse_toml", lambda path: parsed.append(path) or real_parse(path))
    (tmp_path / "a" / "b" / "c").mkdir(parents=True)
    (tmp_path / "pyproject.toml").write_text('[tool.syncadvisor]\nignore = ["TFS001"]\n')
    (tmp_path / "a" / "pyproject.toml").write_text('[project]\nname = "x"\n')
    folders = [tmp_path / "a" / "b" / "c", tmp_path / "a" / "b", tmp_path / "a", tmp_path]
    for folder in folders * 3:
        assert config.load_settings(None, str(folder)).ignore == ("TFS001",)
    assert len(parsed) == 2  # each pyproject.toml once, not once per look
    (tmp_path / "a" / "pyproject.toml").write_text(
        '[project]\nname = "x"\n[tool.syncadvisor]\nignore = ["TFS002"]\n')
    assert config.load_settings(None, str(folders[0])).ignore == ("TFS002",)
    assert config.load_settings(None, str(tmp_path)).ignore == ("TFS001",)
    assert len(parsed) == 3


def test_exclude_applies_to_explicit_files(project, capsys):
    (project / "pyproject.toml").write_text('[tool.syncadvisor]\nexclude = ["bad.py"]\n')
    code, _, _ = run(["check", str(project / "bad.py")], capsys, cwd=project)
    assert code == 0


@pytest.mark.parametrize("table, key", [
    ('selct = ["TFS"]', "selct"),
    ('keras = "4"', "keras"),
    ('target-tensorflow = "two"', "target-tensorflow"),
    ('ignore = ["XYZ1"]', "XYZ1"),
    ('assume-strategy = "tpu"', "assume-strategy"),
])
def test_bad_config_is_exit_2_naming_the_key(project, capsys, table, key):
    (project / "pyproject.toml").write_text(f"[tool.syncadvisor]\n{table}\n")
    code, out, err = run(["check", str(project)], capsys, cwd=project)
    assert code == 2 and key in err and "Traceback" not in err + out


def test_invalid_toml_is_exit_2(project, capsys):
    (project / "pyproject.toml").write_text("[tool.syncadvisor\n")
    code, _, err = run(["check", str(project)], capsys, cwd=project)
    assert code == 2 and "pyproject.toml" in err


def test_keras_setting_changes_what_tf_keras_means(tmp_path, capsys):
    source = ("import tensorflow as tf\nclass L(tf.keras.layers.Layer):\n    def build(self, s):\n"
              "        self.w = self.add_weight(shape=(), synchronization=tf.VariableSynchronization.AUTO)\n")
    (tmp_path / "layer.py").write_text(source)
    _, out, _ = run(["check", str(tmp_path)], capsys, cwd=tmp_path)
    assert "TFS004 warning" in out  # TF 2.21 (nothing declared, a guess): tf.keras is Keras 3
    (tmp_path / "pyproject.toml").write_text('[tool.syncadvisor]\ntarget-tensorflow = "2.15"\n')
    code, out, _ = run(["check", str(tmp_path)], capsys, cwd=tmp_path)
    assert code == 0, out


def test_assume_strategy(tmp_path, capsys):
    (tmp_path / "lib.py").write_text(
        "import tensorflow as tf\ndef make():\n"
        "    return tf.Variable(1., synchronization=tf.VariableSynchronization.NONE)\n")
    _, out, _ = run(["check", str(tmp_path)], capsys, cwd=tmp_path)
    assert "TFS101 warning" in out
    (tmp_path / "pyproject.toml").write_text('[tool.syncadvisor]\nassume-strategy = "mirrored"\n')
    _, out, _ = run(["check", str(tmp_path)], capsys, cwd=tmp_path)
    assert "TFS101 error" in out
    (tmp_path / "pyproject.toml").write_text('[tool.syncadvisor]\nassume-strategy = "none"\n')
    code, out, _ = run(["check", str(tmp_path)], capsys, cwd=tmp_path)
    assert code == 0


def test_noqa_is_honoured(tmp_path, capsys):
    (tmp_path / "a.py").write_text(BAD.replace("NONE)\n", "NONE)  # noqa: TFS101\n"))
    _, out, _ = run(["check", "--format", "concise", str(tmp_path)], capsys)
    assert "TFS101" not in out and "TFS001" in out
    (tmp_path / "a.py").write_text("# syncadvisor: noqa\n" + BAD)
    assert run(["check", str(tmp_path)], capsys)[0] == 0


def test_stdin(capsys, monkeypatch):
    import io

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(BAD.encode())))
    code, out, _ = run(["check", "-", "--stdin-filename", "train.py"], capsys)
    assert code == 1 and out.startswith("train.py:4:25: TFS101")


def test_no_files_is_exit_0(tmp_path, capsys):
    code, _, err = run(["check", str(tmp_path)], capsys)
    assert code == 0 and "no Python files" in err


def test_rules_and_explain(capsys):
    code, out, _ = run(["rules", "--format", "json"], capsys)
    rules = json.loads(out)
    assert code == 0 and {r["code"] for r in rules} >= {"TFS001", "TFS101", "TFS201", "TFS900"}
    assert all(r["name"] and r["severity"] in ("error", "warning", "info") and r["summary"]
               for r in rules)
    code, out, _ = run(["explain", "tfs201"], capsys)
    for section in ("## What it does", "## Why is this bad?", "## Example", "## Fix safety"):
        assert section in out
    code, _, err = run(["explain", "TFS999"], capsys)
    assert code == 2 and "TFS999" in err


def test_unreadable_and_binary_files_are_findings_not_crashes(tmp_path, capsys):
    (tmp_path / "binary.py").write_bytes(b"\x00\x01\x02strategy")
    (tmp_path / "latin1.py").write_bytes(
        b"# -*- coding: latin-1 -*-\n# caf\xe9\nimport tensorflow as tf\n"
        b"v = tf.Variable(1., synchronization=tf.VariableSynchronization.DEFAULT)\n")
    code, out, err = run(["check", str(tmp_path)], capsys)
    assert code == 1 and "Traceback" not in out + err
    assert "binary.py:1:1: TFS900" in out and "latin1.py:4:" in out


def test_python_m_entry_point(tmp_path):
    (tmp_path / "bad.py").write_text(BAD)
    result = subprocess.run([sys.executable, "-m", "syncadvisor", "check", str(tmp_path)],
                            capture_output=True, text=True)
    assert result.returncode == 1 and "TFS101" in result.stdout


def test_static_path_never_imports_tensorflow(tmp_path):
    """Checking real code must not import tensorflow, keras or numpy."""
    fixtures = paths.FIXTURES / "check"
    code = (
        "import sys\nfrom syncadvisor.cli import main\n"
        f"main(['check', '--exit-zero', {str(fixtures)!r}])\n"
        "main(['rules'])\nmain(['explain', 'TFS201'])\n"
        "bad = [m for m in ('tensorflow', 'keras', 'tf_keras', 'numpy') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_reporting_never_imports_libcst_and_fixing_does(tmp_path):
    """libcst is the tree fixes are checked on: a report-only run (the command, in every
    format, with `--jobs`; the flake8 plugin) never imports it; `--diff` does."""
    fixtures = paths.FIXTURES / "check"
    (tmp_path / "bad.py").write_text(BAD)
    code = (
        "import sys\nfrom syncadvisor.cli import main\n"
        f"main(['check', '--no-cache', '--exit-zero', {str(fixtures)!r}])\n"
        f"main(['check', '--no-cache', '--exit-zero', '--jobs', '2', '--format', 'sarif', "
        f"{str(fixtures)!r}])\n"
        "from syncadvisor.flake8_plugin import SyncAdvisorChecker\n"
        f"lines = open({str(tmp_path / 'bad.py')!r}).readlines()\n"
        f"assert list(SyncAdvisorChecker(None, lines, {str(tmp_path / 'bad.py')!r}).run())\n"
        "assert 'libcst' not in sys.modules, 'reporting imported libcst'\n"
        f"main(['check', '--no-cache', '--exit-zero', '--diff', {str(tmp_path)!r}])\n"
        "assert 'libcst' in sys.modules\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_paths_are_reported_without_dot_components(tmp_path, capsys, monkeypatch):
    """`./a.py` is reported as `a.py` and `a/./b.py` as `a/b.py`, in findings and in diffs,
    as ruff prints them (they were kept as typed)."""
    import io

    (tmp_path / "sub").mkdir()
    (tmp_path / "a.py").write_text(BAD)
    (tmp_path / "sub" / "b.py").write_text(BAD)
    _, out, _ = run(["check", "--no-cache", "--format", "concise", "./a.py", "sub/./b.py",
                     ".//sub"], capsys, cwd=tmp_path)
    assert {line.split(":")[0] for line in out.splitlines()[:-1]} == {
        "a.py", os.path.join("sub", "b.py")}
    _, out, _ = run(["check", "--no-cache", "--format", "concise", "."], capsys, cwd=tmp_path)
    assert out.startswith("a.py:4:")
    _, out, _ = run(["check", "--no-cache", "--diff", "./sub/./b.py"], capsys, cwd=tmp_path)
    assert out.startswith("--- a/sub/b.py\n+++ b/sub/b.py\n")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(BAD.encode())))
    _, out, _ = run(["check", "-", "--stdin-filename", "./train.py"], capsys)
    assert out.startswith("train.py:4:25: TFS101")


def test_an_unknown_option_shows_the_usage_of_its_command(capsys):
    """`syncadvisor check --bogus` printed the top-level usage (`syncadvisor [-h] ...
    COMMAND`), which does not say what `check` takes."""
    with pytest.raises(SystemExit) as exit_:
        main(["check", "--bogus", "a.py"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    assert err.startswith("usage: syncadvisor check ")
    assert err.rstrip().endswith("syncadvisor check: error: unrecognized arguments: --bogus")
    with pytest.raises(SystemExit):
        main(["--bogus"])
    assert capsys.readouterr().err.startswith("usage: syncadvisor [-h]")


def test_no_option_is_matched_by_its_prefix(project, capsys):
    """`check --output json src/` wrote the report to a file named `json`: argparse took
    `--output` for `--output-file`. ruff matches no option by prefix, and neither does any
    parser here."""
    from syncadvisor.cli import build_parser

    with pytest.raises(SystemExit) as exit_:
        main(["check", "--output", "json", str(project / "bad.py")])
    assert exit_.value.code == 2
    assert "unrecognized arguments: --output" in capsys.readouterr().err
    assert not (project / "json").exists() and not os.path.exists("json")
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert not parser.allow_abbrev
    assert [name for name, sub in commands.items() if sub.allow_abbrev] == []


@pytest.mark.parametrize("option", ["--output-format", "--format"])
def test_output_format_as_ruff_spells_it_and_format_as_its_alias(project, capsys, option):
    code, out, _ = run(["check", "--no-cache", option, "json", str(project / "bad.py")], capsys)
    assert code == 1 and json.loads(out)[0]["code"] == "TFS101"
    code, out, _ = run(["rules", option, "json"], capsys)
    assert code == 0 and json.loads(out)[0]["code"] == "TFS001"


def test_stdin_filename_alone_reads_standard_input(tmp_path, capsys, monkeypatch):
    """`--stdin-filename x.py` with no path checked the whole current folder instead."""
    import io

    (tmp_path / "other.py").write_text(BAD)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(BAD.encode())))
    code, out, _ = run(["check", "--no-cache", "--stdin-filename", "train.py"], capsys,
                       cwd=tmp_path)
    assert code == 1 and out.startswith("train.py:4:25: TFS101") and "other.py" not in out


def test_all_in_ignore_turns_every_rule_off(project, capsys):
    """`ignore = ["ALL"]` and `--ignore ALL` had no effect: the default selection ("TFS") was
    more specific than "ALL". As in ruff, the defaults are a base that a config changes."""
    assert run(["check", "--no-cache", "--ignore", "ALL", str(project)], capsys)[0] == 0
    (project / "pyproject.toml").write_text('[tool.syncadvisor]\nignore = ["ALL"]\n')
    code, out, _ = run(["check", "--no-cache", str(project)], capsys, cwd=project)
    assert code == 0 and "All checks passed." in out
    (project / "pyproject.toml").write_text(
        '[tool.syncadvisor]\nignore = ["ALL"]\nextend-select = ["TFS001"]\n')
    _, out, _ = run(["check", "--no-cache", str(project)], capsys, cwd=project)
    assert "TFS001" in out and "TFS101" not in out
    (project / "pyproject.toml").write_text('[tool.syncadvisor]\nselect = ["ALL"]\n')
    _, out, _ = run(["check", "--no-cache", str(project)], capsys, cwd=project)
    assert "TFS001" in out and "TFS101" in out


def test_command_line_selection_changes_the_configs_as_ruff_does(project, capsys):
    """--ignore and --extend-select add to the config's selection (--ignore replaced the
    config's `ignore`, and a code it ignored came back); --select replaces it, config
    ignores included, as in ruff: it says what to run."""
    def codes(*options):
        _, out, _ = run(["check", "--no-cache", *options, str(project)], capsys, cwd=project)
        return {word for word in out.split() if word.startswith("TFS")}

    (project / "pyproject.toml").write_text('[tool.syncadvisor]\nignore = ["TFS001"]\n')
    assert codes() == {"TFS101"}
    assert codes("--ignore", "TFS1") == set()
    assert codes("--ignore", "TFS2") == {"TFS101"}
    assert codes("--extend-select", "TFS0") == {"TFS001", "TFS101"}
    assert codes("--select", "TFS0") == {"TFS001"}
    (project / "pyproject.toml").write_text('[tool.syncadvisor]\nselect = ["TFS0"]\n')
    assert codes() == {"TFS001"}
    assert codes("--extend-select", "TFS101") == {"TFS001", "TFS101"}
    assert codes("--select", "TFS1") == {"TFS101"}
    assert codes("--select", "TFS1", "--ignore", "TFS101") == set()


def test_per_file_ignores_win_over_any_selection(project, capsys):
    """A per-file ignore lost to a more specific `select`/`extend-select` (`TFS001` beat
    `TFS0`); as in ruff, it always wins, over the command line's selection too."""
    (project / "pyproject.toml").write_text(
        '[tool.syncadvisor]\nextend-select = ["TFS001"]\n'
        'per-file-ignores = {"bad.py" = ["TFS0", "TFS1"]}\n')
    code, out, _ = run(["check", "--no-cache", str(project)], capsys, cwd=project)
    assert code == 0, out
    code, out, _ = run(["check", "--no-cache", "--select", "TFS001,TFS101", str(project)],
                       capsys, cwd=project)
    assert code == 0, out
