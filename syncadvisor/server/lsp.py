"""The Language Server Protocol over a `Workspace`: diagnostics for the open buffers
(pushed, or pulled by clients that ask), a quick fix and a `# noqa` per finding, the
safe fixes of a file at once (`source.fixAll.syncadvisor`), and the rule's page on
hover. Positions go out in the encoding agreed with the client (UTF-16 by default);
findings count characters.

Edits are taken in as they come and the open files diagnosed once the messages that
have arrived are read (`_schedule`): a burst of keystrokes costs one analysis.
"""
from __future__ import annotations

import asyncio
import os
import sys
import uuid
from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple
from urllib.parse import unquote

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import JsonRPCNotification
from pygls.uris import from_fs_path, to_fs_path

from .. import __version__
from ..add_noqa import add_noqa
from ..config import ConfigError
from ..findings import ERROR, INFO, SAFE, WARNING, Edit, Finding
from ..fixes import apply_fixes
from ..lines import line_starts, physical_lines, position
from ..rules import rules_by_code
from ..rules.docs import installed_page
from .notebooks import SYNC as NOTEBOOK_SYNC, OpenNotebook, notebook_path
from .workspace import Workspace

FIX_ALL = "source.fixAll.syncadvisor"
SOURCE = "syncadvisor"
_SEVERITY = {ERROR: lsp.DiagnosticSeverity.Error, WARNING: lsp.DiagnosticSeverity.Warning,
             INFO: lsp.DiagnosticSeverity.Information}
# (path, notebook cell or None) -> the URI and lines the client knows that place by
Where = Callable[[str, Optional[int]], Tuple[str, List[str]]]
# Files whose change changes which files are checked and how.
_CONFIG_FILES = ("pyproject.toml", ".syncadvisor.toml", "syncadvisor.toml", ".gitignore",
                 "setup.cfg", "setup.py", "requirements.txt")


class _Protocol(LanguageServerProtocol):
    """pygls drops a request whose params do not fit their type: it reports the error
    but answers nothing, and the client waits for ever. Here it is answered with the
    error (Invalid Params), as JSON-RPC asks."""

    def structure_message(self, data):
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if not (isinstance(data, dict) and "id" in data and "method" in data):
                raise
            self._send_response(data["id"], error=exc.to_response_error())
            # (what is handled next: a notification nobody listens to)
            return JsonRPCNotification(method="$/syncadvisor/answered", jsonrpc="2.0",
                                       params=None)

    def _check_handler_result(self, future):
        """pygls keeps the future of a notification whose own handler is a generator
        (didOpen, didChange, didSave, didClose) among the requests awaiting an answer,
        under a new id, and only an answer or a cancel takes one out: a future per
        keystroke, for the whole session. Done, it goes (this is its done-callback)."""
        for msg_id, pending in list(self._request_futures.items()):
            if pending is future:
                del self._request_futures[msg_id]
                break
        super()._check_handler_result(future)


