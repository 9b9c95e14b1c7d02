"""README.md's Emacs snippet, as written, in a real Emacs: eglot (built into Emacs 29,
Debian's `elpa-eglot` on Emacs 28) starts `syncadvisor server` for a Python file and
flymake shows its diagnostic. Skipped where Emacs or eglot is missing (`.ci/run`
installs Debian's `emacs-nox` and `elpa-eglot`)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import syncadvisor

pytest.importorskip("pygls", reason="pygls is missing: `pip install 'syncadvisor[server]'`")

README = Path(__file__).resolve().parents[2] / "README.md"
PACKAGE_ROOT = str(Path(syncadvisor.__file__).resolve().parent.parent)
SNIPPET = ("import tensorflow as tf\n"
           "v = tf.Variable(1., synchronization=tf.VariableSynchronization.DEFAULT)\n")
WAIT_S = 30
EMACS_TIMEOUT_S = 90

# Batch Emacs has no command loop and skips the startup's package activation: the
# driver does both where an interactive Emacs does them itself (activating Debian's
# elpa-eglot, then the post-command-hook that `eglot-ensure` connects from).
ACTIVATE = "(package-activate-all)\n"
DRIVER = f"""
(find-file (getenv "SYNCADVISOR_FILE"))
(run-hooks 'post-command-hook)
(let ((deadline (+ (float-time) {WAIT_S})) found)
  (while (and (< (float-time) deadline) (null (setq found (flymake-diagnostics))))
    (accept-process-output nil 0.1))
  (let ((record
         (list :managed (bound-and-true-p eglot--managed-mode)
               :root (let ((server (and (fboundp 'eglot-current-server)
                                        (eglot-current-server))))
                       (and server (expand-file-name (project-root (eglot--project server)))))
               :diagnostics (mapcar (lambda (d) (list (flymake-diagnostic-text d)
                                                      (line-number-at-pos
                                                       (flymake-diagnostic-beg d))))
                                    found))))
    (with-temp-file (getenv "SYNCADVISOR_OUT") (prin1 record (current-buffer)))))
(kill-emacs 0)
"""


@pytest.fixture(scope="module")
def emacs() -> str:
    found = shutil.which("emacs")
    if found is None:
        pytest.skip("emacs is not on PATH (Debian: `apt-get install emacs-nox elpa-eglot`)")
    has_eglot = subprocess.run(
        [found, "--batch", "--eval", "(progn (package-activate-all) (require 'eglot))"],
        capture_output=True, timeout=60)
    if has_eglot.returncode != 0:
        pytest.skip(f"{found} has no eglot (Emacs 28: `apt-get install elpa-eglot`)")
    return found


def _readme_elisp() -> str:
    [block] = re.findall(r"^ *```elisp\n(.*?)^ *```$", README.read_text(encoding="utf-8"),
                         re.M | re.S)
    return textwrap.dedent(block)


def test_the_readmes_eglot_snippet_works_as_written(emacs, tmp_path):
    bin_dir, project = tmp_path / "bin", tmp_path / "project"
    bin_dir.mkdir()
    (project / "pkg").mkdir(parents=True)
    (project / "pyproject.toml").write_text('[project]\nname = "x"\n')
    (project / "pkg" / "snippet.py").write_text(SNIPPET)
    subprocess.run(["git", "init", "-q", str(project)], check=True)  # eglot's project root
    command = bin_dir / "syncadvisor"
    command.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m syncadvisor "$@"\n')
    command.chmod(0o755)
    for name, text in (("activate.el", ACTIVATE), ("init.el", _readme_elisp()),
                       ("driver.el", DRIVER)):
        (tmp_path / name).write_text(text)
    out = tmp_path / "out.el"
    python_path = os.pathsep.join(p for p in (PACKAGE_ROOT, os.environ.get("PYTHONPATH")) if p)
    env = dict(os.environ, HOME=str(tmp_path / "home"), PYTHONPATH=python_path,
               PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
               SYNCADVISOR_FILE="pkg/snippet.py", SYNCADVISOR_OUT=str(out))
    done = subprocess.run(
        [emacs, "--batch", *(arg for name in ("activate.el", "init.el", "driver.el")
                             for arg in ("-l", str(tmp_path / name)))],
        cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=EMACS_TIMEOUT_S)
    context = f"emacs exited {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    assert out.exists(), context
    record = out.read_text()
    assert record.startswith("(:managed t "), (record, context)
    assert f':root "{os.path.realpath(project)}/"' in record or \
        f':root "{project}/"' in record, (record, context)
    # one diagnostic, TFS001, on the second line (flymake counts from 1)
    diagnostics = re.findall(r'\("syncadvisor \[(TFS\d+)\]: .*?" (\d+)\)', record)
    assert diagnostics == [("TFS001", "2")], (record, context)
