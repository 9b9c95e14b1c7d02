"""The GitHub Action (action.yml at the repository's root): its inputs, and its steps run
here as a runner would run them."""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests import paths

yaml = pytest.importorskip("yaml", reason="PyYAML comes with pre-commit, in the test extras")

ACTION = paths.REPO / "action.yml"
BAD = ("import tensorflow as tf\n"
       "v = tf.Variable(1., synchronization=tf.VariableSynchronization.DEFAULT)\n")
_EXPRESSION = re.compile(r"\$\{\{\s*(.+?)\s*\}\}")


def _action() -> dict:
    return yaml.safe_load(ACTION.read_text(encoding="utf-8"))


def test_the_action_is_composite_with_documented_inputs():
    action = _action()
    assert action["runs"]["using"] == "composite"
    inputs = action["inputs"]
    assert set(inputs) == {"args", "src", "python-version"}
    assert inputs["args"]["default"] == "check --format github"
    assert inputs["src"]["default"] == "."
    assert inputs["python-version"]["default"] == ""
    for name, spec in inputs.items():
        assert spec["description"].strip() and spec["required"] is False, name


def test_the_steps_install_the_actions_own_checkout_and_run_the_check():
    steps = _action()["runs"]["steps"]
    install = next(s for s in steps if s.get("id") == "install")
    assert 'pip install' in install["run"] and '"${{ github.action_path }}"' in install["run"]
    run = steps[-1]
    assert run["run"].strip() == '"$SYNCADVISOR" $ARGS $SRC'
    assert run["env"] == {"SYNCADVISOR": "${{ steps.install.outputs.command }}",
                          "ARGS": "${{ inputs.args }}", "SRC": "${{ inputs.src }}"}
    for step in steps:  # inputs reach a script through its environment, never pasted in
        assert "inputs." not in step.get("run", ""), step["name"]
        assert step.get("shell", "bash") == "bash"


def _run_like_a_runner(workspace: Path, temp: Path, inputs: dict, installed: dict
                       ) -> subprocess.CompletedProcess:
    """Every step of the action, as a runner runs a composite action's steps: expressions
    replaced, `bash -eo pipefail` in the workspace, step outputs through $GITHUB_OUTPUT;
    `uses:` steps (actions/setup-python) are left to GitHub and must be skipped here.
    `installed` keeps the install step's outputs: a second run reuses them."""
    action = _action()
    values = {f"inputs.{k}": v["default"] for k, v in action["inputs"].items()}
    values.update({f"inputs.{k}": v for k, v in inputs.items()})
    values["github.action_path"] = str(paths.REPO)
    values.update(installed)

    def expand(text: str) -> str:
        return _EXPRESSION.sub(lambda m: values[m.group(1)], text)

    result = None
    for step in action["runs"]["steps"]:
        if "if" in step:
            condition = step["if"].replace("inputs.python-version != ''",
                                           repr(values["inputs.python-version"] != ""))
            if not eval(condition):  # noqa: S307 - our own action's one condition
                continue
        assert "uses" not in step, "a `uses:` step would run here: give no python-version"
        if step.get("id") == "install" and installed:
            continue
        output = temp / f"output-{step.get('id', 'step')}"
        output.write_text("")
        env = {**os.environ, "RUNNER_TEMP": str(temp), "GITHUB_OUTPUT": str(output),
               **{k: expand(v) for k, v in step.get("env", {}).items()}}
        env.pop("PYTHONPATH", None)  # the installed syncadvisor, not this checkout's
        result = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c",
                                 expand(step["run"])], cwd=workspace, env=env,
                                capture_output=True, text=True, timeout=600)
        if step is not action["runs"]["steps"][-1]:
            assert result.returncode == 0, result.stdout + result.stderr
        for line in output.read_text().splitlines():
            key, _, value = line.partition("=")
            values[f"steps.{step['id']}.outputs.{key}"] = value
            installed[f"steps.{step['id']}.outputs.{key}"] = value
    assert result is not None
    return result


def test_the_action_annotates_findings_and_fails_the_step(tmp_path):
    workspace = tmp_path / "workspace"
    (workspace / "src").mkdir(parents=True)
    (workspace / "src" / "train.py").write_text(BAD)
    (workspace / "docs").mkdir()
    (workspace / "docs" / "other.py").write_text(BAD)
    temp = tmp_path / "runner-temp"
    temp.mkdir()
    installed: dict = {}
    result = _run_like_a_runner(workspace, temp, {"src": "src"}, installed)
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("::error file=src/train.py,line=2,col=37,")
    assert lines[0].endswith("::TFS001 `tf.VariableSynchronization.DEFAULT` does not exist "
                             "(AttributeError when this line runs); the default is AUTO")
    passing = _run_like_a_runner(workspace, temp, {"args": "check --format github --exit-zero"},
                                 installed)
    assert passing.returncode == 0 and passing.stdout.count("::error ") == 2
