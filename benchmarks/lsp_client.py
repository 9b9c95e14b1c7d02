"""A language-server client for the server benchmarks: the server started as users start
it, spoken to over stdio (JSON-RPC with Content-Length headers), and the helpers the
benchmarks share to time it (`server.py`, `server_large.py`, `server_notebook.py`)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Optional

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