class SyncAdvisorServer(LanguageServer):
    def __init__(self, jobs: Optional[int] = None) -> None:
        # Whole texts on each change: pygls applies an incremental change by lines as
        # `str.splitlines` cuts them (also at \f, \v, \x85, \u2028...), where LSP and the
        # findings count only \n, \r\n and \r: its copy of a buffer would drift.
        super().__init__(SOURCE, __version__,
                         text_document_sync_kind=lsp.TextDocumentSyncKind.Full,
                         notebook_document_sync=NOTEBOOK_SYNC, protocol_cls=_Protocol)
        self.jobs = jobs if jobs is not None else (os.cpu_count() or 1)
        self.project: Optional[Workspace] = None
        self.findings: Dict[str, List[Finding]] = {}  # open file (absolute path) -> findings
        self.dirty: Set[str] = set()  # open files edited since they were last analysed
        self.scheduled = False
        self.indexing: Optional[asyncio.Task] = None
        self.index_timer: Optional[asyncio.TimerHandle] = None
        self.changed_on_disk: Set[str] = set()  # while an index runs: to read again after
        self.uris: Dict[str, str] = {}  # open file -> the URI its client names it by
        self.notebooks: Dict[str, OpenNotebook] = {}  # open notebook documents, by path

    def path_of(self, uri: str) -> str:
        """The absolute path of a document the client names; its URI is kept as the
        client wrote it, for what is sent back about it."""
        path = os.path.abspath(to_fs_path(uri) or "")
        self.uris[path] = uri
        return path

    def uri_of(self, path: str) -> str:
        return self.uris.get(path) or from_fs_path(path) or path

    def tell(self, message: str) -> None:
        """An error the user must see (a bad config): in the editor's messages."""
        self.window_show_message(lsp.ShowMessageParams(
            type=lsp.MessageType.Error, message=f"syncadvisor: {message}"))

    # --- the workspace ----------------------------------------------------------------

    def folders(self) -> List[str]:
        found = [to_fs_path(f.uri) for f in self.workspace.folders.values()]
        if not found and self.workspace.root_path:
            found = [self.workspace.root_path]
        return [f for f in found if f]

    def pulls(self) -> bool:
        """Whether the client asks for diagnostics itself (LSP 3.17 pull diagnostics)."""
        text = self.client_capabilities.text_document
        return text is not None and text.diagnostic is not None

    def start_index(self, delay: float = 0.0) -> None:
        """Model the workspace's files in the background, then diagnose the open files
        again. A burst of triggers (a save of pyproject.toml is a didSave and a watched
        file change) makes one index, `delay` seconds after the last; a later index
        replaces one still running."""
        if self.index_timer is not None:
            self.index_timer.cancel()
        self.index_timer = asyncio.get_running_loop().call_later(delay, self._start_index)

    def _start_index(self) -> None:
        self.index_timer = None
        if self.indexing is not None and not self.indexing.done():
            self.indexing.cancel()
        self.indexing = asyncio.ensure_future(self._index())

    async def _index(self) -> None:
        token = str(uuid.uuid4())
        window = self.client_capabilities.window
        progress = window is not None and bool(window.work_done_progress)
        loop = asyncio.get_running_loop()
        if progress:
            try:
                await self.work_done_progress.create_async(token)
                self.work_done_progress.begin(token, lsp.WorkDoneProgressBegin(
                    title="syncadvisor", message="indexing the workspace"))
            except Exception:  # noqa: BLE001 - a client that refuses: no progress shown
                progress = False

        def report(message: str) -> None:
            if progress:
                loop.call_soon_threadsafe(self.work_done_progress.report, token,
                                          lsp.WorkDoneProgressReport(message=message))

        # The index thread touches only this new workspace; edits go on meanwhile on the
        # event loop in `self.project`, and are merged below once it is done.
        project = Workspace(self.folders(), jobs=self.jobs)
        if self.project is not None:
            project.buffers = dict(self.project.buffers)
        self.changed_on_disk = set()
        done = "indexed"
        try:
            await loop.run_in_executor(None, project.index, report)
            if self.project is not None:  # edits made meanwhile
                for path, text in self.project.buffers.items():
                    if project.buffers.get(path) != text:
                        project.open(path, text)
                for path in set(project.buffers) - set(self.project.buffers):
                    project.close(path)
            for path in self.changed_on_disk - set(project.buffers):
                project.reread(path)
            self.project = project
        except ConfigError as exc:
            done = "not indexed: the configuration is wrong"
            self.tell(str(exc))
            return
        finally:
            if progress:
                self.work_done_progress.end(token, lsp.WorkDoneProgressEnd(message=done))
        self._flush(everything=True)  # (the index modelled the open buffers' texts)

    def ensure_project(self) -> Workspace:
        if self.project is None:
            self.project = Workspace(self.folders(), jobs=self.jobs)
        return self.project

    # --- diagnostics ------------------------------------------------------------------

    def schedule(self, path: str) -> None:
        self.dirty.add(path)
        if not self.scheduled:
            self.scheduled = True
            asyncio.get_running_loop().call_soon(self._scheduled_flush)

    def _scheduled_flush(self) -> None:
        if self.scheduled:  # (not already done by a request that came first)
            self._flush()

    def _flush(self, everything: bool = False) -> None:
        """Model the edited buffers, then diagnose every open file again: an edit in
        one may change another's findings (a strategy scope, a class it uses). A file
        the configuration excludes is not checked: it has no findings."""
        self.scheduled = False
        dirty, self.dirty = self.dirty, set()
        try:
            project = self.ensure_project()
            for path in dirty:
                text = self._buffer(path)
                # (a notebook's markdown cell edited: its code reads the same, its model
                # stands)
                if text is not None and not (path in self.notebooks and
                                             project.buffers.get(path) == text):
                    project.open(path, text)
            open_paths = [p for p in project.buffers if not project.excluded(p)]
            found = project.findings(open_paths) if open_paths else {}
        except ConfigError as exc:
            self.dirty |= dirty  # (analysed once the configuration reads)
            self.tell(str(exc))
            return
        for path in (self.findings.keys() | dirty) - found.keys():
            if path in project.buffers:  # (excluded)
                found[path] = []
        changed = False
        for path, findings in found.items():
            if everything or path in dirty or findings != self.findings.get(path):
                changed = True
                self.findings[path] = findings
                self._publish(path, everything)
        if self.pulls() and changed:
            refresh = self.client_capabilities.workspace
            if refresh is not None and refresh.diagnostics is not None and \
                    refresh.diagnostics.refresh_support:
                self.workspace_diagnostic_refresh(None)

    def flush_now(self, path: str) -> None:
        """Before answering about a file: its latest text analysed."""
        if path in self.dirty or self.scheduled:
            self._flush()

    def _buffer(self, path: str) -> Optional[str]:
        """The text to model of an open document: a file's, or a notebook's cells read
        as one virtual module."""
        state = self.notebooks.get(path)
        if state is None:
            document = self._document(path)
            return document.source if document is not None else None
        notebook = self.workspace.get_notebook_document(notebook_uri=state.uri)
        if notebook is None:
            return None
        texts = {}
        for cell in notebook.cells:
            document = self.workspace.text_documents.get(unquote(cell.document))
            if document is not None:
                texts[cell.document] = (document.language_id or "", document.source)
        return state.read(notebook, texts).virtual

    def checks(self, uri: str) -> bool:
        """Whether an open text document is checked: a Python file, or a file the client
        says is Python whatever its name. (JupyterLab's LSP extension sends a notebook as
        one Python document of its cells, named like the notebook: `.ipynb`.) A cell of
        an open notebook is checked with its notebook, never alone."""
        if self.notebook_of(uri) is not None:
            return False
        if (to_fs_path(uri) or "").endswith((".py", ".pyi")):
            return True
        document = self.workspace.text_documents.get(unquote(uri))
        return document is not None and document.language_id == "python" and \
            uri.startswith("file:")

    def target(self, uri: str) -> Tuple[str, Optional[int]]:
        """What a request about `uri` is about, its latest text analysed: (the file's
        path, None), or (its notebook's path, the cell's number)."""
        state = self.notebook_of(uri)
        path = state.path if state is not None else self.path_of(uri)
        self.flush_now(path)
        return path, state.cell_of(uri) if state is not None else None

    def notebook_of(self, uri: str) -> Optional[OpenNotebook]:
        """The open notebook document with `uri`, or the one that has a cell with `uri`."""
        notebook = self.workspace.get_notebook_document(notebook_uri=uri) or \
            self.workspace.get_notebook_document(cell_uri=uri)
        if notebook is None:
            return None
        return next((state for state in self.notebooks.values()
                     if unquote(state.uri) == unquote(notebook.uri)), None)

    def _document(self, path: str):
        """The open document at `path`, or None. (pygls keeps documents by their URI
        decoded: `my%20proj` is `my proj` there.)"""
        uri = self.uri_of(path)
        if unquote(uri) not in self.workspace.text_documents:
            return None
        return self.workspace.get_text_document(uri)

    def _publish(self, path: str, everything: bool = False) -> None:
        if self.pulls():
            return
        state = self.notebooks.get(path)
        if state is not None:
            self._publish_cells(state, everything)
            return
        document = self._document(path)
        self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(
            uri=self.uri_of(path),
            diagnostics=self.diagnostics(path),
            version=document.version if document is not None else None))

    def _publish_cells(self, state: OpenNotebook, everything: bool = False) -> None:
        """A notebook's diagnostics, on each cell's URI: those of the cells edited since
        they were last published (an edit is answered, if only with nothing), and of
        the others where they changed (cleared, where a cell was fixed or removed);
        with `everything`, of each cell that has some."""
        now = {uri: diagnostics for uri, diagnostics in self.cell_diagnostics(state).items()
               if diagnostics}
        for uri in sorted(now.keys() | state.shown.keys() | (state.edited & set(state.cells))):
            diagnostics = now.get(uri, [])
            if uri not in state.edited and not (everything and diagnostics) and \
                    diagnostics == state.shown.get(uri, []):
                continue
            document = self.workspace.text_documents.get(unquote(uri))
            self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(
                uri=uri, diagnostics=diagnostics,
                version=document.version if document is not None else None))
        state.shown, state.edited = now, set()

    def cell_diagnostics(self, state: OpenNotebook) -> Dict[str, List[lsp.Diagnostic]]:
        """A notebook's diagnostics by cell URI (every code cell, most with none)."""
        where = self.reader()
        out: Dict[str, List[lsp.Diagnostic]] = {
            uri: [] for uri, source in zip(state.cells, state.sources) if source is not None}
        for cell, pairs in state.by_cell(self.findings.get(state.path, [])).items():
            place = state.place(cell)
            if place is not None:
                out[place[0]] = [self.diagnostic(placed, where) for _, placed in pairs]
        return out

    def cells_edit(self, state: OpenNotebook, virtual: str) -> Optional[lsp.WorkspaceEdit]:
        """The edit of a notebook's cells that makes its virtual module `virtual`; None
        where that cannot be put back into the cells as written (`--fix` refuses it too)."""
        changes = state.cell_changes(virtual)
        if not changes:
            return None
        return self.edit_documents({uri: self.whole_change(old, new)
                                    for uri, (old, new) in changes.items()})

    def diagnostics(self, path: str) -> List[lsp.Diagnostic]:
        where = self.reader()
        return [self.diagnostic(f, where) for f in self.findings.get(path, [])]

    def diagnostic(self, finding: Finding, where: "Where") -> lsp.Diagnostic:
        """`finding` for the client (a notebook's: placed in its cell already)."""
        _, lines = where(finding.path, finding.cell)
        page = installed_page(finding.code)
        return lsp.Diagnostic(
            range=self.range(lines, finding.line, finding.column, finding.end_line,
                             finding.end_column),
            message=self.relative(finding.message, finding.path),
            severity=_SEVERITY.get(finding.severity, lsp.DiagnosticSeverity.Warning),
            code=finding.code,
            code_description=lsp.CodeDescription(href=page.as_uri()) if page else None,
            source=SOURCE,
            related_information=[self.related(r, *where(r.path, r.cell), finding.path)
                                 for r in finding.related] or None)

    def relative(self, text: str, path: str) -> str:
        """`text` (a message about the file `path`) with the workspace's files named as
        `check` names them when run at the root of `path`'s workspace folder: relative to
        it (`pkg/train.py:12`), not by the absolute paths the server works with. Files
        outside every folder keep their absolute path. (Locations stay URIs: LSP wants
        them so.)"""
        if os.sep not in text:
            return text
        folders = sorted(map(os.path.abspath, self.folders()), key=len, reverse=True)
        # (the innermost folder first: nested workspace folders name their own files)
        root = next((f for f in folders if path.startswith(f.rstrip(os.sep) + os.sep)), None)
        if root is None:
            return text
        for folder in folders:
            prefix = folder.rstrip(os.sep) + os.sep
            if prefix in text:
                rel = os.path.relpath(folder, root)
                text = text.replace(prefix, "" if rel == os.curdir else rel + os.sep)
        return text

    def related(self, place, uri: str, lines: Sequence[str],
                about: str = "") -> lsp.DiagnosticRelatedInformation:
        column = place.column or 1
        end_line = place.end_line or place.line
        end_column = place.end_column or column
        return lsp.DiagnosticRelatedInformation(
            location=lsp.Location(uri=uri,
                                  range=self.range(lines, place.line, column, end_line,
                                                   end_column)),
            message=self.relative(place.label, about or place.path))

    # --- positions --------------------------------------------------------------------

    def reader(self) -> "Where":
        """Where a place that a finding names is for the client, each file read once:
        the URI and lines of its file (`_lines`), or of its notebook cell. The places a
        file's findings name are often in one other file, read from disk where no
        buffer holds it."""
        read: Dict[Tuple[str, Optional[int]], Tuple[str, List[str]]] = {}

        def where(path: str, cell: Optional[int] = None) -> Tuple[str, List[str]]:
            if (path, cell) not in read:
                state = self.notebooks.get(path)
                place = state.place(cell) if state is not None and cell is not None else None
                read[path, cell] = place or (self.uri_of(path), self._lines(path))
            return read[path, cell]
        return where

    def _lines(self, path: str) -> List[str]:
        """The file's lines as LSP and the findings count them (\n, \r\n, \r only)."""
        document = self._document(path)
        if document is not None:
            return physical_lines(document.source)
        text = self.project.text_of(path) if self.project is not None else None
        return physical_lines(text) if text else []

    def position(self, lines: Sequence[str], line: int, column: int) -> lsp.Position:
        """A finding's 1-based line and character column, in the client's units."""
        return self.workspace.position_codec.position_to_client_units(
            lines, lsp.Position(line=max(line - 1, 0), character=max(column - 1, 0)))

    def range(self, lines: Sequence[str], line: int, column: int, end_line: int,
              end_column: int) -> lsp.Range:
        return lsp.Range(start=self.position(lines, line, column),
                         end=self.position(lines, end_line, end_column))

    def text_edits(self, path: str, edits: Sequence[Edit]) -> List[lsp.TextEdit]:
        return self.edits_in(self._lines(path), edits)

    def edits_in(self, lines: Sequence[str], edits: Sequence[Edit]) -> List[lsp.TextEdit]:
        return [lsp.TextEdit(range=self.range(lines, e.line, e.column, e.end_line,
                                              e.end_column), new_text=e.content)
                for e in edits]

    def whole_change(self, old: str, new: str) -> List[lsp.TextEdit]:
        """The smallest one edit from `old` to `new` (their common start and end kept)."""
        start = 0
        limit = min(len(old), len(new))
        while start < limit and old[start] == new[start]:
            start += 1
        end = 0
        while end < limit - start and old[-1 - end] == new[-1 - end]:
            end += 1
        starts = line_starts(old)
        line, column = position(starts, start)
        end_line, end_column = position(starts, len(old) - end)
        return self.edits_in(physical_lines(old), [Edit(line, column + 1, end_line,
                                                        end_column + 1,
                                                        new[start:len(new) - end])])

    def edit(self, path: str, edits: List[lsp.TextEdit]) -> lsp.WorkspaceEdit:
        return self.edit_documents({self.uri_of(path): edits})

    def edit_documents(self, edits: Dict[str, List[lsp.TextEdit]]) -> lsp.WorkspaceEdit:
        """Edits of open documents (files, or a notebook's cells) by URI, each tied to the
        version of the document they were made for where the client gave versions."""
        versions = {}
        for uri in edits:
            document = self.workspace.text_documents.get(unquote(uri))
            versions[uri] = document.version if document is not None else None
        if all(version is not None for version in versions.values()):
            return lsp.WorkspaceEdit(document_changes=[lsp.TextDocumentEdit(
                text_document=lsp.OptionalVersionedTextDocumentIdentifier(
                    uri=uri, version=versions[uri]), edits=changes)
                for uri, changes in edits.items()])
        return lsp.WorkspaceEdit(changes=dict(edits))



