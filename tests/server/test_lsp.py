"""`syncadvisor server` through a real LSP client over standard input and output
(pytest-lsp): the server runs as users start it, in its own process."""
from __future__ import annotations

import asyncio
import os
import sys
import textwrap
from pathlib import Path
from typing import List

import pytest

pytest.importorskip("pygls")
pytest_lsp = pytest.importorskip("pytest_lsp")

from lsprotocol import types as lsp  # noqa: E402
from pygls.exceptions import JsonRpcException  # noqa: E402
from pygls.uris import from_fs_path  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient  # noqa: E402

from syncadvisor.lines import physical_lines  # noqa: E402

pytestmark = pytest.mark.asyncio(loop_scope="function")

SERVER = [sys.executable, "-m", "syncadvisor", "server", "--jobs", "1"]

DEFAULT = textwrap.dedent("""\
    import tensorflow as tf
    v = tf.Variable(1., synchronization=tf.VariableSynchronization.DEFAULT)
""")
MODEL = textwrap.dedent("""\
    import tensorflow as tf


    class Meter(tf.Module):
        def __init__(self):
            self.loss_ema = tf.Variable(0.0, trainable=False)

        def update(self, loss):
            self.loss_ema.assign(0.9 * self.loss_ema + 0.1 * loss)
""")
TRAIN = textwrap.dedent("""\
    import tensorflow as tf

    from pkg.model import Meter

    strategy = tf.distribute.MirroredStrategy()
    with strategy.scope():
        meter = Meter()


    @tf.function
    def step(x):
        meter.update(tf.reduce_mean(x))
""")
RUN = "    strategy.run(meter.update, args=(tf.reduce_mean(x),))\n"


def _workspace(root: Path) -> None:
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "model.py").write_text(MODEL)
    (root / "pkg" / "train.py").write_text(TRAIN)
    (root / "snippet.py").write_text(DEFAULT)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def client(lsp_client: LanguageClient, tmp_path: Path):
    _workspace(tmp_path)
    capabilities = lsp.ClientCapabilities(
        window=lsp.WindowClientCapabilities(work_done_progress=True),
        text_document=lsp.TextDocumentClientCapabilities(
            publish_diagnostics=lsp.PublishDiagnosticsClientCapabilities(
                related_information=True)),
        workspace=lsp.WorkspaceClientCapabilities(workspace_edit=lsp.WorkspaceEditClientCapabilities(
            document_changes=True)))
    await lsp_client.initialize_session(lsp.InitializeParams(
        capabilities=capabilities, root_uri=from_fs_path(str(tmp_path)),
        workspace_folders=[lsp.WorkspaceFolder(uri=from_fs_path(str(tmp_path)), name="w")]))
    lsp_client.root = tmp_path  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


async def _open(client: LanguageClient, path: Path, text: str = None) -> str:
    uri = from_fs_path(str(path))
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(text_document=lsp.TextDocumentItem(
        uri=uri, language_id="python", version=1,
        text=path.read_text() if text is None else text)))
    return uri


async def _diagnostics(client: LanguageClient, uri: str, until=lambda d: True,
                       timeout: float = 30.0) -> List[lsp.Diagnostic]:
    """The diagnostics last published for `uri` once `until` holds for them."""
    async def wait():
        while True:
            if uri in client.diagnostics and until(client.diagnostics[uri]):
                return list(client.diagnostics[uri])
            await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return await asyncio.wait_for(wait(), timeout)


def _change(client: LanguageClient, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)]))


def _write(client: LanguageClient, path: Path, text: str,
           change: lsp.FileChangeType = lsp.FileChangeType.Changed) -> None:
    """`path` written on disk, and the server told, as an editor's file watcher does."""
    path.write_text(text)
    client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(changes=[
        lsp.FileEvent(uri=from_fs_path(str(path)), type=change)]))


def _apply(text: str, edits) -> str:
    """`edits` (LSP TextEdits, UTF-16 columns: the texts here are ASCII) applied to `text`."""
    lines = physical_lines(text) + [""]

    def offset(position: lsp.Position) -> int:
        return sum(len(line) for line in lines[:position.line]) + position.character

    for edit in sorted(edits, key=lambda e: offset(e.range.start), reverse=True):
        text = text[:offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end):]
    return text


