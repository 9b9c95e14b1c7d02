"""The workspace without the protocol: which files it models when the disk changes."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

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


# --- facts kept across edits ---------------------------------------------------------
# The workspace keeps its linked projects and replaces one file's model per edit
# (`Project.replace`): after any edit, every file's findings must be those of a run
# linked from scratch over the same texts.

def _edited(text: str, rng) -> str:
    lines = text.split("\n")
    at = rng.randrange(len(lines) + 1)
    kind = rng.randrange(5)
    if kind == 0:  # a comment: positions move
        return "\n".join(lines[:at] + ["# an edit"] + lines[at:])
    body = [i for i, line in enumerate(lines) if line.startswith("        ")
            and not line.strip().startswith(("def ", "class ", "@", "return", "else", "elif"))]
    if kind == 1 and body:  # a statement of a body gone
        i = rng.choice(body)
        indent = lines[i][:len(lines[i]) - len(lines[i].lstrip())]
        return "\n".join(lines[:i] + [indent + "pass"] + lines[i + 1:])
    if kind == 2:  # a parameter more (a signature other files may call)
        for i, line in enumerate(lines):
            if line.lstrip().startswith("def ") and "(" in line:
                lines[i] = line.replace("(", "(extra_argument=None, " if "(self" not in line
                                        else "(self, extra_argument=None, ", 1)
                lines[i] = lines[i].replace(", )", ")")
                if rng.random() < 0.5:
                    break
        return "\n".join(lines)
    if kind == 3:  # a name rebound
        names = [i for i, line in enumerate(lines) if " = " in line and line.strip()[0].isalpha()]
        if names:
            i = rng.choice(names)
            return "\n".join(lines[:i + 1] + [lines[i].split(" = ")[0] + " = None"] + lines[i + 1:])
    return text


def _texts(folder):
    return {str(p): p.read_text() for p in sorted(folder.rglob("*.py"))}


def _fresh(workspace, paths):
    from syncadvisor.engine.check import check

    run = check(list(workspace.results.values()), workspace.configuration, workspace.text_of,
                only=set(paths))
    found = {p: [] for p in paths}
    for f in run.findings:
        found[f.path].append(f)
    return found


def _shown(findings):
    return {p: [(f.line, f.column, f.code, f.message) for f in fs] for p, fs in findings.items()}


# Seed 10 makes a file unparseable while answers about it are kept elsewhere: checking
# them must not fail for want of its model.
@pytest.mark.parametrize("seed", [7, 10])
def test_findings_after_edits_are_those_of_a_fresh_link(tmp_path, seed):
    import random
    import shutil

    from tests import paths

    folder = tmp_path / "ws"
    shutil.copytree(paths.FIXTURES / "check", folder)
    texts = _texts(folder)
    workspace = Workspace([str(folder)])
    workspace.index()
    every = sorted(texts)
    rng = random.Random(seed)
    for path in every:
        workspace.open(path, texts[path])
    assert _shown(workspace.findings(every)) == _shown(_fresh(workspace, every))
    for n in range(60):
        path = rng.choice(every)
        texts[path] = _edited(texts[path], rng) if rng.random() < 0.85 else \
            (paths.FIXTURES / "check" / Path(path).relative_to(folder)).read_text()
        workspace.open(path, texts[path])
        got = workspace.findings(every)
        assert _shown(got) == _shown(_fresh(workspace, every)), (n, path)
