"""The VS Code extension (editors/vscode/): what the Python suite can check without Node,
and its own `npm test` where Node and its installed dependencies are here (`.ci/run`
installs them with `npm ci` before the suite runs)."""
from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from syncadvisor.cli import build_parser
from tests import paths

EXTENSION = paths.REPO / "editors" / "vscode"


def _manifest() -> dict:
    return json.loads((EXTENSION / "package.json").read_text(encoding="utf-8"))


def test_every_dependency_is_pinned_and_locked():
    """Exact versions in package.json, and the committed lockfile agrees with them and
    pins every package it installs by its hash."""
    manifest = _manifest()
    lock = json.loads((EXTENSION / "package-lock.json").read_text(encoding="utf-8"))
    root = lock["packages"][""]
    for group in ("dependencies", "devDependencies"):
        for name, version in manifest[group].items():
            assert re.fullmatch(r"\d+\.\d+\.\d+", version), (name, version)
        assert root[group] == manifest[group], group
    for where, package in lock["packages"].items():
        if where and not package.get("link"):
            assert package.get("integrity"), where


def test_what_git_and_the_vsix_leave_out():
    ignored = (EXTENSION / ".gitignore").read_text(encoding="utf-8").split()
    assert {"node_modules/", "out/", "dist/", "*.vsix"} <= set(ignored)
    # The .vsix holds the esbuild bundle (dist/extension.js, the manifest's `main`), not
    # the sources, the tests or a node_modules tree.
    left_out = (EXTENSION / ".vscodeignore").read_text(encoding="utf-8").split()
    assert {"src/**", "test/**", "out/**", "node_modules/**"} <= set(left_out)
    assert _manifest()["main"] == "./dist/extension.js"


def test_it_starts_on_python_files_and_notebooks_with_a_command_the_server_takes():
    manifest = _manifest()
    assert {"onLanguage:python", "onNotebook:jupyter-notebook"} <= \
        set(manifest["activationEvents"])
    settings = manifest["contributes"]["configuration"]["properties"]
    assert {"syncadvisor.path", "syncadvisor.interpreter", "syncadvisor.jobs"} <= set(settings)
    # The command lines it builds (src/command.ts): `syncadvisor server [--jobs N]`.
    args = build_parser().parse_args(["server", "--jobs", "2"])
    assert (args.command, args.jobs) == ("server", 2)


def test_the_readme_says_how_to_install_the_vsix():
    readme = (paths.REPO / "README.md").read_text(encoding="utf-8")
    assert "code --install-extension" in readme and "editors/vscode" in readme


@pytest.mark.skipif(shutil.which("node") is None or shutil.which("npm") is None,
                    reason="Node.js is not installed")
def test_the_extensions_own_tests_pass():
    if not (EXTENSION / "node_modules").is_dir():
        pytest.skip("editors/vscode/node_modules is missing: run `npm ci` there (.ci/run does)")
    result = subprocess.run(["npm", "test"], cwd=EXTENSION, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert re.search(r"^# fail 0$", result.stdout, re.M), result.stdout[-3000:]