def _edits(action: lsp.CodeAction):
    change = action.edit
    if change.document_changes:
        return [e for d in change.document_changes for e in d.edits]
    return [e for edits in change.changes.values() for e in edits]


async def test_diagnostics_carry_the_rules_severity_code_and_page(client):
    uri = await _open(client, client.root / "snippet.py")
    [diagnostic] = await _diagnostics(client, uri, lambda d: len(d) == 1)
    assert diagnostic.code == "TFS001"
    assert diagnostic.severity == lsp.DiagnosticSeverity.Error
    assert diagnostic.source == "syncadvisor"
    assert diagnostic.range.start == lsp.Position(line=1, character=36)
    assert diagnostic.code_description.href.endswith("TFS001.md")


async def test_a_quick_fix_applies_and_clears_its_finding(client):
    uri = await _open(client, client.root / "snippet.py")
    [diagnostic] = await _diagnostics(client, uri, lambda d: len(d) == 1)
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), range=diagnostic.range,
        context=lsp.CodeActionContext(diagnostics=[diagnostic])))
    fix = next(a for a in actions if a.is_preferred)
    assert "AUTO" in fix.title and "unsafe" not in fix.title
    noqa = next(a for a in actions if "noqa" in a.title)
    fixed = _apply(DEFAULT, _edits(fix))
    assert "VariableSynchronization.AUTO" in fixed
    assert _apply(DEFAULT, _edits(noqa)).splitlines()[1].endswith("# noqa: TFS001")
    _change(client, uri, 2, fixed)
    assert await _diagnostics(client, uri, lambda d: not d) == []
    _change(client, uri, 3, _apply(DEFAULT, _edits(noqa)))
    assert await _diagnostics(client, uri, lambda d: not d) == []


async def test_fix_all_makes_the_safe_fixes_only(client):
    text = DEFAULT + DEFAULT.splitlines(keepends=True)[1].replace("v =", "w =") + \
        "u = tf.Variable(1., aggregation=tf.VariableAggregation.ONLY_FIRST)\n"
    path = client.root / "snippet.py"
    path.write_text(text)
    uri = await _open(client, path)
    await _diagnostics(client, uri, lambda d: len(d) == 3)
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri),
        range=lsp.Range(start=lsp.Position(line=0, character=0),
                        end=lsp.Position(line=0, character=0)),
        context=lsp.CodeActionContext(diagnostics=[],
                                      only=[lsp.CodeActionKind.SourceFixAll])))
    [fix_all] = actions
    assert fix_all.kind == "source.fixAll.syncadvisor"
    fixed = _apply(text, _edits(fix_all))
    assert fixed.count("VariableSynchronization.AUTO") == 2
    assert "ONLY_FIRST)" in fixed  # an unsafe fix: not made
    _change(client, uri, 2, fixed)
    remaining = await _diagnostics(client, uri, lambda d: len(d) == 1)
    assert remaining[0].range.start.line == 3


async def test_hover_on_a_finding_explains_its_rule(client):
    uri = await _open(client, client.root / "snippet.py")
    [diagnostic] = await _diagnostics(client, uri, lambda d: len(d) == 1)
    hover = await client.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), position=diagnostic.range.start))
    assert hover.contents.kind == lsp.MarkupKind.Markdown
    assert "TFS001" in hover.contents.value and "Fix safety" in hover.contents.value
    nothing = await client.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri),
        position=lsp.Position(line=0, character=0)))
    assert nothing is None


async def test_a_finding_from_another_module_appears_when_its_buffer_changes(client):
    model = await _open(client, client.root / "pkg" / "model.py")
    train = await _open(client, client.root / "pkg" / "train.py")
    assert await _diagnostics(client, model) == []
    lines = TRAIN.splitlines(keepends=True)
    _change(client, train, 2, "".join(lines[:-1]) + RUN)  # the update now runs per replica
    [diagnostic] = await _diagnostics(client, model, lambda d: len(d) == 1)
    assert diagnostic.code == "TFS201"
    assert diagnostic.severity == lsp.DiagnosticSeverity.Warning
    places = {(Path(r.location.uri).name, r.location.range.start.line)
              for r in diagnostic.related_information}
    assert ("train.py", 11) in places  # the strategy.run line, in the other buffer
    # The message names the other file as `check` does from the workspace's root,
    # relative; the related locations stay URIs.
    assert os.path.join("pkg", "train.py") + ":12" in diagnostic.message, diagnostic.message
    assert str(client.root) not in diagnostic.message
    assert all(str(client.root) not in r.message for r in diagnostic.related_information)
    assert all(r.location.uri.startswith("file://") for r in diagnostic.related_information)
    _change(client, train, 3, TRAIN)
    assert await _diagnostics(client, model, lambda d: not d) == []