def build(jobs: Optional[int] = None) -> SyncAdvisorServer:
    """A server with its features (a new one each time: the tests start several)."""
    server = SyncAdvisorServer(jobs)

    @server.feature(lsp.INITIALIZED)
    def initialized(ls: SyncAdvisorServer, params: lsp.InitializedParams) -> None:
        watched = ls.client_capabilities.workspace
        if watched is not None and watched.did_change_watched_files is not None and \
                watched.did_change_watched_files.dynamic_registration:
            ls.client_register_capability(lsp.RegistrationParams(registrations=[
                lsp.Registration(
                    id=str(uuid.uuid4()), method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                    register_options=lsp.DidChangeWatchedFilesRegistrationOptions(watchers=[
                        lsp.FileSystemWatcher(glob_pattern=f"**/{name}")
                        for name in (*_CONFIG_FILES, "*.py")]))]))
        ls.start_index()

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: SyncAdvisorServer, params: lsp.DidOpenTextDocumentParams) -> None:
        if ls.checks(params.text_document.uri):
            ls.schedule(ls.path_of(params.text_document.uri))

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: SyncAdvisorServer, params: lsp.DidChangeTextDocumentParams) -> None:
        if ls.checks(params.text_document.uri):
            ls.schedule(ls.path_of(params.text_document.uri))

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: SyncAdvisorServer, params: lsp.DidSaveTextDocumentParams) -> None:
        path = to_fs_path(params.text_document.uri) or ""
        if os.path.basename(path) in _CONFIG_FILES:
            ls.start_index(delay=0.2)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: SyncAdvisorServer, params: lsp.DidCloseTextDocumentParams) -> None:
        path = ls.path_of(params.text_document.uri)
        ls.dirty.discard(path)
        if ls.project is not None:
            ls.project.close(path)
        if ls.findings.pop(path, None) is not None and not ls.pulls():
            ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(
                uri=params.text_document.uri, diagnostics=[]))
        ls.uris.pop(path, None)
        if ls.findings:
            ls.dirty.update(ls.findings)
            ls._flush()

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_open(ls: SyncAdvisorServer, params: lsp.DidOpenNotebookDocumentParams) -> None:
        uri = params.notebook_document.uri
        path = notebook_path(ls.path_of(uri))
        ls.uris[path] = uri
        ls.notebooks[path] = OpenNotebook(uri, path)
        ls.schedule(path)

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_change(ls: SyncAdvisorServer,
                        params: lsp.DidChangeNotebookDocumentParams) -> None:
        state = ls.notebook_of(params.notebook_document.uri)
        if state is None:
            return
        cells = params.change.cells
        if cells is not None:  # (pygls has applied the change to its copy already)
            state.edited.update(t.document.uri for t in cells.text_content or ())
            if cells.structure is not None:
                state.edited.update(c.uri for c in cells.structure.did_open or ())
        ls.schedule(state.path)

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_SAVE)
    def notebook_save(ls: SyncAdvisorServer, params: lsp.DidSaveNotebookDocumentParams) -> None:
        """Nothing to do: the open notebook's cells are what counts, saved or not (the
        file on disk counts again once it is closed)."""

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_close(ls: SyncAdvisorServer,
                       params: lsp.DidCloseNotebookDocumentParams) -> None:
        state = next((s for s in ls.notebooks.values()
                      if unquote(s.uri) == unquote(params.notebook_document.uri)), None)
        if state is None:
            return
        del ls.notebooks[state.path]
        ls.dirty.discard(state.path)
        if ls.project is not None:
            ls.project.close(state.path)
        ls.findings.pop(state.path, None)
        if not ls.pulls():
            for uri in sorted(state.shown):
                ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(
                    uri=uri, diagnostics=[]))
        ls.uris.pop(state.path, None)
        if ls.findings:
            ls.dirty.update(ls.findings)
            ls._flush()

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched(ls: SyncAdvisorServer, params: lsp.DidChangeWatchedFilesParams) -> None:
        paths = [os.path.abspath(to_fs_path(change.uri) or "") for change in params.changes]
        created = any(change.type != lsp.FileChangeType.Changed for change in params.changes)
        if created or any(os.path.basename(p) in _CONFIG_FILES for p in paths):
            ls.start_index(delay=0.2)  # (which files are the workspace's may change)
            return
        if ls.indexing is not None and not ls.indexing.done():
            ls.changed_on_disk.update(paths)  # (the index may have read them before)
        project = ls.project
        if project is None:
            return
        for path in paths:
            if path not in project.buffers:  # (an open buffer is what counts)
                project.reread(path)
        ls.dirty.update(ls.findings)
        ls._flush()

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def folders(ls: SyncAdvisorServer, params: lsp.DidChangeWorkspaceFoldersParams) -> None:
        ls.start_index()  # (pygls has updated `workspace.folders` already)

    @server.feature(lsp.TEXT_DOCUMENT_DIAGNOSTIC, lsp.DiagnosticOptions(
        identifier=SOURCE, inter_file_dependencies=True, workspace_diagnostics=False))
    def pull(ls: SyncAdvisorServer, params: lsp.DocumentDiagnosticParams
             ) -> lsp.DocumentDiagnosticReport:
        state = ls.notebook_of(params.text_document.uri)
        if state is not None:  # a notebook's cell
            ls.flush_now(state.path)
            return lsp.RelatedFullDocumentDiagnosticReport(
                items=ls.cell_diagnostics(state).get(params.text_document.uri, []))
        path = ls.path_of(params.text_document.uri)
        if not ls.checks(params.text_document.uri):
            return lsp.RelatedFullDocumentDiagnosticReport(items=[])
        if path not in ls.findings and ls._document(path) is not None:
            ls.dirty.add(path)
        ls.flush_now(path)
        return lsp.RelatedFullDocumentDiagnosticReport(items=ls.diagnostics(path))

    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(
        code_action_kinds=[lsp.CodeActionKind.QuickFix, lsp.CodeActionKind.SourceFixAll,
                           FIX_ALL], resolve_provider=False))
    def code_action(ls: SyncAdvisorServer, params: lsp.CodeActionParams
                    ) -> List[lsp.CodeAction]:
        path, cell = ls.target(params.text_document.uri)
        only = params.context.only
        actions: List[lsp.CodeAction] = []
        if only is None or any(k == lsp.CodeActionKind.QuickFix or
                               str(k).startswith("quickfix") for k in only):
            actions.extend(_quick_fixes(ls, path, params.range, cell))
        if only is not None and any(
                k in (lsp.CodeActionKind.SourceFixAll, lsp.CodeActionKind.Source, FIX_ALL)
                or str(k) in ("source", "source.fixAll", FIX_ALL) for k in only):
            action = _fix_all(ls, path)
            if action is not None:
                actions.append(action)
        return actions

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    def hover(ls: SyncAdvisorServer, params: lsp.HoverParams) -> Optional[lsp.Hover]:
        path, cell = ls.target(params.text_document.uri)
        _, lines = ls.reader()(path, cell)
        for _, finding in _findings_in(ls, path, cell):
            span = ls.range(lines, finding.line, finding.column, finding.end_line,
                            finding.end_column)
            if _inside(params.position, span):
                rule = rules_by_code().get(finding.code)
                if rule is None:
                    continue
                text = (f"**{rule.code}** `{rule.name}` ({rule.severity})\n\n{rule.summary}"
                        f"\n\n{rule.documentation()}")
                return lsp.Hover(contents=lsp.MarkupContent(
                    kind=lsp.MarkupKind.Markdown, value=text), range=span)
        return None

    return server


