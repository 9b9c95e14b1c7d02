"""The language server's benchmark: `python -m syncadvisor server` driven as an editor
drives it, in its own process over standard input and output (JSON-RPC with
Content-Length framing, by the small client below), on three cases:

1. **Edit latency.** A 40-file workspace (`server_workspace.py`): the 300-line training
   file of `editor.py` in a package of layers, models, a trainer and utils that import
   each other. The training file is opened, the index awaited, then `--edits` didChange
   notifications go out one at a time, each changing the learning-rate line; each is
   timed from sending it to receiving the publishDiagnostics for that version of the
   document. Target: p50 within 50 ms.
2. **First diagnostics on a large workspace.** A copy of the benchmark corpus
   (keras+tf_keras) as the workspace folder, its file with the most findings opened right
   after `initialized`:
   the time from `initialized` to the publishDiagnostics that follows the end of the
   index (`$/progress` end: the server publishes every open file again right after it).
   Alternating with it, one cold `syncadvisor check --no-cache -q` of the same folder.
   Target: within the time of one cold check (the medians).
3. **Memory over a long session.** During the edits of case 1: the server's VmRSS
   (`/proc/PID/status`) after the index, and after every 100 edits. Target: bounded (the
   last reading within 10% of the one at 100 edits).
4. **Edit latency in a notebook.** A notebook document (LSP 3.17, as VS Code and
   JupyterLab send one) of 100 code cells and markdown between them
   (`server_notebook.py`), opened with `notebookDocument/didOpen`; then `--notebook-edits`
   didChange notifications of one cell (the learning rate, cell 3), each timed from
   sending it to the publishDiagnostics of that cell's version. Every edit reads and
   checks the whole notebook as one module: the strategy of cell 2 makes the finding
   of the last cell. Target: p50 within 50 ms.

The corpus is copied (hard links where possible) outside the repository: the repository's
`.gitignore` leaves `benchmarks/corpus/` out, and the server, like `check`, honours it.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Optional

from benchmarks.server_workspace import learning_rate_line, write_workspace

LATENCY_TARGET_MS = 50.0
MEMORY_GROWTH_MAX = 0.10
PUBLISH = "textDocument/publishDiagnostics"


def server_argv(jobs: Optional[int]) -> list[str]:
    argv = [sys.executable, "-m", "syncadvisor", "server"]
    return argv + (["--jobs", str(jobs)] if jobs else [])


def _env() -> dict:
    """This process's environment (PYTHONPATH included: the checkout measured is this one)."""
    env = dict(os.environ)
    env.setdefault("PYTHONPATH", str(Path(__file__).resolve().parent.parent))
    return env


def _uri(path: Path) -> str:
    return path.resolve().as_uri()


def rss_mb(pid: int) -> tuple[float, float]:
    """VmRSS and VmHWM (the peak) of `pid`, in MB (10^6 bytes)."""
    values = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                values[key] = int(rest.split()[0]) * 1024 / 1e6
    return values["VmRSS"], values["VmHWM"]


