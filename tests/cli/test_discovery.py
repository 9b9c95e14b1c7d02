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