async def test_a_broken_buffer_gets_tfs900_and_the_others_keep_theirs(client):
    snippet = await _open(client, client.root / "snippet.py")
    await _diagnostics(client, snippet, lambda d: len(d) == 1)
    model = await _open(client, client.root / "pkg" / "model.py", MODEL + "def broken(:\n")
    [error] = await _diagnostics(client, model, lambda d: len(d) == 1)
    assert error.code == "TFS900" and error.severity == lsp.DiagnosticSeverity.Error
    assert error.range.start.line == 9
    await asyncio.sleep(0.2)
    assert [d.code for d in client.diagnostics[snippet]] == ["TFS001"]


async def test_a_failing_request_answers_an_error_and_the_server_lives_on(client):
    uri = await _open(client, client.root / "snippet.py")
    await _diagnostics(client, uri, lambda d: len(d) == 1)
    # A hover without its position, written as raw JSON (the client's own types refuse it)
    protocol = client.protocol
    answer: asyncio.Future = asyncio.get_running_loop().create_future()
    protocol._request_futures["bad"] = answer
    protocol._result_types["bad"] = protocol.get_result_type(lsp.TEXT_DOCUMENT_HOVER)
    protocol._send_data({"jsonrpc": "2.0", "id": "bad", "method": lsp.TEXT_DOCUMENT_HOVER,
                         "params": {"textDocument": {"uri": uri}}})
    with pytest.raises(JsonRpcException):
        await asyncio.wait_for(answer, 10)
    hover = await client.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri),
        position=lsp.Position(line=1, character=40)))
    assert "TFS001" in hover.contents.value


async def test_a_changed_pyproject_is_read_again(client):
    uri = await _open(client, client.root / "snippet.py")
    await _diagnostics(client, uri, lambda d: len(d) == 1)
    config = client.root / "pyproject.toml"
    _write(client, config, '[tool.syncadvisor]\nignore = ["TFS001"]\n', lsp.FileChangeType.Created)
    assert await _diagnostics(client, uri, lambda d: not d) == []
    _write(client, config, '[tool.syncadvisor]\nignore = []\n')
    await _diagnostics(client, uri, lambda d: len(d) == 1)


async def test_a_file_changed_on_disk_counts_where_no_buffer_holds_it(client):
    model = await _open(client, client.root / "pkg" / "model.py")
    assert await _diagnostics(client, model) == []
    train = client.root / "pkg" / "train.py"
    _write(client, train, "".join(TRAIN.splitlines(keepends=True)[:-1]) + RUN)
    [diagnostic] = await _diagnostics(client, model, lambda d: len(d) == 1)
    assert diagnostic.code == "TFS201"


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def pulling(lsp_client: LanguageClient, tmp_path: Path):
    """A client that asks for diagnostics itself (LSP 3.17 pull diagnostics)."""
    _workspace(tmp_path)
    capabilities = lsp.ClientCapabilities(
        text_document=lsp.TextDocumentClientCapabilities(
            diagnostic=lsp.DiagnosticClientCapabilities(related_document_support=False)))
    await lsp_client.initialize_session(lsp.InitializeParams(
        capabilities=capabilities, root_uri=from_fs_path(str(tmp_path))))
    lsp_client.root = tmp_path  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


async def test_a_client_that_pulls_gets_its_diagnostics_when_it_asks(pulling):
    uri = await _open(pulling, pulling.root / "snippet.py")
    report = await pulling.text_document_diagnostic_async(lsp.DocumentDiagnosticParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri)))
    assert [d.code for d in report.items] == ["TFS001"]
    _change(pulling, uri, 2, DEFAULT.replace("DEFAULT", "AUTO"))
    report = await pulling.text_document_diagnostic_async(lsp.DocumentDiagnosticParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri)))
    assert list(report.items) == []
    assert uri not in pulling.diagnostics  # nothing pushed besides


