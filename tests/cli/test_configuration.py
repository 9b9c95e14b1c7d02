"""Each file is checked under the settings of its own config file, as ruff resolves them:
the nearest syncadvisor.toml or pyproject.toml with [tool.syncadvisor] above it."""
from __future__ import annotations

import json
import os

import pytest

from syncadvisor.cli import main
from syncadvisor.config import Configuration, Settings

# One TFS001 (a member that does not exist), nothing else.
UNKNOWN_MEMBER = ("import tensorflow as tf\n"
                  "v = tf.Variable(1., synchronization=tf.VariableSynchronization.DEFAULT)\n")
KERAS_LAYER = (  # TFS004 where tf.keras is Keras 3 (TF 2.16 on), nothing under 2.15
    "import tensorflow as tf\nclass L(tf.keras.layers.Layer):\n    def build(self, s):\n"
    "        self.w = self.add_weight(shape=(), "
    "synchronization=tf.VariableSynchronization.AUTO)\n")


def write(root, files):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def findings(capsys, *args, cwd):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        code = main(["check", "--format", "json", "--exit-zero", *args])
    finally:
        os.chdir(old)
    out = capsys.readouterr().out
    assert code == 0, out
    return sorted((f["path"].replace(os.sep, "/"), f["code"]) for f in json.loads(out))


def test_each_file_is_checked_under_its_own_config_whatever_the_order(tmp_path, capsys):
    """The first path's pyproject.toml was used for every file: `check a b` reported
    nothing, `check b a` two findings; through pre-commit, an error in b/ passed when a
    file of a/ was staged with it."""
    write(tmp_path, {"a/pyproject.toml": '[tool.syncadvisor]\nignore = ["TFS001"]\n',
                     "a/x.py": UNKNOWN_MEMBER,
                     "b/pyproject.toml": '[tool.syncadvisor]\nignore = ["TFS3"]\n',
                     "b/y.py": UNKNOWN_MEMBER, "b/z.py": UNKNOWN_MEMBER})
    expected = [("b/y.py", "TFS001"), ("b/z.py", "TFS001")]
    for args in (["a", "b"], ["b", "a"], ["a/x.py", "b/y.py", "b/z.py"],
                 ["b/z.py", "a/x.py", "b/y.py"]):
        assert findings(capsys, "--no-cache", *args, cwd=tmp_path) == expected, args


def test_the_nearest_config_file_wins_and_syncadvisor_toml_first(tmp_path, capsys):
    write(tmp_path, {
        "pyproject.toml": '[tool.syncadvisor]\nignore = ["TFS001"]\n',
        "top.py": UNKNOWN_MEMBER,
        # a pyproject.toml without the table is passed over
        "plain/pyproject.toml": '[project]\nname = "x"\n', "plain/p.py": UNKNOWN_MEMBER,
        # syncadvisor.toml: the table's keys at the top level
        "own/syncadvisor.toml": 'select = ["TFS0"]\n', "own/o.py": UNKNOWN_MEMBER,
        "own/deep/d.py": UNKNOWN_MEMBER,
        # in one folder, syncadvisor.toml before pyproject.toml (ruff.toml's place)
        "both/syncadvisor.toml": "", "both/pyproject.toml":
            '[tool.syncadvisor]\nignore = ["TFS001"]\n', "both/b.py": UNKNOWN_MEMBER,
    })
    assert findings(capsys, "--no-cache", ".", cwd=tmp_path) == [
        ("both/b.py", "TFS001"), ("own/deep/d.py", "TFS001"), ("own/o.py", "TFS001")]
    configuration = Configuration()
    assert configuration.for_path(str(tmp_path / "own" / "deep" / "d.py")).source == str(
        tmp_path / "own" / "syncadvisor.toml")
    plain = configuration.for_path(str(tmp_path / "plain" / "p.py"))
    assert plain.source == configuration.for_path(str(tmp_path / "top.py")).source
    # one config and one project (plain/ declares one: [project]), one Settings
    assert plain is configuration.for_path(str(tmp_path / "plain" / "deep" / "q.py"))


