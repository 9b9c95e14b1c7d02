"""`syncadvisor server` in a real editor: Neovim, headless, starts it through its
built-in LSP client, opens a file, and a Lua script records the diagnostics Neovim
received, applies a code action through Neovim and writes the file. The test reads
what the script recorded and the file on disk."""
from __future__ import annotations

import json
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

SNIPPET = textwrap.dedent("""\
    import tensorflow as tf
    v = tf.Variable(1., synchronization=tf.VariableSynchronization.DEFAULT)
""")
# The checkout (or installation) under test: the server Neovim starts imports it too.
PACKAGE_ROOT = str(Path(syncadvisor.__file__).resolve().parent.parent)
SERVER = [sys.executable, "-m", "syncadvisor", "server", "--jobs", "1"]
# Every wait inside Neovim is bounded by WAIT_MS, and Neovim itself by the subprocess
# timeout: a broken server fails the test with what happened, never hangs it.
WAIT_MS = 20000
NVIM_TIMEOUT_S = 90

# Run as `nvim -c 'luafile driver.lua'`; reads its settings from `$SYNCADVISOR_NVIM`
# (JSON) and writes what happened to its `out` file, then quits (1 on any failure).
DRIVER = r"""
local cfg = vim.fn.json_decode(table.concat(vim.fn.readfile(vim.env.SYNCADVISOR_NVIM), "\n"))
local record = { steps = {} }

local function step(what) table.insert(record.steps, what) end

local function finish(ok)
  record.ok = ok
  vim.fn.writefile({ vim.fn.json_encode(record) }, cfg.out)
  if ok then vim.cmd("qa!") else vim.cmd("cquit 1") end
end

local function wait_for(what, condition)
  step("waiting for " .. what)
  if not vim.wait(cfg.wait_ms, condition, 20) then
    error("timed out after " .. cfg.wait_ms .. " ms waiting for " .. what)
  end
end

local function snapshot(bufnr)
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(found, { code = d.code, severity = d.severity, lnum = d.lnum, col = d.col,
                          message = d.message, source = d.source })
  end
  return found
end

local function main()
  local exited = nil
  local client_id = vim.lsp.start_client({
    name = "syncadvisor",
    cmd = cfg.cmd,
    cmd_env = cfg.env,
    root_dir = cfg.root,
    workspace_folders = { { uri = vim.uri_from_fname(cfg.root), name = "workspace" } },
    on_exit = function(code, signal) exited = { code = code, signal = signal } end,
  })
  if not client_id then error("vim.lsp.start_client refused the configuration") end
  step("client started")

  vim.cmd("edit " .. vim.fn.fnameescape(cfg.file))
  local bufnr = vim.api.nvim_get_current_buf()
  vim.bo[bufnr].filetype = "python"
  if not vim.lsp.buf_attach_client(bufnr, client_id) then error("buf_attach_client failed") end

  local function server_alive()
    if exited then
      error(string.format("the server exited (code %s, signal %s)", exited.code, exited.signal))
    end
  end
  wait_for("diagnostics", function()
    server_alive()
    return #vim.diagnostic.get(bufnr) > 0
  end)
  record.before = snapshot(bufnr)
  local client = vim.lsp.get_client_by_id(client_id)
  record.offset_encoding = client.offset_encoding

  -- What `vim.lsp.buf.code_action()` sends: the range, and the line's diagnostics
  -- as LSP ones (byte columns as characters: the snippet is ASCII).
  local function range(d)
    return { start = { line = d.lnum, character = d.col },
             ["end"] = { line = d.end_lnum, character = d.end_col } }
  end
  local first = vim.diagnostic.get(bufnr)[1]
  local context = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr, { lnum = first.lnum })) do
    table.insert(context, { range = range(d), severity = d.severity, message = d.message,
                            source = d.source, code = d.code })
  end
  local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) }, range = range(first),
                   context = { diagnostics = context } }
  step("asking for code actions")
  local answers, err = vim.lsp.buf_request_sync(bufnr, "textDocument/codeAction", params,
                                                cfg.wait_ms)
  if not answers then error("codeAction: " .. tostring(err)) end
  local answer = answers[client_id]
  if not answer then error("codeAction: no answer from the server") end
  if answer.error then error("codeAction: " .. vim.inspect(answer.error)) end
  local actions = answer.result or {}
  record.actions = {}
  local chosen = nil
  for _, action in ipairs(actions) do
    table.insert(record.actions, { title = action.title, kind = action.kind,
                                   isPreferred = action.isPreferred == true })
    local wanted = (cfg.pick == "preferred" and action.isPreferred)
      or (cfg.pick ~= "preferred" and action.title:find(cfg.pick, 1, true) ~= nil)
    if chosen == nil and wanted then chosen = action end
  end
  if chosen == nil then error("no code action matches " .. cfg.pick) end
  if not chosen.edit then error("the chosen action has no edit: " .. vim.inspect(chosen)) end
  record.chosen = chosen.title
  record.edit_form = chosen.edit.documentChanges and "documentChanges"
    or (chosen.edit.changes and "changes") or "none"

  local before = vim.api.nvim_buf_get_lines(bufnr, 0, -1, true)
  step("applying the edit")
  -- Handles `changes` and `documentChanges` both; a `documentChanges` edit for an
  -- older version is dropped silently (a message only), hence the check below.
  vim.lsp.util.apply_workspace_edit(chosen.edit, client.offset_encoding)
  if vim.deep_equal(before, vim.api.nvim_buf_get_lines(bufnr, 0, -1, true)) then
    error("applying the edit changed nothing: " .. vim.inspect(chosen.edit))
  end
  vim.cmd("write")
  step("written")

  wait_for("the diagnostics to clear", function()
    server_alive()
    return #vim.diagnostic.get(bufnr) == 0
  end)
  record.after = snapshot(bufnr)
  record.buffer = vim.api.nvim_buf_get_lines(bufnr, 0, -1, true)
end

local ok, err = xpcall(main, debug.traceback)
if not ok then record.error = tostring(err) end
finish(ok)
"""


