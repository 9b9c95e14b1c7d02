"""The server's protocol over many messages, in this process: what it keeps between them."""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import List

import pytest

pytest.importorskip("pygls")

from pygls.uris import from_fs_path  # noqa: E402

from syncadvisor.server.lsp import build  # noqa: E402

pytestmark = pytest.mark.asyncio(loop_scope="function")

TEXT = ("import tensorflow as tf\n"
        "v = tf.Variable(1., synchronization=tf.VariableSynchronization.DEFAULT)\n")


class _Sink:
    """A writer that keeps what the server sends."""

    def __init__(self) -> None:
        self.sent: List[bytes] = []

    def write(self, data: bytes) -> None:
        self.sent.append(data)

    def close(self) -> None:
        pass


async def test_edits_leave_no_pending_future_behind(tmp_path: Path):
    # pygls keeps the future of a notification whose own handler is a generator (didOpen,
    # didChange, didClose) among the requests awaiting an answer, under a new id, and
    # nothing takes it out: one per keystroke for the whole session.
    (tmp_path / "snippet.py").write_text(TEXT)
    server = build(jobs=1)
    protocol = server.protocol
    protocol.set_writer(_Sink())
    root, uri = from_fs_path(str(tmp_path)), from_fs_path(str(tmp_path / "snippet.py"))

    def receive(message: dict) -> None:
        protocol.handle_message(protocol.structure_message({"jsonrpc": "2.0", **message}))

    receive({"id": 1, "method": "initialize", "params": {
        "processId": None, "rootUri": root, "capabilities": {}}})
    receive({"method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri, "languageId": "python", "version": 0, "text": TEXT}}})
    await asyncio.sleep(0)
    for version in range(1, 51):
        receive({"method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"text": TEXT + f"# {version}\n"}]}})
        await asyncio.sleep(0)  # (the edit's diagnostics)
    receive({"method": "textDocument/didClose", "params": {"textDocument": {"uri": uri}}})
    assert len(protocol.writer.sent) > 50  # (every edit was diagnosed)
    assert protocol._request_futures == {}