def test_no_config_file_means_the_defaults(tmp_path):
    settings = Configuration().for_folder(str(tmp_path))
    assert settings == Settings() and settings.source is None


def test_the_model_follows_each_files_target(tmp_path, capsys):
    """target-tensorflow decides what tf.keras means, per file: the model cache is keyed
    on each file's settings."""
    write(tmp_path, {"old/pyproject.toml": '[tool.syncadvisor]\ntarget-tensorflow = "2.15"\n',
                     "old/layer.py": KERAS_LAYER, "new/layer.py": KERAS_LAYER})
    expected = [("new/layer.py", "TFS004")]
    assert findings(capsys, "--no-cache", "old", "new", cwd=tmp_path) == expected
    assert findings(capsys, "new", "old", cwd=tmp_path) == expected  # cold cache
    assert findings(capsys, "old", "new", cwd=tmp_path) == expected  # from the cache
    (tmp_path / "new" / "pyproject.toml").write_text(
        '[tool.syncadvisor]\ntarget-tensorflow = "2.15"\n')
    assert findings(capsys, "old", "new", cwd=tmp_path) == []


def test_a_run_is_one_project_whatever_each_files_settings(tmp_path, capsys):
    """A strategy created in one file still reaches a variable made in another that has
    other settings, and each file is judged under its own: model.py's `assume-strategy`
    does not matter where the strategy is visible, its `ignore` does."""
    model = ("import tensorflow as tf\n\ndef build():\n"
             "    return tf.Variable(1., synchronization=tf.VariableSynchronization.NONE)\n")
    train = ("import tensorflow as tf\nfrom lib.model import build\n"
             "strategy = tf.distribute.MirroredStrategy()\n"
             "with strategy.scope():\n    v = build()\n")
    write(tmp_path, {"lib/__init__.py": "", "lib/model.py": model,
                     "lib/pyproject.toml": '[tool.syncadvisor]\nassume-strategy = "none"\n',
                     "app/train.py": train})
    out = findings(capsys, "--no-cache", "lib", "app", cwd=tmp_path)
    assert out == [("lib/model.py", "TFS101")]
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        main(["check", "--no-cache", "--format", "json", "lib", "app"])
    finally:
        os.chdir(old)
    assert json.loads(capsys.readouterr().out)[0]["severity"] == "error"  # not a guess
    (tmp_path / "lib" / "pyproject.toml").write_text('[tool.syncadvisor]\nignore = ["TFS1"]\n')
    assert findings(capsys, "--no-cache", "app", "lib", cwd=tmp_path) == []


def test_the_run_cache_keys_on_every_files_settings(tmp_path, capsys):
    """The findings of an unchanged run are reused only if no file's settings changed,
    not only the first path's."""
    write(tmp_path, {"a/pyproject.toml": '[tool.syncadvisor]\nignore = ["TFS001"]\n',
                     "a/x.py": UNKNOWN_MEMBER, "b/y.py": UNKNOWN_MEMBER})
    assert findings(capsys, "a", "b", cwd=tmp_path) == [("b/y.py", "TFS001")]
    assert findings(capsys, "a", "b", cwd=tmp_path) == [("b/y.py", "TFS001")]
    (tmp_path / "b" / "syncadvisor.toml").write_text('ignore = ["TFS001"]\n')
    assert findings(capsys, "a", "b", cwd=tmp_path) == []
    (tmp_path / "a" / "pyproject.toml").write_text('[tool.syncadvisor]\n')
    assert findings(capsys, "a", "b", cwd=tmp_path) == [("a/x.py", "TFS001")]