def _nvim_version(nvim: str):
    try:
        first = subprocess.run([nvim, "--version"], capture_output=True, text=True,
                               timeout=30).stdout.splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        return None
    match = re.match(r"NVIM v(\d+)\.(\d+)", first)
    return (int(match.group(1)), int(match.group(2))) if match else None


@pytest.fixture(scope="module")
def nvim() -> str:
    found = shutil.which("nvim")
    if found is None:
        pytest.skip("nvim is not on PATH (Debian: `apt-get install neovim`)")
    version = _nvim_version(found)
    if version is None or version < (0, 7):
        pytest.skip(f"{found} is Neovim {version}; this test needs 0.7 or newer")
    return found


def _drive(nvim: str, root: Path, pick: str) -> dict:
    """Neovim opens `root/snippet.py`, applies the code action `pick` chose ("preferred",
    or a part of its title) and writes the file; what it recorded."""
    (root / "workspace").mkdir()
    snippet = root / "workspace" / "snippet.py"
    snippet.write_text(SNIPPET)
    (root / "driver.lua").write_text(DRIVER)
    out = root / "out.json"
    python_path = os.pathsep.join(
        p for p in (PACKAGE_ROOT, os.environ.get("PYTHONPATH")) if p)
    (root / "settings.json").write_text(json.dumps({
        "cmd": SERVER, "env": {"PYTHONPATH": python_path},
        "root": str(root / "workspace"), "file": str(snippet), "pick": pick,
        "out": str(out), "wait_ms": WAIT_MS}))
    # Neovim's own files (the LSP log with the server's stderr) stay under `root`.
    env = dict(os.environ, SYNCADVISOR_NVIM=str(root / "settings.json"))
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        env[name] = str(root / name.lower())
    done = subprocess.run(
        [nvim, "--headless", "--clean", "-u", "NONE", "-i", "NONE", "-n",
         "-c", f"luafile {root / 'driver.lua'}"],
        cwd=root / "workspace", env=env, stdin=subprocess.DEVNULL, capture_output=True,
        text=True, timeout=NVIM_TIMEOUT_S)
    logs = "\n".join(p.read_text(errors="replace")[-4000:]
                     for p in (root / "xdg_cache_home").rglob("*.log"))
    context = (f"nvim exited {done.returncode}\nstdout: {done.stdout[-2000:]}\n"
               f"stderr: {done.stderr[-2000:]}\nNeovim's logs:\n{logs}")
    assert out.exists(), f"the driver wrote nothing\n{context}"
    record = json.loads(out.read_text())
    assert record["ok"] and done.returncode == 0, \
        f"{record.get('error')}\nsteps: {record['steps']}\n{context}"
    record["disk"] = snippet.read_text()
    return record