class Client:
    """An LSP client over a server's stdio: requests answered by id, the server's own
    requests (progress tokens, registrations) answered with null, and every notification
    kept, stamped with `time.perf_counter()` when it was read."""

    def __init__(self, argv: list[str], cwd: Path):
        self.argv, self.cwd = argv, cwd
        self.proc: Optional[asyncio.subprocess.Process] = None
        self.notes: list[tuple[float, str, dict]] = []
        self.arrived = asyncio.Event()
        self.pending: dict[int, asyncio.Future] = {}
        self.next_id = 0
        self.stderr = tempfile.TemporaryFile()
        self.reader: Optional[asyncio.Task] = None

    async def start(self) -> None:
        self.proc = await asyncio.create_subprocess_exec(
            *self.argv, cwd=self.cwd, env=_env(), stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self.stderr, limit=1 << 24)
        self.reader = asyncio.ensure_future(self._read())

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def stderr_tail(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")[-600:]

    async def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        stdout = self.proc.stdout
        while True:
            length = None
            while True:
                header = await stdout.readline()
                if not header:
                    self.arrived.set()
                    return  # the server is gone
                header = header.strip()
                if not header:
                    break
                name, _, value = header.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            assert length is not None, "a message without Content-Length"
            message = json.loads(await stdout.readexactly(length))
            stamp = time.perf_counter()
            if "method" in message and "id" in message:
                self._write({"jsonrpc": "2.0", "id": message["id"], "result": None})
            elif "method" in message:
                self.notes.append((stamp, message["method"], message.get("params") or {}))
                self.arrived.set()
            else:
                future = self.pending.pop(message.get("id"), None)
                if future is not None and not future.done():
                    future.set_result(message)

    def _write(self, message: dict) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        body = json.dumps(message).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    async def notify(self, method: str, params: dict) -> float:
        """Send a notification; returns when it was handed to the pipe."""
        assert self.proc is not None and self.proc.stdin is not None
        stamp = time.perf_counter()
        self._write({"jsonrpc": "2.0", "method": method, "params": params})
        await self.proc.stdin.drain()
        return stamp

    async def request(self, method: str, params: Optional[dict], timeout: float) -> dict:
        assert self.proc is not None and self.proc.stdin is not None
        self.next_id += 1
        future = asyncio.get_running_loop().create_future()
        self.pending[self.next_id] = future
        self._write({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        await self.proc.stdin.drain()
        answer = await asyncio.wait_for(future, timeout)
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer.get("result") or {}

    async def wait(self, match: Callable[[str, dict], bool], start: int, timeout: float
                   ) -> tuple[int, float, dict]:
        """The first notification from index `start` on that `match`es: (index, stamp,
        params)."""
        deadline = time.perf_counter() + timeout
        i = start
        while True:
            while i < len(self.notes):
                stamp, method, params = self.notes[i]
                if match(method, params):
                    return i, stamp, params
                i += 1
            assert self.proc is not None
            if self.proc.returncode is not None or self.reader is None or self.reader.done():
                raise RuntimeError(f"the server ended: {self.stderr_tail()}")
            self.arrived.clear()
            left = deadline - time.perf_counter()
            if left <= 0:
                raise TimeoutError(f"no matching notification within {timeout:.0f} s")
            await asyncio.wait_for(self.arrived.wait(), left)

    async def initialize(self, folder: Path, timeout: float) -> dict:
        """The server's capabilities."""
        uri = _uri(folder)
        answer = await self.request("initialize", {
            "processId": os.getpid(), "rootUri": uri,
            "workspaceFolders": [{"uri": uri, "name": folder.name}],
            "capabilities": {
                "window": {"workDoneProgress": True},
                "textDocument": {"publishDiagnostics": {"relatedInformation": True,
                                                        "versionSupport": True},
                                 "synchronization": {"didSave": True}},
                "notebookDocument": {"synchronization": {}},
            }}, timeout)
        return (answer or {}).get("capabilities", {})

    async def close(self) -> None:
        if self.proc is None:
            return
        try:
            await self.request("shutdown", None, 10)
            await self.notify("exit", {})
            await asyncio.wait_for(self.proc.wait(), 10)
        except Exception:  # noqa: BLE001 - a server that does not stop is stopped
            if self.proc.returncode is None:
                self.proc.kill()
                await self.proc.wait()
        if self.reader is not None:
            self.reader.cancel()
        self.stderr.close()


def _published(uri: str, version: Optional[int] = None) -> Callable[[str, dict], bool]:
    return lambda method, params: method == PUBLISH and params.get("uri") == uri and (
        version is None or params.get("version") == version)


def _progress_end(method: str, params: dict) -> bool:
    return method == "$/progress" and (params.get("value") or {}).get("kind") == "end"


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


# --- 1 and 3: edits on the 40-file workspace -------------------------------------------

async def _edits(edits: int, warmup: int, jobs: Optional[int], timeout: float, log) -> dict:
    with tempfile.TemporaryDirectory(prefix="syncadvisor-server-") as scratch:
        root = Path(scratch)
        train = write_workspace(root)
        uri = _uri(train)
        text = train.read_text(encoding="utf-8")
        line = learning_rate_line(text)
        old = text.splitlines()[line]
        client = Client(server_argv(jobs), root)
        await client.start()
        try:
            capabilities = await client.initialize(root, timeout)
            # What the server asks for: the whole text (1) or the changed range (2).
            sync = capabilities.get("textDocumentSync", 2)
            sync = sync.get("change", 2) if isinstance(sync, dict) else sync
            lines = text.splitlines(keepends=True)
            await client.notify("initialized", {})
            await client.notify("textDocument/didOpen", {"textDocument": {
                "uri": uri, "languageId": "python", "version": 0, "text": text}})
            i, _, _ = await client.wait(_progress_end, 0, timeout)
            i, _, first = await client.wait(_published(uri), i, timeout)
            rss_indexed, _ = rss_mb(client.pid)
            latencies: list[float] = []
            rss: list[tuple[int, float]] = []
            for n in range(1, warmup + edits + 1):
                new = f"LEARNING_RATE = 0.001 * {n}"
                lines[line] = new + "\n"
                change = {"text": "".join(lines)} if sync == 1 else {"range": {
                    "start": {"line": line, "character": 0},
                    "end": {"line": line, "character": len(old)}}, "text": new}
                sent = await client.notify("textDocument/didChange", {
                    "textDocument": {"uri": uri, "version": n}, "contentChanges": [change]})
                old = new
                i, got, params = await client.wait(_published(uri, n), i, timeout)
                if n > warmup:
                    latencies.append((got - sent) * 1000)
                    done = n - warmup
                    if done % 100 == 0 or done == edits:
                        rss.append((done, rss_mb(client.pid)[0]))
                        log(f"  server: {done} edits, p50 so far "
                            f"{statistics.median(latencies):.1f} ms, RSS {rss[-1][1]:.1f} MB")
            last_diagnostics = len(params.get("diagnostics", []))
            _, hwm = rss_mb(client.pid)
        except Exception as exc:  # noqa: BLE001 - reported, with the server's stderr
            return {"status": "error", "reason": f"{exc}; server stderr: {client.stderr_tail()}"}
        finally:
            await client.close()
    result = {
        "status": "ok", "edits": edits, "warmup": warmup, "files": 40,
        "train_lines": text.count("\n"), "latencies_ms": latencies,
        "p50_ms": statistics.median(latencies), "p90_ms": _percentile(latencies, 0.9),
        "max_ms": max(latencies), "min_ms": min(latencies),
        "first_diagnostics": len(first.get("diagnostics", [])),
        "last_diagnostics": last_diagnostics,
        "rss_indexed_mb": rss_indexed, "rss_mb": rss, "hwm_mb": hwm,
        "latency_target_ms": LATENCY_TARGET_MS,
    }
    result["latency_verdict"] = "PASS" if result["p50_ms"] <= LATENCY_TARGET_MS else "FAIL"
    at_100 = next((mb for done, mb in rss if done == 100), None)
    if at_100 is None or len(rss) < 2:
        result["memory_verdict"] = "n/a"
    else:
        result["memory_growth"] = rss[-1][1] / at_100 - 1
        result["memory_verdict"] = "PASS" if result["memory_growth"] <= MEMORY_GROWTH_MAX \
            else "FAIL"
    return result


# --- 4: edits of a notebook's cell ----------------------------------------------------

async def _notebook_edits(edits: int, warmup: int, jobs: Optional[int], timeout: float,
                          log) -> dict:
    from benchmarks import server_notebook

    cells = server_notebook.cells()
    with tempfile.TemporaryDirectory(prefix="syncadvisor-server-notebook-") as scratch:
        root = Path(scratch)
        path = root / "tutorial.ipynb"
        path.write_text(json.dumps({"cells": [
            {"cell_type": kind, "metadata": {}, "source": text,
             **({"outputs": [], "execution_count": None} if kind == "code" else {})}
            for kind, text in cells], "metadata": {}, "nbformat": 4, "nbformat_minor": 5},
            indent=1), encoding="utf-8")
        # Cell URIs as VS Code makes them: the notebook's path, a fragment per cell.
        uris = [f"vscode-notebook-cell:{path.resolve()}#W{n}sZmlsZQ%3D%3D"
                for n in range(len(cells))]
        edited = uris[server_notebook.EDITED]
        last = next(uri for uri, (kind, _) in zip(reversed(uris), reversed(cells))
                    if kind == "code")
        client = Client(server_argv(jobs), root)
        await client.start()
        try:
            capabilities = await client.initialize(root, timeout)
            if not capabilities.get("notebookDocumentSync"):
                raise RuntimeError("the server does not take notebook documents")
            await client.notify("initialized", {})
            await client.notify("notebookDocument/didOpen", {
                "notebookDocument": {"uri": _uri(path), "notebookType": "jupyter-notebook",
                                     "version": 1, "cells": [
                                         {"kind": 2 if kind == "code" else 1, "document": uri}
                                         for uri, (kind, _) in zip(uris, cells)]},
                "cellTextDocuments": [
                    {"uri": uri, "languageId": "python" if kind == "code" else "markdown",
                     "version": 1, "text": text}
                    for uri, (kind, text) in zip(uris, cells)]})
            i, _, _ = await client.wait(_progress_end, 0, timeout)
            i, _, first = await client.wait(_published(last), i, timeout)
            latencies: list[float] = []
            for n in range(1, warmup + edits + 1):
                version = n + 1
                sent = await client.notify("notebookDocument/didChange", {
                    "notebookDocument": {"uri": _uri(path), "version": version},
                    "change": {"cells": {"textContent": [{
                        "document": {"uri": edited, "version": version},
                        "changes": [{"text": server_notebook.learning_rate(n)}]}]}}})
                i, got, _ = await client.wait(_published(edited, version), i, timeout)
                if n > warmup:
                    latencies.append((got - sent) * 1000)
                    done = n - warmup
                    if done % 100 == 0 or done == edits:
                        log(f"  server: {done} notebook edits, p50 so far "
                            f"{statistics.median(latencies):.1f} ms")
            # (the last cell's diagnostics go out with each edit's, before or after them)
            final = next(params for _, method, params in reversed(client.notes)
                         if _published(last)(method, params))
        except Exception as exc:  # noqa: BLE001 - reported, with the server's stderr
            return {"status": "error", "reason": f"{exc}; server stderr: {client.stderr_tail()}"}
        finally:
            await client.close()
    code = [text for kind, text in cells if kind == "code"]
    result = {
        "status": "ok", "edits": edits, "warmup": warmup, "cells": len(cells),
        "code_cells": len(code), "code_lines": sum(text.count("\n") for text in code),
        "latencies_ms": latencies, "p50_ms": statistics.median(latencies),
        "p90_ms": _percentile(latencies, 0.9), "max_ms": max(latencies),
        "min_ms": min(latencies), "first_diagnostics": len(first.get("diagnostics", [])),
        "last_diagnostics": len(final.get("diagnostics", [])),
        "latency_target_ms": LATENCY_TARGET_MS,
    }
    result["latency_verdict"] = "PASS" if result["p50_ms"] <= LATENCY_TARGET_MS else "FAIL"
    return result


# --- 2: the first diagnostics of a large workspace -------------------------------------

def corpus_workspace(corpus_root: Path, top_dirs: list[str], into: Path) -> Path:
    """The corpus's folders under `into` (hard links, or copies across file systems)."""
    for top in top_dirs:
        target = into / top
        if target.exists():
            continue
        try:
            shutil.copytree(corpus_root / top, target, copy_function=os.link)
        except OSError:
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(corpus_root / top, target)
    return into


def _open_file(folder: Path, top_dirs: list[str], timeout: float) -> Path:
    """The file an editor has open as the workspace starts: the one with the most
    findings (the first in path order among equals), from an untimed check that also
    brings every file into the page cache, as the harness does before timing."""
    argv = [sys.executable, "-m", "syncadvisor", "check", "--no-cache", "--format", "json",
            "--exit-zero", *top_dirs]
    done = subprocess.run(argv, cwd=folder, env=_env(), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=timeout, check=True)
    counts: dict[str, int] = {}
    for finding in json.loads(done.stdout):
        counts[finding["path"]] = counts.get(finding["path"], 0) + 1
    if not counts:
        raise RuntimeError("the corpus has no finding: no file to open")
    return folder / min(counts, key=lambda path: (-counts[path], path))


async def _first_diagnostics(folder: Path, opened: Path, jobs: Optional[int],
                             timeout: float) -> dict:
    uri = _uri(opened)
    client = Client(server_argv(jobs), folder)
    await client.start()
    try:
        await client.initialize(folder, timeout)
        started = await client.notify("initialized", {})
        await client.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": "python", "version": 0,
            "text": opened.read_text(encoding="utf-8")}})
        _, early, _ = await client.wait(_published(uri), 0, timeout)
        i, ended, _ = await client.wait(_progress_end, 0, timeout)
        _, got, params = await client.wait(_published(uri), i, timeout)
        return {"seconds": got - started, "early_s": early - started,
                "progress_end_s": ended - started, "rss_mb": rss_mb(client.pid)[0],
                "diagnostics": len(params.get("diagnostics", []))}
    finally:
        await client.close()


