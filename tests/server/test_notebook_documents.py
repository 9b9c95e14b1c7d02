"""Notebook documents (LSP 3.17) through a real LSP client (pytest-lsp), as VS Code's and
JupyterLab's notebook editors send them: the cells linked as one module, read as IPython
reads them, and each cell's findings, fixes and hover on the cell's own URI."""
from __future__ import annotations

import asyncio
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Dict, List, Optional

import pytest

pytest.importorskip("pygls")
pytest_lsp = pytest.importorskip("pytest_lsp")

from lsprotocol import types as lsp  # noqa: E402
from pygls.uris import from_fs_path  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient  # noqa: E402

from tests.server.test_lsp import _apply, _diagnostics  # noqa: E402

pytestmark = pytest.mark.asyncio(loop_scope="function")

SERVER = [sys.executable, "-m", "syncadvisor", "server", "--jobs", "1"]

# Cell 1 makes the strategy, with IPython's own syntax around it; cell 2 is markdown
# (counted, as the editor counts it); cell 3 makes a variable in the strategy's scope
# that a MirroredStrategy refuses (TFS101), and a OneDeviceStrategy takes.
SETUP = ("%matplotlib inline\n!pip install x\nimport tensorflow as tf\n"
         "strategy = tf.distribute.MirroredStrategy()\n")
NOTES = "# The model\n"
MODEL = ("with strategy.scope():\n"
         "    v = tf.Variable(0.0, synchronization=tf.VariableSynchronization.NONE)\n")


class Notebook:
    """A notebook document as the client holds it: cells by URI, each versioned."""

    def __init__(self, client: LanguageClient, path: Path, cells: List[tuple]):
        self.client = client
        self.uri = from_fs_path(str(path))
        self.version = 1
        # The URIs VS Code gives cells (the fragment percent-encoded, as it sends them).
        self.cells = [f"vscode-notebook-cell:{path}#W{i}sZmlsZQ%3D%3D" for i in range(len(cells))]
        self.kinds = {uri: kind for uri, (kind, _) in zip(self.cells, cells)}
        self.texts = {uri: text for uri, (_, text) in zip(self.cells, cells)}
        self.versions = {uri: 1 for uri in self.cells}

    def _item(self, uri: str) -> lsp.TextDocumentItem:
        language = "python" if self.kinds[uri] == lsp.NotebookCellKind.Code else "markdown"
        return lsp.TextDocumentItem(uri=uri, language_id=language,
                                    version=self.versions[uri], text=self.texts[uri])

    def open(self) -> None:
        self.client.notebook_document_did_open(lsp.DidOpenNotebookDocumentParams(
            notebook_document=lsp.NotebookDocument(
                uri=self.uri, notebook_type="jupyter-notebook", version=self.version,
                cells=[lsp.NotebookCell(kind=self.kinds[uri], document=uri)
                       for uri in self.cells]),
            cell_text_documents=[self._item(uri) for uri in self.cells]))

    def _change(self, change: lsp.NotebookDocumentChangeEvent) -> None:
        self.version += 1
        self.client.notebook_document_did_change(lsp.DidChangeNotebookDocumentParams(
            notebook_document=lsp.VersionedNotebookDocumentIdentifier(
                uri=self.uri, version=self.version), change=change))

    def edit(self, number: int, text: str) -> None:
        """Cell `number` (1-based) now holds `text` (the whole of it, as one change)."""
        uri = self.cells[number - 1]
        self.texts[uri] = text
        self.versions[uri] += 1
        self._change(lsp.NotebookDocumentChangeEvent(
            cells=lsp.NotebookDocumentCellChanges(text_content=[
                lsp.NotebookDocumentCellContentChanges(
                    document=lsp.VersionedTextDocumentIdentifier(
                        uri=uri, version=self.versions[uri]),
                    changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)])])))

    def remove(self, number: int) -> None:
        uri = self.cells.pop(number - 1)
        self._change(lsp.NotebookDocumentChangeEvent(
            cells=lsp.NotebookDocumentCellChanges(structure=lsp.NotebookDocumentCellChangeStructure(
                array=lsp.NotebookCellArrayChange(start=number - 1, delete_count=1),
                did_close=[lsp.TextDocumentIdentifier(uri=uri)]))))

    def close(self) -> None:
        self.client.notebook_document_did_close(lsp.DidCloseNotebookDocumentParams(
            notebook_document=lsp.NotebookDocumentIdentifier(uri=self.uri),
            cell_text_documents=[lsp.TextDocumentIdentifier(uri=uri) for uri in self.cells]))

    def apply(self, edit: lsp.WorkspaceEdit) -> Dict[str, str]:
        """The client's side of a workspace edit: each cell's new text, by URI (checked
        to be meant for the cells' versions as they are)."""
        out = {}
        for change in edit.document_changes:
            uri = change.text_document.uri
            assert uri in self.cells, f"an edit for {uri}, not a cell of the notebook"
            assert change.text_document.version == self.versions[uri]
            out[uri] = _apply(self.texts[uri], change.edits)
        return out


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def client(lsp_client: LanguageClient, tmp_path: Path):
    capabilities = lsp.ClientCapabilities(
        notebook_document=lsp.NotebookDocumentClientCapabilities(
            synchronization=lsp.NotebookDocumentSyncClientCapabilities()),
        text_document=lsp.TextDocumentClientCapabilities(
            publish_diagnostics=lsp.PublishDiagnosticsClientCapabilities(
                related_information=True, version_support=True)),
        workspace=lsp.WorkspaceClientCapabilities(workspace_edit=lsp.WorkspaceEditClientCapabilities(
            document_changes=True)))
    result = await lsp_client.initialize_session(lsp.InitializeParams(
        capabilities=capabilities, root_uri=from_fs_path(str(tmp_path)),
        workspace_folders=[lsp.WorkspaceFolder(uri=from_fs_path(str(tmp_path)), name="w")]))
    lsp_client.root = tmp_path  # type: ignore[attr-defined]
    lsp_client.capabilities = result.capabilities  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