@pytest.mark.parametrize("order", [("a", "b"), ("b", "a")])
def test_a_bad_config_of_any_checked_file_is_exit_2_naming_it(tmp_path, capsys, order):
    write(tmp_path, {"a/x.py": UNKNOWN_MEMBER, "b/y.py": UNKNOWN_MEMBER,
                     "b/pyproject.toml": '[tool.syncadvisor]\nkeras = "4"\n',
                     "c/syncadvisor.toml": 'selct = ["TFS"]\n', "c/z.py": UNKNOWN_MEMBER})
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        code = main(["check", "--no-cache", *order])
        err = capsys.readouterr().err
        assert code == 2 and os.path.join("b", "pyproject.toml") in err and "keras" in err
        assert main(["check", "--no-cache", "c/z.py"]) == 2
        err = capsys.readouterr().err
        assert os.path.join("c", "syncadvisor.toml") in err and "selct" in err
        assert main(["check", "--no-cache", "a"]) == 1  # b's config is not a's
    finally:
        os.chdir(old)


def test_excludes_come_from_each_files_config(tmp_path, capsys):
    write(tmp_path, {"a/pyproject.toml": '[tool.syncadvisor]\nexclude = ["gen_*.py"]\n',
                     "a/gen_x.py": UNKNOWN_MEMBER, "b/gen_y.py": UNKNOWN_MEMBER})
    assert findings(capsys, "--no-cache", "a", "b", cwd=tmp_path) == [("b/gen_y.py", "TFS001")]
    assert findings(capsys, "--no-cache", "a/gen_x.py", "b/gen_y.py", cwd=tmp_path) == [
        ("b/gen_y.py", "TFS001")]


BOTH = ("import tensorflow as tf\nstrategy = tf.distribute.MirroredStrategy()\n"
        "with strategy.scope():\n"
        "    v = tf.Variable(1., synchronization=tf.VariableSynchronization.NONE)\n"
        "    w = tf.Variable(1., synchronization=tf.VariableSynchronization.DEFAULT)\n")


def test_config_file_option_is_used_for_every_file_instead_of_discovery(tmp_path, capsys):
    write(tmp_path, {"a/pyproject.toml": '[tool.syncadvisor]\nignore = ["TFS001"]\n',
                     "a/x.py": BOTH, "b/y.py": BOTH,
                     # patterns are relative to the config file's folder, as for one found
                     "shared/syncadvisor.toml": 'ignore = ["TFS101"]\n'
                                                'per-file-ignores = {"../b/*" = ["TFS0"]}\n',
                     "ci.toml": '[tool.syncadvisor]\nselect = ["TFS0"]\n'})
    assert findings(capsys, "--no-cache", "a", "b", cwd=tmp_path) == [
        ("a/x.py", "TFS101"), ("b/y.py", "TFS001"), ("b/y.py", "TFS101")]
    assert findings(capsys, "--no-cache", "--config", "shared/syncadvisor.toml", "a", "b",
                    cwd=tmp_path) == [("a/x.py", "TFS001")]
    assert findings(capsys, "--no-cache", "--config", "ci.toml", "a", "b", cwd=tmp_path) == [
        ("a/x.py", "TFS001"), ("b/y.py", "TFS001")]


def test_config_key_value_sets_one_key_over_every_files_config(tmp_path, capsys):
    """`--config "key = value"` (ruff's form) replaces that key of each file's settings
    and leaves the rest; repeatable, and with a config file too."""
    write(tmp_path, {"a/pyproject.toml": '[tool.syncadvisor]\nignore = ["TFS001"]\n'
                                         'assume-strategy = "mirrored"\n',
                     "a/x.py": BOTH, "b/y.py": BOTH, "ci.toml": 'select = ["TFS0"]\n'})
    assert findings(capsys, "--no-cache", "--config", "select = ['TFS0']", "a", "b",
                    cwd=tmp_path) == [("b/y.py", "TFS001")]
    assert findings(capsys, "--no-cache", "--config", "ignore = []", "a", "b",
                    cwd=tmp_path) == [("a/x.py", "TFS001"), ("a/x.py", "TFS101"),
                                      ("b/y.py", "TFS001"), ("b/y.py", "TFS101")]
    assert findings(capsys, "--no-cache", "--config", 'ignore = ["TFS1"]', "--config",
                    "extend-select = ['TFS001']", "a", "b", cwd=tmp_path) == [
        ("a/x.py", "TFS001"), ("b/y.py", "TFS001")]
    assert findings(capsys, "--no-cache", "--config", "ci.toml", "--config",
                    "select = ['TFS1']", "a", cwd=tmp_path) == [("a/x.py", "TFS101")]