def _inside(position: lsp.Position, span: lsp.Range) -> bool:
    start, end = (span.start.line, span.start.character), (span.end.line, span.end.character)
    at = (position.line, position.character)
    return start <= at <= end


def _overlaps(a: lsp.Range, b: lsp.Range) -> bool:
    return (a.start.line, a.start.character) <= (b.end.line, b.end.character) and \
        (b.start.line, b.start.character) <= (a.end.line, a.end.character)


def _findings_in(ls: SyncAdvisorServer, path: str, cell: Optional[int]
                 ) -> List[Tuple[Finding, Finding]]:
    """The findings of a file, or of a notebook's cell: (as found, as the client sees it:
    in its cell)."""
    state = ls.notebooks.get(path)
    if state is None:
        return [(finding, finding) for finding in ls.findings.get(path, [])]
    return state.by_cell(ls.findings.get(path, [])).get(cell or 0, [])


def _quick_fixes(ls: SyncAdvisorServer, path: str, wanted: lsp.Range,
                 cell: Optional[int] = None) -> List[lsp.CodeAction]:
    """A fix per finding under `wanted` that has one (the safe ones preferred), and a
    `# noqa` for each. In a notebook's cell, each is made on the virtual module and put
    back into the cells it changes, as `--fix` does; where it cannot be (a line IPython
    rewrote), it is not offered."""
    actions: List[lsp.CodeAction] = []
    where = ls.reader()
    state = ls.notebooks.get(path)
    text = state.nb.virtual if state is not None and state.nb is not None else \
        "".join(where(path, None)[1])

    def change(new: str) -> Optional[lsp.WorkspaceEdit]:
        if state is not None:
            return ls.cells_edit(state, new)
        return ls.edit(path, ls.whole_change(text, new))

    for found, finding in _findings_in(ls, path, cell):
        diagnostic = ls.diagnostic(finding, where)
        if not _overlaps(diagnostic.range, wanted):
            continue
        fix = finding.fix
        if fix is not None and fix.edits:
            safe = fix.applicability == SAFE
            message = ls.relative(fix.message, path)
            title = message if safe else f"{message} (unsafe: review it)"
            edit = ls.edit(path, ls.text_edits(path, fix.edits)) if state is None else \
                change(apply_fixes(text, [found], unsafe=True)[0])
            if edit is not None:
                actions.append(lsp.CodeAction(
                    title=f"{finding.code}: {title}", kind=lsp.CodeActionKind.QuickFix,
                    diagnostics=[diagnostic], is_preferred=safe, edit=edit))
        new, added, _ = add_noqa(text, [found])
        edit = change(new) if added else None
        if edit is not None:
            actions.append(lsp.CodeAction(
                title=f"{finding.code}: add `# noqa: {finding.code}`",
                kind=lsp.CodeActionKind.QuickFix, diagnostics=[diagnostic], edit=edit))
    return actions


