"""The workspace without the protocol: which files it models when the disk changes."""
from __future__ import annotations

import textwrap

from syncadvisor.server.workspace import Workspace

VARIABLE = textwrap.dedent("""\
    import tensorflow as tf
    v = tf.Variable(1., synchronization=tf.VariableSynchronization.DEFAULT)
""")


def test_a_file_the_index_left_out_stays_out_when_it_changes_on_disk(tmp_path):
    (tmp_path / ".gitignore").write_text("build/\n")
    (tmp_path / "a.py").write_text(VARIABLE)
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "b.py").write_text(VARIABLE)
    (tmp_path / ".venv" / "lib").mkdir(parents=True)
    (tmp_path / ".venv" / "lib" / "c.py").write_text(VARIABLE)
    workspace = Workspace([str(tmp_path)])
    workspace.index()
    assert set(workspace.results) == {str(tmp_path / "a.py")}
    for left_out in (tmp_path / "build" / "b.py", tmp_path / ".venv" / "lib" / "c.py"):
        workspace.reread(str(left_out))
        workspace.close(str(left_out))
    assert set(workspace.results) == {str(tmp_path / "a.py")}


def test_a_workspace_file_changed_on_disk_is_modelled_again(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    workspace = Workspace([str(tmp_path)])
    workspace.index()
    path = str(tmp_path / "a.py")
    assert workspace.findings([path]) == {path: []}
    (tmp_path / "a.py").write_text(VARIABLE)
    workspace.reread(path)
    assert [f.code for f in workspace.findings([path])[path]] == ["TFS001"]
    (tmp_path / "a.py").unlink()
    workspace.reread(path)
    assert path not in workspace.results