def _notebook(client: LanguageClient, *cells: tuple, name: str = "train.ipynb") -> Notebook:
    nb = Notebook(client, client.root / name, list(cells))
    nb.open()
    return nb


def _tutorial(client: LanguageClient) -> Notebook:
    return _notebook(client, (lsp.NotebookCellKind.Code, SETUP),
                     (lsp.NotebookCellKind.Markup, NOTES), (lsp.NotebookCellKind.Code, MODEL))


async def _settled(client: LanguageClient, seconds: float = 0.5) -> None:
    """Long enough for a server that would publish to have done so."""
    await asyncio.sleep(seconds)


def _shown(client: LanguageClient, uri: str) -> List[lsp.Diagnostic]:
    return list(client.diagnostics.get(uri, []))


async def _actions(client: LanguageClient, uri: str, diagnostic: lsp.Diagnostic,
                   only: Optional[list] = None) -> List[lsp.CodeAction]:
    return await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), range=diagnostic.range,
        context=lsp.CodeActionContext(diagnostics=[diagnostic], only=only)))


async def test_the_server_asks_for_jupyter_notebooks_and_their_python_cells(client):
    sync = client.capabilities.notebook_document_sync
    [selector] = sync.notebook_selector
    assert selector.notebook == "jupyter-notebook"
    assert [c.language for c in selector.cells] == ["python"]


async def test_a_strategy_made_in_cell_1_gives_a_finding_in_cell_3(client):
    nb = _tutorial(client)
    third = nb.cells[2]
    [diagnostic] = await _diagnostics(client, third, lambda d: len(d) == 1)
    assert diagnostic.code == "TFS101"
    assert diagnostic.severity == lsp.DiagnosticSeverity.Error
    # In the cell as written, not in the notebook's joined module:
    assert diagnostic.range.start == lsp.Position(line=1, character=25)
    assert MODEL.splitlines()[1][25:].startswith("synchronization=")
    assert "MirroredStrategy created at cell 1, line 4" in diagnostic.message
    # The places it names are in their own cells too: the strategy's line in cell 1.
    assert lsp.Location(uri=nb.cells[0], range=lsp.Range(
        start=lsp.Position(line=3, character=0), end=lsp.Position(line=3, character=0))) in \
        [r.location for r in diagnostic.related_information]
    await _settled(client)
    # None on IPython's syntax (`%matplotlib`, `!pip`), none on the markdown cell.
    assert _shown(client, nb.cells[0]) == [] and _shown(client, nb.cells[1]) == []


async def test_editing_the_first_cell_changes_the_third_cells_diagnostics(client):
    nb = _tutorial(client)
    third = nb.cells[2]
    await _diagnostics(client, third, lambda d: len(d) == 1)
    nb.edit(1, SETUP.replace("MirroredStrategy()", "OneDeviceStrategy('/cpu:0')"))
    assert await _diagnostics(client, third, lambda d: not d) == []
    nb.edit(1, SETUP)
    [diagnostic] = await _diagnostics(client, third, lambda d: len(d) == 1)
    assert diagnostic.code == "TFS101"