def _fix_all(ls: SyncAdvisorServer, path: str) -> Optional[lsp.CodeAction]:
    """The file's safe fixes at once, as `syncadvisor check --fix` makes them."""
    project = ls.project
    text = project.text_of(path) if project is not None else None
    fixed = project.fixed(path) if project is not None else None
    if text is None or fixed is None:
        return None
    state = ls.notebooks.get(path)
    edit = ls.edit(path, ls.whole_change(text, fixed)) if state is None else \
        ls.cells_edit(state, fixed)
    if edit is None:
        return None
    return lsp.CodeAction(title="syncadvisor: fix all safe fixes", kind=FIX_ALL, edit=edit)


def main(jobs: Optional[int] = None) -> int:
    # The protocol reads and writes streams of its own, on copies of the descriptors:
    # the index forks worker processes, and a forked worker closes `sys.stdin` and
    # flushes `sys.stdout` as it starts and ends. The protocol's reader thread waits
    # inside its stream's buffer, holding the buffer's lock, whenever no message is
    # coming in; had that buffer been `sys.stdin`'s, the worker would wait for that lock
    # for ever (and `sys.stdout`'s likewise, were it forked while a message went out).
    # A stray print goes to standard error, never into the protocol.
    stdin = os.fdopen(os.dup(sys.stdin.fileno()), "rb")
    stdout = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout = sys.stderr
    build(jobs).start_io(stdin, stdout)
    return 0
