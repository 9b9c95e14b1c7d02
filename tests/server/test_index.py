"""`syncadvisor server` indexing a workspace large enough for worker processes, started
as users start it (`--jobs 2`), through a real LSP client over standard input and output."""
from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

pytest.importorskip("pygls")
pytest_lsp = pytest.importorskip("pytest_lsp")

from lsprotocol import types as lsp  # noqa: E402
from pygls.uris import from_fs_path  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient  # noqa: E402

from syncadvisor.engine.parallel import POOL_THRESHOLD  # noqa: E402

pytestmark = pytest.mark.asyncio(loop_scope="function")

SERVER = [sys.executable, "-m", "syncadvisor", "server", "--jobs", "2"]

FINDING = "v = tf.Variable(1., synchronization=tf.VariableSynchronization.DEFAULT)\n"
STEP = '''

def update_{i}(x):
    total_{i} = tf.Variable(0.0, trainable=False, aggregation=tf.VariableAggregation.SUM)
    total_{i}.assign_add(tf.reduce_sum(x))
    return total_{i}
'''


def _module(n: int) -> str:
    return "import tensorflow as tf\n" + "".join(STEP.format(i=i) for i in range(n))


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def client(lsp_client: LanguageClient, tmp_path: Path):
    # More source that may hold a finding than the engine models in this process alone:
    # the index forks worker processes.
    module = _module(150)
    for i in range(POOL_THRESHOLD // len(module) + 3):
        (tmp_path / f"part_{i}.py").write_text(module)
    (tmp_path / "snippet.py").write_text("import tensorflow as tf\n" + FINDING)
    await lsp_client.initialize_session(lsp.InitializeParams(
        capabilities=lsp.ClientCapabilities(
            window=lsp.WindowClientCapabilities(work_done_progress=True)),
        root_uri=from_fs_path(str(tmp_path)),
        workspace_folders=[lsp.WorkspaceFolder(uri=from_fs_path(str(tmp_path)), name="w")]))
    lsp_client.root = tmp_path  # type: ignore[attr-defined]
    yield
    try:
        await asyncio.wait_for(lsp_client.shutdown_session(), 20)
    except asyncio.TimeoutError:  # a server whose index never ends never exits either
        lsp_client._server.kill()
        raise


async def test_the_index_in_worker_processes_ends(client):
    # The protocol's reader thread waits inside standard input's buffer whenever no
    # message is coming in, as here while the index forks its workers: a worker that
    # closed that buffer as it started waited for ever on its lock, and so did the index.
    uri = from_fs_path(str(client.root / "snippet.py"))
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(text_document=lsp.TextDocumentItem(
        uri=uri, language_id="python", version=1,
        text=(client.root / "snippet.py").read_text())))

    async def indexed() -> None:
        while not any(isinstance(value, lsp.WorkDoneProgressEnd)
                      for values in client.progress_reports.values() for value in values):
            await client.wait_for_notification("$/progress")

    await asyncio.wait_for(indexed(), 60)
    # (the server publishes the open file again right after the end; it may be in already)
    while uri not in client.diagnostics:
        await asyncio.wait_for(
            client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), 30)
    assert [d.code for d in client.diagnostics[uri]] == ["TFS001"]
