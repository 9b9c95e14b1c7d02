"""The machine formats: json-lines, junit, gitlab, pylint (json, sarif and github are
tested in tests/cli and tests/surfaces)."""
from __future__ import annotations

import contextlib
import io
import json

from syncadvisor.cli import main
from tests import paths

CHECK = paths.FIXTURES / "check"
NOTEBOOK = paths.FIXTURES / "notebooks" / "train.ipynb"


def _check(*args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["check", "--no-cache", "--jobs", "1", *args])
    return code, out.getvalue()


def test_json_lines_are_the_json_objects_one_a_line():
    code, as_json = _check("--format", "json", str(CHECK), str(NOTEBOOK))
    code_lines, lines = _check("--format", "json-lines", str(CHECK), str(NOTEBOOK))
    assert code == code_lines == 1
    assert lines.endswith("\n") and "\n\n" not in lines
    assert [json.loads(line) for line in lines.splitlines()] == json.loads(as_json)


def test_json_lines_of_nothing_is_nothing(tmp_path):
    (tmp_path / "good.py").write_text("import tensorflow as tf\nv = tf.Variable(1.)\n")
    assert _check("--format", "json-lines", str(tmp_path)) == (0, "")


def test_json_lines_statistics():
    _, rows = _check("--format", "json", "--statistics", "--exit-zero", str(CHECK))
    _, lines = _check("--format", "json-lines", "--statistics", "--exit-zero", str(CHECK))
    assert [json.loads(line) for line in lines.splitlines()] == json.loads(rows)


def test_pylint_is_path_line_code_message():
    _, as_json = _check("--format", "json", str(CHECK / "tutorial_mistakes.py"), str(NOTEBOOK))
    code, out = _check("--format", "pylint", str(CHECK / "tutorial_mistakes.py"), str(NOTEBOOK))
    expected = [f"{d['path']}:{'cell %d:' % d['cell'] if 'cell' in d else ''}{d['line']}: "
                f"[{d['code']}] {d['message']}" for d in json.loads(as_json)]
    assert code == 1 and out.splitlines() == expected
    assert out.splitlines()[0].startswith(f"{CHECK / 'tutorial_mistakes.py'}:8: [TFS001] ")
    assert f"{NOTEBOOK}:cell 5:2: [TFS001] " in out