def test_neovim_shows_the_error_and_applies_its_quick_fix(nvim, tmp_path):
    record = _drive(nvim, tmp_path, "preferred")
    [diagnostic] = record["before"]
    assert diagnostic["code"] == "TFS001"
    assert diagnostic["severity"] == 1  # vim.diagnostic.severity.ERROR
    assert diagnostic["source"] == "syncadvisor"
    # at the value, on the second line (0-based, as Neovim counts)
    assert (diagnostic["lnum"], diagnostic["col"]) == (1, 36)
    assert SNIPPET.splitlines()[1][36:].startswith("tf.VariableSynchronization.DEFAULT")
    assert record["chosen"].startswith("TFS001:") and "AUTO" in record["chosen"]
    assert "unsafe" not in record["chosen"]
    assert any("noqa" in a["title"] for a in record["actions"])
    assert "VariableSynchronization.AUTO" in record["disk"]
    assert "DEFAULT" not in record["disk"]
    assert record["after"] == []


def test_neovim_applies_the_noqa_action_and_the_finding_goes(nvim, tmp_path):
    record = _drive(nvim, tmp_path, "# noqa: TFS001")
    assert [d["code"] for d in record["before"]] == ["TFS001"]
    lines = record["disk"].splitlines()
    assert lines[1].endswith("# noqa: TFS001")
    assert "VariableSynchronization.DEFAULT" in lines[1]  # the code itself untouched
    assert record["after"] == []


# --- README.md's snippets, as written -------------------------------------------------------

README = Path(__file__).resolve().parents[2] / "README.md"
PROBE = r"""
local ok = vim.wait(tonumber(vim.env.SYNCADVISOR_WAIT_MS), function()
  return #vim.diagnostic.get(0) > 0
end, 50)
local record = { ok = ok, diagnostics = {}, clients = {} }
for _, d in ipairs(vim.diagnostic.get(0)) do
  table.insert(record.diagnostics, { code = d.code, lnum = d.lnum })
end
for _, c in pairs(vim.lsp.get_active_clients()) do
  table.insert(record.clients, { name = c.name, root = c.config.root_dir })
end
vim.fn.writefile({ vim.fn.json_encode(record) }, vim.env.SYNCADVISOR_OUT)
vim.cmd("qa!")
"""


def _readme_lua(marker: str) -> str:
    blocks = re.findall(r"^ *```lua\n(.*?)^ *```$", README.read_text(encoding="utf-8"),
                        re.M | re.S)
    [block] = [b for b in blocks if marker in b]
    return textwrap.dedent(block)


@pytest.mark.parametrize("needs, marker", [((0, 7), "vim.lsp.start_client("),
                                           ((0, 8), "vim.lsp.start({")])
def test_the_readmes_snippet_works_as_written(nvim, tmp_path, needs, marker):
    """The README's `init.lua` for this Neovim, unchanged, with `syncadvisor` on PATH: a
    Python file opened in a subfolder of a project gets its diagnostic, from a server whose
    root is the project's (the folder of its pyproject.toml)."""
    if _nvim_version(nvim) < needs:
        pytest.skip(f"the snippet is for Neovim {needs[0]}.{needs[1]} and newer")
    bin_dir, project = tmp_path / "bin", tmp_path / "project"
    bin_dir.mkdir()
    (project / "pkg").mkdir(parents=True)
    (project / "pyproject.toml").write_text('[project]\nname = "x"\n')
    (project / "pkg" / "snippet.py").write_text(SNIPPET)
    command = bin_dir / "syncadvisor"
    command.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m syncadvisor "$@"\n')
    command.chmod(0o755)
    (tmp_path / "init.lua").write_text(_readme_lua(marker))
    (tmp_path / "probe.lua").write_text(PROBE)
    out = tmp_path / "out.json"
    python_path = os.pathsep.join(p for p in (PACKAGE_ROOT, os.environ.get("PYTHONPATH")) if p)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
               PYTHONPATH=python_path, SYNCADVISOR_OUT=str(out),
               SYNCADVISOR_WAIT_MS=str(WAIT_MS))
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        env[name] = str(tmp_path / name.lower())
    done = subprocess.run(
        [nvim, "--headless", "-u", str(tmp_path / "init.lua"), "-i", "NONE", "-n",
         "-c", f"luafile {tmp_path / 'probe.lua'}", "pkg/snippet.py"],
        cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=NVIM_TIMEOUT_S)
    context = f"nvim exited {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    assert out.exists(), context
    record = json.loads(out.read_text())
    assert record["ok"], (record, context)
    assert [(d["code"], d["lnum"]) for d in record["diagnostics"]] == [("TFS001", 1)]
    assert [(c["name"], os.path.realpath(c["root"])) for c in record["clients"]] == \
        [("syncadvisor", os.path.realpath(project))]