@pytest.mark.parametrize("values, message", [
    (["selct = ['TFS']"], "--config: unknown key `selct`"),
    (["keras = '4'"], "--config `keras` must be one of"),
    (["select = "], "--config: select = : not a TOML `key = value`"),
    # The usual slip (the shell's quotes are gone before TOML reads it): the error shows
    # the quoting that works.
    (["assume-strategy = mirrored"],
     "quote a string inside the shell's quotes: --config \"assume-strategy = 'mirrored'\""),
    (["keras=auto"], "--config \"keras = 'auto'\""),
    (["select = [TFS1]"], "--config \"select = ['TFS1']\""),
    (["nope.toml"], "--config: nope.toml: no such file"),
    (["ci.toml", "ci.toml"], "one config file at most"),
])
def test_bad_config_options_are_exit_2_naming_them(tmp_path, capsys, values, message):
    write(tmp_path, {"x.py": UNKNOWN_MEMBER, "ci.toml": ""})
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        options = [part for value in values for part in ("--config", value)]
        code = main(["check", "--no-cache", *options, "x.py"])
    finally:
        os.chdir(old)
    out, err = capsys.readouterr()
    assert code == 2 and message in err and out == "", err


def _show(capsys, cwd, *args):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        code = main(["check", *args])
    finally:
        os.chdir(old)
    out, err = capsys.readouterr()
    return code, out, err


def test_show_files_lists_what_would_be_checked_and_checks_nothing(tmp_path, capsys):
    write(tmp_path, {"a/x.py": UNKNOWN_MEMBER, "a/gen_skip.py": UNKNOWN_MEMBER,
                     "a/pyproject.toml": '[tool.syncadvisor]\nextend-exclude = ["gen_*"]\n',
                     "b/y.py": UNKNOWN_MEMBER, "b/nb.ipynb": "{}", "b/notes.txt": "",
                     "build/z.py": UNKNOWN_MEMBER})
    code, out, _ = _show(capsys, tmp_path, "--show-files", "b", "a")
    assert code == 0 and out.splitlines() == [
        os.path.join("a", "x.py"), os.path.join("b", "nb.ipynb"), os.path.join("b", "y.py")]
    code, out, _ = _show(capsys, tmp_path, "--show-files", "build/z.py", "b/notes.txt")
    assert code == 0 and out.splitlines() == [os.path.join("b", "notes.txt"),
                                              os.path.join("build", "z.py")]
    assert not (tmp_path / ".syncadvisor_cache").exists()