async def test_a_quick_fix_is_an_edit_of_the_cell(client):
    nb = _tutorial(client)
    third = nb.cells[2]
    [diagnostic] = await _diagnostics(client, third, lambda d: len(d) == 1)
    actions = await _actions(client, third, diagnostic)
    fix = next(a for a in actions if a.title.startswith("TFS101") and "noqa" not in a.title)
    assert "unsafe" in fix.title  # (dropping `synchronization` changes what the code means)
    [(uri, fixed)] = nb.apply(fix.edit).items()
    assert uri == third
    assert fixed == "with strategy.scope():\n    v = tf.Variable(0.0)\n"
    noqa = next(a for a in actions if "noqa" in a.title)
    [(uri, suppressed)] = nb.apply(noqa.edit).items()
    assert uri == third and suppressed.splitlines()[1].endswith("# noqa: TFS101")
    nb.edit(3, fixed)
    assert await _diagnostics(client, third, lambda d: not d) == []
    nb.edit(3, suppressed)
    await _settled(client)
    assert _shown(client, third) == []


async def test_fix_all_edits_each_cell_it_fixes(client):
    default = "w = tf.Variable(1., synchronization=tf.VariableSynchronization.DEFAULT)\n"
    nb = _notebook(client, (lsp.NotebookCellKind.Code, "import tensorflow as tf\n" + default),
                   (lsp.NotebookCellKind.Code, "%time x = 1\n" + default))
    await _diagnostics(client, nb.cells[1], lambda d: len(d) == 1)
    [fix_all] = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=nb.cells[1]),
        range=lsp.Range(start=lsp.Position(line=0, character=0),
                        end=lsp.Position(line=0, character=0)),
        context=lsp.CodeActionContext(diagnostics=[], only=[lsp.CodeActionKind.SourceFixAll])))
    fixed = nb.apply(fix_all.edit)
    assert sorted(fixed) == sorted(nb.cells)
    assert fixed[nb.cells[1]] == "%time x = 1\n" + default.replace("DEFAULT", "AUTO")


async def test_hover_on_a_cells_finding_explains_its_rule(client):
    nb = _tutorial(client)
    third = nb.cells[2]
    [diagnostic] = await _diagnostics(client, third, lambda d: len(d) == 1)
    hover = await client.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri=third), position=diagnostic.range.start))
    assert "TFS101" in hover.contents.value and hover.range == diagnostic.range
    nothing = await client.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri=nb.cells[0]),
        position=lsp.Position(line=1, character=25)))
    assert nothing is None


async def test_a_cell_that_cannot_run_is_tfs900_there_and_the_others_are_checked(client):
    nb = _notebook(client, (lsp.NotebookCellKind.Code, SETUP),
                   (lsp.NotebookCellKind.Code, "def broken(:\n    pass\n"),
                   (lsp.NotebookCellKind.Code, MODEL))
    [error] = await _diagnostics(client, nb.cells[1], lambda d: len(d) == 1)
    assert error.code == "TFS900" and error.range.start.line == 0
    [finding] = await _diagnostics(client, nb.cells[2], lambda d: len(d) == 1)
    assert finding.code == "TFS101"
    nb.edit(2, "def mended():\n    pass\n")
    assert await _diagnostics(client, nb.cells[1], lambda d: not d) == []
    assert [d.code for d in _shown(client, nb.cells[2])] == ["TFS101"]


async def test_a_removed_cell_has_its_diagnostics_cleared(client):
    nb = _tutorial(client)
    third = nb.cells[2]
    await _diagnostics(client, third, lambda d: len(d) == 1)
    nb.remove(3)
    assert await _diagnostics(client, third, lambda d: not d) == []


async def test_a_closed_notebook_has_its_diagnostics_cleared(client):
    nb = _tutorial(client)
    third = nb.cells[2]
    await _diagnostics(client, third, lambda d: len(d) == 1)
    nb.close()
    assert await _diagnostics(client, third, lambda d: not d) == []