def _cold_check(folder: Path, top_dirs: list[str], jobs: Optional[int], timeout: float
                ) -> dict:
    argv = [sys.executable, "-m", "syncadvisor", "check", "--no-cache", "-q", *top_dirs]
    if jobs:
        argv[4:4] = ["--jobs", str(jobs)]
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=folder, env=_env(), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=timeout)
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1) or b"Traceback" in done.stderr:
        raise RuntimeError(f"check exited {done.returncode}: {done.stderr[-400:].decode()}")
    return {"seconds": seconds, "findings": done.stdout.count(b"\n")}


def run_large(corpus, repeats: int, jobs: Optional[int], timeout: float, log) -> dict:
    top_dirs = sorted({Path(f).parts[0] for f in corpus.files})
    with tempfile.TemporaryDirectory(prefix="syncadvisor-server-corpus-") as scratch:
        folder = corpus_workspace(corpus.root, top_dirs, Path(scratch))
        server: list[dict] = []
        check: list[dict] = []
        try:
            opened = _open_file(folder, top_dirs, timeout)
            for n in range(repeats):
                order = ("server", "check") if n % 2 == 0 else ("check", "server")
                for what in order:
                    if what == "server":
                        server.append(asyncio.run(_first_diagnostics(folder, opened, jobs,
                                                                     timeout)))
                        log(f"  server: first diagnostics after the index in "
                            f"{server[-1]['seconds']:.2f} s")
                    else:
                        check.append(_cold_check(folder, top_dirs, jobs, timeout))
                        log(f"  server: cold check in {check[-1]['seconds']:.2f} s")
        except Exception as exc:  # noqa: BLE001 - reported as the row's status
            return {"status": "error", "reason": str(exc)}
    seconds = [r["seconds"] for r in server]
    cold = [r["seconds"] for r in check]
    result = {
        "status": "ok", "label": corpus.label, "files": len(corpus.files), "lines": corpus.lines,
        "opened": str(opened.relative_to(folder)),
        "opened_diagnostics": server[-1]["diagnostics"], "repeats": repeats, "server": server,
        "check": check, "server_median_s": statistics.median(seconds),
        "server_min_s": min(seconds), "server_max_s": max(seconds),
        "early_median_s": statistics.median(r["early_s"] for r in server),
        "check_median_s": statistics.median(cold), "check_min_s": min(cold),
        "check_max_s": max(cold),
    }
    result["ratio"] = result["server_median_s"] / result["check_median_s"]
    result["verdict"] = "PASS" if result["ratio"] <= 1.0 else "FAIL"
    return result