async def test_indexing_the_workspace_shows_progress(client):
    uri = await _open(client, client.root / "snippet.py")
    await _diagnostics(client, uri, lambda d: len(d) == 1)

    async def ended():
        while not any(r and isinstance(r[-1], lsp.WorkDoneProgressEnd)
                      for r in client.progress_reports.values()):
            await asyncio.sleep(0.05)
    await asyncio.wait_for(ended(), 30)
    [reports] = client.progress_reports.values()
    assert isinstance(reports[0], lsp.WorkDoneProgressBegin)
    assert reports[0].title == "syncadvisor"


async def test_a_workspace_folder_added_is_indexed(client, tmp_path_factory):
    """train.py of another folder reaches model.py only once that folder is added."""
    other = tmp_path_factory.mktemp("other")
    (other / "run.py").write_text("".join(TRAIN.splitlines(keepends=True)[:-1]) + RUN)
    model = await _open(client, client.root / "pkg" / "model.py")
    assert await _diagnostics(client, model) == []
    client.workspace_did_change_workspace_folders(lsp.DidChangeWorkspaceFoldersParams(
        event=lsp.WorkspaceFoldersChangeEvent(
            added=[lsp.WorkspaceFolder(uri=from_fs_path(str(other)), name="other")],
            removed=[])))
    # (run.py makes a second strategy and its own Meter under it: each Meter's variable
    # is updated under the strategy it was made under, so no TFS108)
    found = await _diagnostics(client, model, lambda d: len(d) == 1)
    assert [d.code for d in found] == ["TFS201"]


@pytest.mark.parametrize("folder", ["my proj", "café"])
async def test_a_path_that_a_uri_escapes_gets_its_diagnostics(client, folder):
    """pygls keeps documents by their URI decoded; the client's own URI comes back."""
    path = client.root / folder / "snippet.py"
    path.parent.mkdir()
    path.write_text(DEFAULT)
    uri = await _open(client, path)
    [diagnostic] = await _diagnostics(client, uri, lambda d: len(d) == 1)
    assert diagnostic.code == "TFS001"


async def test_a_form_feed_is_no_line_break(client):
    """Python and LSP end lines at \\n, \\r\\n and \\r alone; str.splitlines also at \\f."""
    text = "# a\fb\n" + DEFAULT
    path = client.root / "snippet.py"
    path.write_text(text)
    uri = await _open(client, path)
    [diagnostic] = await _diagnostics(client, uri, lambda d: len(d) == 1)
    assert diagnostic.range.start == lsp.Position(line=2, character=36)
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), range=diagnostic.range,
        context=lsp.CodeActionContext(diagnostics=[diagnostic])))
    fix = next(a for a in actions if a.is_preferred)
    assert _apply(text, _edits(fix)) == text.replace("DEFAULT", "AUTO")


async def test_a_file_the_config_excludes_has_no_diagnostics(client):
    path = client.root / "gen" / "g.py"
    path.parent.mkdir()
    path.write_text(DEFAULT)
    _write(client, client.root / "pyproject.toml", '[tool.syncadvisor]\nextend-exclude = ["gen"]\n',
           lsp.FileChangeType.Created)
    snippet = await _open(client, client.root / "snippet.py")
    await _diagnostics(client, snippet, lambda d: len(d) == 1)
    excluded = await _open(client, path)
    assert await _diagnostics(client, excluded) == []


async def test_a_wrong_config_is_told_and_its_edits_are_not_lost(client):
    uri = await _open(client, client.root / "snippet.py")
    await _diagnostics(client, uri, lambda d: len(d) == 1)
    config = client.root / "pyproject.toml"
    _write(client, config, '[tool.syncadvisor]\nselect = ["NOPE"]\n', lsp.FileChangeType.Created)

    async def told():
        while not any("NOPE" in m.message for m in client.messages):
            await asyncio.sleep(0.05)
    await asyncio.wait_for(told(), 30)
    assert next(m for m in client.messages if "NOPE" in m.message).type == \
        lsp.MessageType.Error
    _write(client, config, '[tool.syncadvisor]\nselect = ["TFS"]\n')
    _change(client, uri, 2, DEFAULT + DEFAULT.splitlines(keepends=True)[1])
    await _diagnostics(client, uri, lambda d: len(d) == 2)