# The server as users start it, with a thread that writes down, every few milliseconds,
# which of the modules it must not need it has imported.
_MODULES = Path(tempfile.mkdtemp(prefix="syncadvisor-modules-")) / "imported"
_WATCHED = ("tensorflow", "keras", "tf_keras", "numpy", "libcst")
WATCHED_SERVER = [sys.executable, "-c", textwrap.dedent(f"""\
    import os, runpy, sys, threading, time
    def watch():
        while True:
            seen = [m for m in {_WATCHED!r} if m in sys.modules]
            with open({str(_MODULES) + '.new'!r}, "w") as f:
                f.write(" ".join(seen) + "\\n")
            os.replace({str(_MODULES) + '.new'!r}, {str(_MODULES)!r})
            time.sleep(0.02)
    threading.Thread(target=watch, daemon=True).start()
    sys.argv = ["syncadvisor", "server", "--jobs", "1"]
    runpy.run_module("syncadvisor", run_name="__main__", alter_sys=True)
""")]


@pytest_lsp.fixture(config=ClientServerConfig(server_command=WATCHED_SERVER))
async def watched(lsp_client: LanguageClient, tmp_path: Path):
    await lsp_client.initialize_session(lsp.InitializeParams(
        capabilities=lsp.ClientCapabilities(
            notebook_document=lsp.NotebookDocumentClientCapabilities(
                synchronization=lsp.NotebookDocumentSyncClientCapabilities()),
            workspace=lsp.WorkspaceClientCapabilities(
                workspace_edit=lsp.WorkspaceEditClientCapabilities(document_changes=True))),
        root_uri=from_fs_path(str(tmp_path))))
    lsp_client.root = tmp_path  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


async def _imported() -> List[str]:
    await asyncio.sleep(0.2)  # (a few rounds of the watching thread)
    return _MODULES.read_text().split()


async def test_a_notebook_is_diagnosed_without_tensorflow_or_libcst(watched):
    nb = _tutorial(watched)
    third = nb.cells[2]
    [diagnostic] = await _diagnostics(watched, third, lambda d: len(d) == 1)
    await watched.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri=third), position=diagnostic.range.start))
    nb.edit(1, SETUP.replace("MirroredStrategy()", "OneDeviceStrategy('/cpu:0')"))
    await _diagnostics(watched, third, lambda d: not d)
    assert await _imported() == []
    nb.edit(1, SETUP)
    [diagnostic] = await _diagnostics(watched, third, lambda d: len(d) == 1)
    await _actions(watched, third, diagnostic)
    await _actions(watched, third, diagnostic, only=[lsp.CodeActionKind.SourceFixAll])
    # A fix is checked on libcst's tree (code actions may import it); still no TensorFlow.
    seen = await _imported()
    assert set(seen) <= {"libcst"}


async def test_a_notebook_sent_as_one_python_document_is_checked(client):
    """JupyterLab's LSP extension sends a notebook as one Python document of its cells
    (IPython's syntax replaced), named like the notebook, under `.virtual_documents`."""
    path = client.root / ".virtual_documents" / "train.ipynb"
    uri = from_fs_path(str(path))
    text = ("get_ipython().run_line_magic('matplotlib', 'inline')\n"
            + SETUP.split("\n", 2)[2] + "\n\n" + MODEL)
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(text_document=lsp.TextDocumentItem(
        uri=uri, language_id="python", version=1, text=text)))
    [diagnostic] = await _diagnostics(client, uri, lambda d: len(d) == 1)
    assert diagnostic.code == "TFS101" and diagnostic.range.start.line == 6


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def pulling(lsp_client: LanguageClient, tmp_path: Path):
    """A client that asks for each cell's diagnostics itself (LSP 3.17 pull diagnostics)."""
    await lsp_client.initialize_session(lsp.InitializeParams(
        capabilities=lsp.ClientCapabilities(
            notebook_document=lsp.NotebookDocumentClientCapabilities(
                synchronization=lsp.NotebookDocumentSyncClientCapabilities()),
            text_document=lsp.TextDocumentClientCapabilities(
                diagnostic=lsp.DiagnosticClientCapabilities(related_document_support=False))),
        root_uri=from_fs_path(str(tmp_path))))
    lsp_client.root = tmp_path  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


async def test_a_client_that_pulls_gets_each_cells_diagnostics(pulling):
    nb = _tutorial(pulling)

    async def pull(number: int) -> List[str]:
        report = await pulling.text_document_diagnostic_async(lsp.DocumentDiagnosticParams(
            text_document=lsp.TextDocumentIdentifier(uri=nb.cells[number - 1])))
        return [d.code for d in report.items]
    assert await pull(3) == ["TFS101"]
    assert await pull(1) == [] and await pull(2) == []
    nb.edit(1, SETUP.replace("MirroredStrategy()", "OneDeviceStrategy('/cpu:0')"))
    assert await pull(3) == []
    assert not any(uri in pulling.diagnostics for uri in nb.cells)  # nothing pushed besides