def run_server_bench(edits: int, warmup: int, repeats: int, jobs: Optional[int],
                     corpus, timeout: float, log, large_edits: int = 0,
                     notebook_edits: int = 0) -> dict:
    from benchmarks.harness import _loadavg

    out: dict = {"argv": server_argv(jobs), "loadavg_before": _loadavg()}
    log(f"[server] {edits} edits on the 40-file workspace")
    out["edits"] = asyncio.run(_edits(edits, warmup, jobs, timeout, log))
    if notebook_edits > 0:
        log(f"[server] {notebook_edits} edits of a cell of a 100-cell notebook")
        out["notebook"] = asyncio.run(_notebook_edits(notebook_edits, warmup, jobs, timeout,
                                                      log))
    if corpus is not None and repeats > 0:
        log(f"[server] first diagnostics on {corpus.label}, {repeats} runs alternating with "
            f"a cold check")
        out["large"] = run_large(corpus, repeats, jobs, timeout, log)
    if corpus is not None and large_edits > 0:
        from benchmarks.server_large import run_large_edits

        log(f"[server] {large_edits} edits of each kind on {corpus.label} as one workspace")
        out["large_edits"] = run_large_edits(corpus, large_edits, jobs, timeout, log)
    out["loadavg_after"] = _loadavg()
    return out