def test_show_settings_names_the_settings_and_where_they_come_from(tmp_path, capsys):
    write(tmp_path, {"a/x.py": UNKNOWN_MEMBER, "b/y.py": UNKNOWN_MEMBER,
                     "a/pyproject.toml": '[tool.syncadvisor]\nignore = ["TFS3"]\n'
                                         'assume-strategy = "mirrored"\n'
                                         'per-file-ignores = {"x.py" = ["TFS1"]}\n'})
    code, out, _ = _show(capsys, tmp_path, "--show-settings", "--ignore", "TFS2", "a/x.py")
    lines = out.splitlines()
    assert code == 0 and lines[:2] == [
        f"Settings for: {os.path.join('a', 'x.py')}",
        f"Config file: {tmp_path / 'a' / 'pyproject.toml'}"]
    assert 'ignore = ["TFS3"]' in lines and 'assume-strategy = "mirrored"' in lines
    assert 'per-file-ignores = {"x.py" = ["TFS1"]}' in lines
    assert 'ignore = ["TFS2"]' in lines  # the command line's, after the config's
    assert lines[-1] == 'rules = ["TFS001", "TFS002", "TFS003", "TFS004", "TFS900", "TFS901"]'
    code, out, _ = _show(capsys, tmp_path, "--show-settings", "b")
    assert code == 0 and out.splitlines()[:2] == [
        f"Settings for: {os.path.join('b', 'y.py')}", "Config file: none (the defaults)"]
    assert 'select = ["TFS"]' in out and 'assume-strategy = "unknown"' in out
    (tmp_path / "b" / "syncadvisor.toml").write_text('keras = "4"\n')
    code, _, err = _show(capsys, tmp_path, "--show-settings", "b")
    assert code == 2 and "keras" in err


def test_fixes_follow_each_files_settings(tmp_path, capsys):
    """--fix fixes what each file's own settings select: a/ ignores TFS001, so its file is
    left as it is while b/'s is fixed, whatever order they are given in."""
    write(tmp_path, {"a/pyproject.toml": '[tool.syncadvisor]\nignore = ["TFS001"]\n',
                     "a/x.py": UNKNOWN_MEMBER, "b/y.py": UNKNOWN_MEMBER})
    code, out, _ = _show(capsys, tmp_path, "--no-cache", "--diff", "a", "b")
    assert code == 1 and os.path.join("a", "x.py") not in out
    assert "--- a/b/y.py" in out
    code, _, _ = _show(capsys, tmp_path, "--no-cache", "--fix", "b", "a")
    assert code == 0
    assert (tmp_path / "a" / "x.py").read_text() == UNKNOWN_MEMBER
    assert (tmp_path / "b" / "y.py").read_text() == UNKNOWN_MEMBER.replace("DEFAULT", "AUTO")


def test_the_usage_line_shows_no_key_value_form_that_is_not_toml(capsys):
    """`[--config FILE | KEY=VALUE]` invited `--config assume-strategy=mirrored`; the help
    shows the quoting that works instead."""
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    out = capsys.readouterr().out
    assert "KEY=VALUE" not in out and "[--config CONFIG_OPTION]" in out
    assert "--config \"assume-strategy = 'mirrored'\"" in " ".join(out.split())


def test_show_settings_names_the_true_source_of_the_target_keys(tmp_path, capsys):
    """`keras = "auto"` in a file sets nothing (tf.keras still follows the target), and a
    key --config sets is set by --config, not by the config file beside it."""
    project = '[project]\nname = "x"\ndependencies = ["tensorflow>=2.13,<2.16"]\n'
    write(tmp_path, {"pyproject.toml": project + '[tool.syncadvisor]\nkeras = "auto"\n',
                     "x.py": UNKNOWN_MEMBER})
    declared = "from pyproject.toml: tensorflow>=2.13,<2.16"

    def target(*options):
        code, out, _ = _show(capsys, tmp_path, "--show-settings", *options, "x.py")
        assert code == 0
        return out.splitlines()[2]

    assert target() == f"Target: TensorFlow 2.15, tf.keras Keras 2, keras Keras 2 ({declared})"
    assert target("--config", "keras = '3'") == (
        f"Target: TensorFlow 2.15, tf.keras Keras 3, keras Keras 2 (keras set by --config; "
        f"{declared})")
    (tmp_path / "pyproject.toml").write_text(
        project + '[tool.syncadvisor]\nkeras = "3"\ntarget-tensorflow = "2.14"\n')
    assert target("--config", "keras = '2'") == (
        "Target: TensorFlow 2.14, tf.keras Keras 2, keras Keras 2 (target-tensorflow set by "
        f"pyproject.toml; keras set by --config; {declared})")
