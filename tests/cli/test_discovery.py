"""Which files a folder holds for checking: `.gitignore` read as git reads it."""
from __future__ import annotations

import os

from syncadvisor.config import Settings
from syncadvisor.files import discover


def _tree(root, paths):
    for rel in paths:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")


def _found(top, root):
    return sorted(os.path.relpath(p, root).replace(os.sep, "/")
                  for p in discover([str(top)], Settings()))


def test_a_folder_named_inside_an_ignored_one_is_checked_whole(tmp_path):
    """`syncadvisor check .venv/lib/.../keras` checks all of keras (it checked only the
    files directly in that folder, and said "All checks passed")."""
    (tmp_path / ".gitignore").write_text("env/\nbuild\n")
    _tree(tmp_path, ["app.py", "env/lib/pkg/__init__.py", "env/lib/pkg/sub/layer.py",
                     "build/gen.py"])
    assert _found(tmp_path, tmp_path) == ["app.py"]
    assert _found(tmp_path / "env" / "lib" / "pkg", tmp_path) == [
        "env/lib/pkg/__init__.py", "env/lib/pkg/sub/layer.py"]
    assert _found(tmp_path / "build", tmp_path) == ["build/gen.py"]


def test_gitignore_patterns_mean_what_git_means(tmp_path):
    (tmp_path / ".gitignore").write_text(
        "/top/\n"          # anchored: only the top-level folder
        "cache/\n"         # a folder of that name anywhere
        "docs/*.py\n"      # a path from here, not docs/ anywhere
        "**/gen_*.py\n")   # the same as `gen_*.py`: anywhere
    _tree(tmp_path, ["top/a.py", "pkg/top/b.py", "pkg/cache/c.py", "docs/e.py",
                     "pkg/docs/f.py", "pkg/gen_x.py", "gen_y.py", "h.py"])
    assert _found(tmp_path, tmp_path) == ["h.py", "pkg/docs/f.py", "pkg/top/b.py"]


def test_the_last_matching_pattern_decides(tmp_path):
    (tmp_path / ".gitignore").write_text("*.py\n!keep*.py\n")
    _tree(tmp_path, ["a.py", "keep.py", "sub/b.py", "sub/keep2.py"])
    assert _found(tmp_path, tmp_path) == ["keep.py", "sub/keep2.py"]


def test_a_nested_gitignore_speaks_for_its_own_folder(tmp_path):
    _tree(tmp_path, ["a/skip.py", "a/b/skip.py", "a/keep.py", "skip.py"])
    (tmp_path / "a" / ".gitignore").write_text("skip.py\n")
    assert _found(tmp_path, tmp_path) == ["a/keep.py", "skip.py"]


DEFAULT_EXCLUDED = [".ipynb_checkpoints/nb-checkpoint.ipynb", "build/lib/pkg/a.py", "dist/b.py",
                    ".venv/lib/python3.11/site-packages/pkg/c.py", "site-packages/d.py",
                    "__pypackages__/3.11/lib/e.py", "env/lib/f.py", ".tox/py311/g.py",
                    "node_modules/h.py", ".git/hooks/i.py",
                    ".virtual_documents/nb.ipynb"]


def test_default_excludes_leave_out_what_is_not_the_projects_source(tmp_path):
    """Notebook checkpoints, build output, virtual environments (any folder that holds a
    pyvenv.cfg) and tools' folders were walked into: every notebook finding showed twice,
    and --fix would have rewritten the checkpoints."""
    _tree(tmp_path, ["app.py", "pkg/mod.py", *DEFAULT_EXCLUDED, "pkg/distribution.py"])
    (tmp_path / "env" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    assert _found(tmp_path, tmp_path) == ["app.py", "pkg/distribution.py", "pkg/mod.py"]


def test_a_path_named_explicitly_is_checked_though_excluded_by_default(tmp_path):
    """`syncadvisor check .venv/lib/python3.11/site-packages/keras` checks keras, and a file
    under build/ named by pre-commit is checked; --force-exclude leaves both out."""
    _tree(tmp_path, DEFAULT_EXCLUDED)
    (tmp_path / "env" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    named = [".venv/lib/python3.11/site-packages/pkg", "build/lib/pkg/a.py", "env"]
    found = sorted(os.path.relpath(p, tmp_path).replace(os.sep, "/") for p in
                   discover([str(tmp_path / p) for p in named], Settings(root=str(tmp_path))))
    assert found == [".venv/lib/python3.11/site-packages/pkg/c.py", "build/lib/pkg/a.py",
                     "env/lib/f.py"]
    forced = Settings(root=str(tmp_path), force_exclude=True)
    assert list(discover([str(tmp_path / p) for p in named[:2]], forced)) == []


def test_exclude_replaces_the_defaults_and_extend_exclude_adds_to_them(tmp_path):
    _tree(tmp_path, ["app.py", "gen/x.py", "build/y.py"])
    root = str(tmp_path)
    assert _found_with(tmp_path, Settings(root=root)) == ["app.py", "gen/x.py"]
    assert _found_with(tmp_path, Settings(root=root, exclude=("gen",))) == [
        "app.py", "build/y.py"]
    assert _found_with(tmp_path, Settings(root=root, extend_exclude=("gen",))) == ["app.py"]
    assert _found_with(tmp_path, Settings(root=root, exclude=())) == [
        "app.py", "build/y.py", "gen/x.py"]


def _found_with(root, settings):
    return sorted(os.path.relpath(p, root).replace(os.sep, "/")
                  for p in discover([str(root)], settings))


def test_exclude_keys_in_a_config_file_and_force_exclude(tmp_path, capsys):
    from syncadvisor.cli import main

    bad = "import tensorflow as tf\nv = tf.VariableSynchronization.DEFAULT\n"
    for rel in ("app.py", "gen/x.py", "build/y.py"):
        (tmp_path / rel).parent.mkdir(exist_ok=True)
        (tmp_path / rel).write_text(bad if rel != "app.py" else "x = 1\n")
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        (tmp_path / "pyproject.toml").write_text('[tool.syncadvisor]\nextend-exclude = ["gen"]\n')
        assert main(["check", "--no-cache", "."]) == 0
        assert main(["check", "--no-cache", "build/y.py"]) == 1  # named: checked
        assert main(["check", "--no-cache", "--force-exclude", "build/y.py", "build"]) == 0
        assert main(["check", "--no-cache", "gen/x.py"]) == 0  # the config's own: always
        (tmp_path / "pyproject.toml").write_text('[tool.syncadvisor]\nexclude = ["gen"]\n')
        capsys.readouterr()
        assert main(["check", "--no-cache", "."]) == 1
        assert capsys.readouterr().out.startswith(os.path.join("build", "y.py") + ":2:")
        (tmp_path / "pyproject.toml").write_text('[tool.syncadvisor]\nextend-exclude = [1]\n')
        assert main(["check", "--no-cache", "."]) == 2
        assert "extend-exclude" in capsys.readouterr().err
    finally:
        os.chdir(old)