def format_server(res: dict, machine: dict | None = None) -> str:
    from benchmarks.report import _machine_line

    lines = [f"== language server: `{' '.join(['python'] + res['argv'][1:])}` over stdio"]
    if machine:
        lines.append(_machine_line(machine))
    la = res.get("loadavg_before"), res.get("loadavg_after")
    if la[0] and la[1]:
        lines.append(f"   load average (1/5/15 min) before {'/'.join(map(str, la[0]))}, "
                     f"after {'/'.join(map(str, la[1]))}: other work on the machine skews timings")
    ed = res["edits"]
    if ed.get("status") != "ok":
        lines.append(f"   edits on the 40-file workspace: {ed.get('status')} ({ed.get('reason')})")
    else:
        lines += [
            f"   edit latency, didChange -> publishDiagnostics of that version: {ed['files']}-file "
            f"workspace, {ed['train_lines']}-line file open, {ed['edits']} edits one at a time "
            f"({ed['warmup']} before, untimed)",
            f"      p50 {ed['p50_ms']:.1f} ms   p90 {ed['p90_ms']:.1f} ms   "
            f"max {ed['max_ms']:.1f} ms   min {ed['min_ms']:.1f} ms   "
            f"({ed['last_diagnostics']} diagnostics each)",
            f"   server RSS: {ed['rss_indexed_mb']:.1f} MB indexed, "
            + ", ".join(f"{mb:.1f} after {done}" for done, mb in ed["rss_mb"])
            + f" edits; peak {ed['hwm_mb']:.1f} MB",
            f"  [{ed['latency_verdict']:<6}] edit latency p50 <= {ed['latency_target_ms']:g} ms: "
            f"{ed['p50_ms']:.1f} ms",
        ]
        if ed["memory_verdict"] == "n/a":
            lines.append("  [n/a   ] memory bounded: needs more than 100 edits (RSS after 100 and "
                         "after the last)")
        else:
            lines.append(f"  [{ed['memory_verdict']:<6}] memory bounded (RSS after the last edit "
                         f"<= +{MEMORY_GROWTH_MAX:.0%} of after 100): "
                         f"{ed['memory_growth']:+.1%}")
    nb = res.get("notebook")
    if nb is not None and nb.get("status") != "ok":
        lines.append(f"   edits of a notebook's cell: {nb.get('status')} ({nb.get('reason')})")
    elif nb is not None:
        lines += [
            f"   notebook edit latency, notebookDocument/didChange of a cell -> its "
            f"publishDiagnostics: {nb['cells']} cells ({nb['code_cells']} code, "
            f"{nb['code_lines']} lines), {nb['edits']} edits one at a time "
            f"({nb['warmup']} before, untimed)",
            f"      p50 {nb['p50_ms']:.1f} ms   p90 {nb['p90_ms']:.1f} ms   "
            f"max {nb['max_ms']:.1f} ms   min {nb['min_ms']:.1f} ms   (the last cell's "
            f"finding: {nb['first_diagnostics']} first, {nb['last_diagnostics']} last)",
            f"  [{nb['latency_verdict']:<6}] notebook edit latency p50 <= "
            f"{nb['latency_target_ms']:g} ms: {nb['p50_ms']:.1f} ms",
        ]
    large = res.get("large")
    if large is not None and large.get("status") != "ok":
        lines.append(f"   first diagnostics on the corpus: {large.get('status')} "
                     f"({large.get('reason')})")
    elif large is not None:
        lines += [
            f"   first diagnostics of {large['label']} ({large['files']:,} files, "
            f"{large['lines']:,} lines) as the workspace folder, {large['opened']} open "
            f"({large['opened_diagnostics']} diagnostics); {large['repeats']} runs each, "
            f"alternating",
            f"      server: initialized -> publish after the index  median "
            f"{large['server_median_s']:.2f} s ({large['server_min_s']:.2f}-"
            f"{large['server_max_s']:.2f}); its publish before the index: median "
            f"{large['early_median_s']:.2f} s",
            f"      cold `syncadvisor check --no-cache -q` of the same folder  median "
            f"{large['check_median_s']:.2f} s ({large['check_min_s']:.2f}-"
            f"{large['check_max_s']:.2f})",
            f"  [{large['verdict']:<6}] first diagnostics <= one cold check: "
            f"{large['ratio']:.2f}x",
        ]
    if res.get("large_edits") is not None:
        from benchmarks.server_large import format_large_edits

        lines += format_large_edits(res["large_edits"])
    return "\n".join(lines)


