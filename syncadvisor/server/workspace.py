"""An editor's workspace as one run that stays: every Python file of its folders
modelled once, the open buffers modelled again as they change, and the findings of
the open files asked of the workspace's linked projects, which stay too: an edit
replaces one file's model in its project (`Project.replace`), which forgets only the
facts that read what changed. Nothing here knows the protocol (`lsp.py` does).

Invariants: `results` holds one `FileResult` per file of the workspace that the run
models (as `Run` chooses them: the files that may hold a finding and the modules
their names lead into) and one per open buffer, modelled from the buffer's text, never
the disk's, whatever the prefilter says; a file that is neither is in `unmodelled`
(by module), modelled as soon as a model's names lead into it.
"""
from __future__ import annotations

import os
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Set

from ..collector import collector_paused
from ..config import Configuration
from ..engine import Run
from ..engine.run import model_reached
from ..engine.analyze import FileResult, analyze_text
from ..engine.check import Linked, check
from ..engine.prefilter import may_hold_a_finding
from ..files import discover, module_name
from ..findings import Finding
from ..fixes import fix_results
from ..inputs import load_input
from ..model.facts import FileModel
from ..model.project import Project


class Workspace:
    def __init__(self, folders: Sequence[str], jobs: int = 1):
        self.folders = [os.path.abspath(f) for f in folders]
        self.jobs = jobs
        self.configuration = Configuration()
        self.results: Dict[str, FileResult] = {}
        self.unmodelled: Dict[str, List[str]] = {}  # module -> its files not modelled
        self.buffers: Dict[str, str] = {}  # open buffers by absolute path
        self.discovered: Set[str] = set()  # the workspace's files, as the last index found
        # The projects the modelled files are linked in (kept across edits); made when
        # findings are first asked for after an index.
        self._linked: Optional[Linked] = None

    # --- the files --------------------------------------------------------------------

    def files(self) -> List[str]:
        """The workspace's Python files, as `check` would find them (its excludes and
        `.gitignore`), by absolute path."""
        found: List[str] = []
        for folder in self.folders:
            if os.path.isdir(folder):
                found.extend(os.path.abspath(p) for p in discover([folder], self.configuration))
        return found

    def index(self, progress: Callable[[str], None] = lambda message: None) -> None:
        """Model the workspace's files from disk (the open buffers stay as they are):
        what a cold `check` of its folders models, in `jobs` processes."""
        with collector_paused():  # (as a `check` run: the models are long-lived)
            self._index(progress)

    def _index(self, progress: Callable[[str], None]) -> None:
        self.configuration = Configuration()  # (its config files may have changed)
        paths = self.files()
        self.discovered = set(paths)
        progress(f"reading {len(paths)} files")
        run = Run(self.configuration, jobs=self.jobs)
        for path in paths:
            if path not in self.buffers:  # (modelled from their texts below)
                run.add_file(path)
        progress(f"modelling {len(paths)} files")
        results = {r.path: r for r in run.analyze()}
        for path, text in self.buffers.items():
            results[path] = self._model(path, text)
        self.results = results
        self._linked = None
        self.unmodelled = {}
        for path in paths:
            if results.get(path) is None or (results[path].model is None
                                              and not results[path].errors):
                results.pop(path, None)
                self.unmodelled.setdefault(module_name(path), []).append(path)
        self._model_reached()  # (the run's own pass did not see the buffers)

    def _model(self, path: str, text: str) -> FileResult:
        return analyze_text(text, path, self.configuration.for_path(path), prefilter=False)

    def open(self, path: str, text: str) -> None:
        """A buffer opened or changed: modelled from its text."""
        path = os.path.abspath(path)
        self.buffers[path] = text
        self.results[path] = self._model(path, text)
        self._unmodelled_remove(path)
        self._changed(path)
        self._model_reached(path)

    def close(self, path: str) -> None:
        """A buffer closed: the file is what the disk holds again (or nothing, if it is
        not one of the workspace's files)."""
        path = os.path.abspath(path)
        self.buffers.pop(path, None)
        self.results.pop(path, None)
        self._changed(path)
        self.reread(path)

    def reread(self, path: str) -> None:
        """A workspace file that no buffer holds, changed on disk: modelled again from
        it (kept among the unmodelled ones if the prefilter drops it there); gone from
        the run if it is gone. Files the index did not find (excluded, ignored, outside
        the folders) stay out."""
        if path in self.buffers or path not in self.discovered:
            return
        try:
            text = load_input(path).text
        except Exception:  # noqa: BLE001 - gone or unreadable: its findings go with it
            self.results.pop(path, None)
            self._changed(path)
            return
        files = self.unmodelled.get(module_name(path), [])
        if path in files and not may_hold_a_finding(text):
            return
        self._unmodelled_remove(path)
        self.results[path] = self._model(path, text)
        self._changed(path)

    def excluded(self, path: str) -> bool:
        """Whether `check` would leave the file out, named on its command line."""
        return self.configuration.for_path(path).is_excluded(path)

    def _unmodelled_remove(self, path: str) -> None:
        module = module_name(path)
        files = self.unmodelled.get(module)
        if files and path in files:
            files.remove(path)
            if not files:
                del self.unmodelled[module]

    def _model_reached(self, edited: Optional[str] = None) -> None:
        """Model the files the prefilter left out that the models' names now lead into
        (an edited buffer that imports a module no model needed before): where the
        projects are linked, following the edited file's names through its project."""
        result = self.results.get(edited) if edited is not None else None
        project = self._linked.projects.get(edited) if self._linked is not None and edited \
            else None
        if project is not None and result is not None and result.model is not None:
            model_reached(self.results, self.unmodelled, self._from_disk, project.index,
                          [result.model], self._joins(project))
            return
        for path in model_reached(self.results, self.unmodelled, self._from_disk):
            self._changed(path)

    # --- the linked projects -----------------------------------------------------------

    def _projects(self) -> Dict[str, Project]:
        if self._linked is None:
            self._linked = Linked(r.model for r in self.results.values()
                                  if r.model is not None)
        return self._linked.projects

    def _joins(self, project: Project):
        """How a file modelled on the second pass joins `project`."""
        def add(path: str, model: FileModel) -> None:
            self._linked.join(project, path, model)  # type: ignore[union-attr]
        return add

    def _changed(self, path: str) -> None:
        """`results[path]` changed, or is gone: so is the file's model in its project (a
        file new to the projects joins the one of its source root)."""
        if self._linked is None:
            return
        result = self.results.get(path)
        if not self._linked.replace(path, result.model if result is not None else None):
            self._linked = None  # (its module clashes with each project's: link anew)

    def _from_disk(self, path: str) -> Optional[FileResult]:
        try:
            return self._model(path, load_input(path).text)
        except Exception:  # noqa: BLE001 - unreadable: not modelled
            return None

    # --- findings ---------------------------------------------------------------------

    def text_of(self, path: str) -> Optional[str]:
        if path in self.buffers:
            return self.buffers[path]
        try:
            return load_input(path).text
        except Exception:  # noqa: BLE001 - gone or unreadable: no noqa comments to read
            return None

    def findings(self, paths: Iterable[str]) -> Dict[str, List[Finding]]:
        """The findings of each of `paths` (absolute), with the whole workspace linked."""
        wanted: Set[str] = {os.path.abspath(p) for p in paths}
        found: Dict[str, List[Finding]] = {p: [] for p in wanted}
        run = check(list(self.results.values()), self.configuration, self.text_of, only=wanted,
                    linked=self._projects())
        for finding in run.findings:
            if finding.path in found:
                found[finding.path].append(finding)
        return found

    def fixed(self, path: str, unsafe: bool = False) -> Optional[str]:
        """The buffer's text with its fixes applied (the safe ones, and the unsafe ones
        with `unsafe`) until nothing changes, none bringing a new finding; None if there
        is nothing to fix, or the fix is refused."""
        path = os.path.abspath(path)
        text = self.text_of(path)
        if text is None or path not in self.results:
            return None
        outcome = fix_results(list(self.results.values()), {path: text}, self.configuration,
                              unsafe)
        new = outcome.fixed.get(path)
        return new if new is not None and new != text else None