def build_parser():
    import argparse

    p = argparse.ArgumentParser(
        prog="python -m benchmarks server", allow_abbrev=False,
        description="Time `syncadvisor server` as an editor drives it over stdio: the latency "
                    "from a didChange to its publishDiagnostics on a 40-file workspace, the "
                    "server's memory over the edits, and the first diagnostics on the corpus "
                    "against one cold check.")
    p.add_argument("--edits", type=int, default=1000, metavar="N",
                   help="timed edits, one at a time (default: %(default)s)")
    p.add_argument("--warmup", type=int, default=5, metavar="N",
                   help="untimed edits before them (default: %(default)s)")
    p.add_argument("--repeats", type=int, default=3, metavar="N",
                   help="runs of the server and of a cold check on the corpus, alternating; "
                        "0: no corpus case (default: %(default)s)")
    p.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="--jobs for the server and the check (default: theirs, the CPU count)")
    p.add_argument("--large-edits", type=int, default=20, metavar="N",
                   help="timed edits of each kind on the corpus as one workspace (comment, "
                        "finding, signature); 0: none (default: %(default)s)")
    p.add_argument("--notebook-edits", type=int, default=200, metavar="N",
                   help="timed edits of one cell of a 100-cell notebook document; 0: none "
                        "(default: %(default)s)")
    p.add_argument("--corpus", choices=["keras+tf_keras", "tensorflow"], default="keras+tf_keras",
                   help="the corpus of the first-diagnostics case (default: %(default)s)")
    p.add_argument("--corpus-path", type=Path, metavar="DIR",
                   help="the .py files under DIR instead (no download)")
    p.add_argument("--timeout", type=float, default=600.0, metavar="S",
                   help="the longest wait for one answer of the server or one check (default: "
                        "%(default)s)")
    p.add_argument("--results", type=Path, default=Path(__file__).resolve().parent / "RESULTS.md",
                   metavar="FILE", help="append the table to FILE (default: benchmarks/RESULTS.md)")
    p.add_argument("--no-results", action="store_true", help="append nothing to a results file")
    p.add_argument("--json", type=Path, metavar="FILE", help="write all raw numbers to FILE")
    return p


def main(argv: list[str]) -> int:
    from benchmarks import corpus as corpus_mod
    from benchmarks.cli import _append_results, _fresh_bytecode, _log
    from benchmarks.report import machine_info

    args = build_parser().parse_args(argv)
    if args.edits < 1 or args.warmup < 0 or args.repeats < 0 or args.large_edits < 0 or \
            args.notebook_edits < 0:
        _log("--edits must be at least 1, --warmup, --repeats, --large-edits and "
             "--notebook-edits at least 0")
        return 2
    started = time.perf_counter()
    machine = machine_info()
    _fresh_bytecode()
    corpus = None
    if args.repeats or args.large_edits:
        if args.corpus_path:
            corpus = corpus_mod.corpus_from_path(args.corpus_path)
        else:
            label, names = corpus_mod.CORPUS_CHOICES[args.corpus][0]
            corpus = corpus_mod.load_corpus(label, names)
    res = run_server_bench(args.edits, args.warmup, args.repeats, args.jobs, corpus,
                           args.timeout, _log, args.large_edits, args.notebook_edits)
    text = format_server(res, machine)
    print("\n" + text, flush=True)
    seconds = time.perf_counter() - started
    print(f"\n(total harness time {seconds:.0f} s)")
    if not args.no_results:
        _append_results(args.results, machine, ["server", *argv], [text], seconds)
        _log(f"[bench] table appended to {args.results}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"machine": machine, "argv": ["server", *argv],
                                         "server": res, "total_seconds": seconds}, indent=2))
        _log(f"[bench] raw numbers written to {args.json}")
    failed = [r for r in (res["edits"], res.get("notebook"), res.get("large"),
                          res.get("large_edits"))
              if r and r.get("status") != "ok"]
    return 1 if failed else 0
