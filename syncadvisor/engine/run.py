"""One `Run`: the files (or in-memory texts) of one check -> findings, and on request
fixes. The command, the flake8 plugin, `api` and the fixer all go through it.

    run = Run(settings, jobs=4, cache=cache)  # or Run(Configuration(), ...)
    run.add_file("train.py")                 # or add_text(path, buffer)
    result = run.check()                     # RunResult: findings as users see them

Each file is checked under its own settings (`settings.for_path`): one `Settings` for
every file, or a `Configuration` that finds each file's; files with different settings
are still one project, linked together. Files are read when added; models come from
the cache or from stage 1 (in `jobs` processes), then stage 2 checks the whole run.

Stage 1 models only the files that may hold a finding (`engine.prefilter`). A file it
drops may still be where another file's names lead: `pkg/compat.py` doing `import
tf_keras as tfk`, whose `tfk.layers.Layer` is a base class in `pkg/model.py`. A second
pass models the dropped files of the run that the modelled ones follow names into
(`model.reach.modules_reached`), then those they lead to, so that linking sees what
the names stand for; a run where no name leads into a dropped file pays only the
search. Which files it models is a function of the run's files, never of the cache.
Findings are presented as the user sees the file (a notebook's by cell). With
`cache_runs`, a run over files that are all unchanged since the last one, under the
same settings, gives that run's findings without modelling.
"""
from __future__ import annotations

import ast
import os
from typing import TYPE_CHECKING, Callable, Dict, List, Optional, Tuple

from ..records import field, record, replace
from ..config import Resolver
from ..files import UnreadableSource, module_name
from ..findings import Finding
from ..inputs import Input, load_input, text_input
from ..model import tfapi
from ..model.facts import FileModel
from ..model.index import ProjectIndex
from ..model.reach import followed_names, index_of, modules_reached
from ..model.project import LinkedFile
from ..notebook import is_notebook
from .analyze import PARSE_ERROR, FileResult, analyze_text, unreadable
from . import legacy
from .check import RunResult, check, link
from .parallel import analyze_files

if TYPE_CHECKING:
    from ..cache import Cache


@record
class FixOutcome:
    """What `Run.fix` made: the findings that remain, and the new text of each changed
    file as it is to be written (a notebook's JSON)."""

    run: RunResult
    files: Dict[str, str] = field(default_factory=dict)
    applied: int = 0
    refused: Dict[str, str] = field(default_factory=dict)  # path -> why it is left unchanged
    # fixes not applied because they would bring a finding: (the user's finding, the new one)
    reverted: List[Tuple[Finding, Finding]] = field(default_factory=list)


@record
class NoqaOutcome:
    """What `Run.add_noqa` made: the new text of each changed file as it is to be written,
    how many noqa comments were added or extended, and what could not be done."""

    files: Dict[str, str] = field(default_factory=dict)
    added: int = 0
    refused: Dict[str, str] = field(default_factory=dict)  # path -> why it is left unchanged
    cannot: List[Finding] = field(default_factory=list)  # findings no comment can suppress


def model_reached(results: Dict[str, FileResult], unmodelled: Dict[str, List[str]],
                  model_whole: Callable[[str], Optional[FileResult]],
                  index: Optional[ProjectIndex] = None,
                  fresh: Optional[List[FileModel]] = None,
                  add: Optional[Callable[[str, FileModel], object]] = None) -> List[str]:
    """Model, into `results`, the files of `unmodelled` (module name -> its files not
    modelled; a module reached leaves it) that the models' names lead into, until no
    name leads into another; the paths modelled. `model_whole(path)` models a file
    without the prefilter; None: it cannot be read, and stays out. `index` holds the
    models of `results` already (a language server's, kept up to date): then only the
    names of the `fresh` models are followed first, those of the others having been
    followed when they came; a file modelled here is added to it (by `add`, the owner
    of the index, where it has one)."""
    added: List[str] = []
    if not unmodelled:
        return added
    if index is None:
        index = index_of(r.model for r in results.values() if r.model is not None)
        fresh = None
    if add is None:
        add = index.replace
    names = followed_names(index, fresh if fresh is not None else index.files.values())
    while unmodelled and index.files:
        reached = modules_reached(index, unmodelled, names)
        if not reached:
            break
        for module in sorted(reached):
            for path in unmodelled.pop(module):
                result = model_whole(path)
                if result is None:
                    continue
                results[path] = result
                added.append(path)
                if result.model is not None:
                    add(path, result.model)
        # (a name may now go on through a module just modelled)
        names = followed_names(index, list(index.files.values()))
    return added


class Run:
    def __init__(self, settings: Resolver, jobs: int = 1, cache: Optional["Cache"] = None,
                 cache_runs: bool = False):
        self.settings = settings
        self.jobs = jobs
        self.cache = cache
        self.cache_runs = cache_runs and cache is not None
        self.inputs: Dict[str, Input] = {}  # every readable file or text, by path
        self._order: List[str] = []
        self._digests: Dict[str, str] = {}  # path -> cache digest of its bytes
        self._failed: Dict[str, FileResult] = {}  # files that cannot be read
        self._trees: Dict[str, ast.Module] = {}
        self._results: Optional[List[FileResult]] = None

    # --- what the run checks ----------------------------------------------------------

    def add_file(self, path: str, data: Optional[bytes] = None) -> Optional[Input]:
        """A file: read now, or its bytes given (standard input). One that cannot be read
        is a TFS900 finding of the run (None is returned)."""
        try:
            item = load_input(path, data)
        except UnreadableSource as exc:
            self._failed[path] = unreadable(path, exc)
            self._add(path, f"unreadable: {exc}")
            return None
        self.inputs[path] = item
        self._add(path, self._digest(item))
        return item

    def add_missing(self, path: str) -> None:
        """A path named to the run that is not there: a TFS900 finding of the run, as
        ruff's E902 (exit 1, the other files still checked), not a usage error."""
        self._failed[path] = unreadable(path, UnreadableSource("no such file or directory"))
        self._add(path, "missing")

    def add_text(self, path: str, text: str, tree: Optional[ast.Module] = None) -> Input:
        """An in-memory text, checked as Python whatever its name (`tree`: Python's tree
        of it, when the caller has parsed it already)."""
        item = self.inputs[path] = text_input(path, text)
        if tree is not None:
            self._trees[path] = tree
        self._add(path, self._digest(item))
        return item

    def _add(self, path: str, digest: str) -> None:
        if path not in self._digests:
            self._order.append(path)
        self._digests[path] = digest
        self._results = None

    def _digest(self, item: Input) -> str:
        if self.cache is None:
            return ""
        return self.cache.file_digest(item.data, item.path, module_name(item.path),
                                      self.settings.for_path(item.path).cache_key())

    # --- stage 1 ----------------------------------------------------------------------

    def analyze(self) -> List[FileResult]:
        """Every file's `FileResult`, in the order added: from the cache, else modelled."""
        if self._results is not None:
            return self._results
        results: Dict[str, FileResult] = dict(self._failed)
        todo: List[str] = []
        for path in self.inputs:
            cached = self.cache.load_model(self._digests[path]) if self.cache else None
            if isinstance(cached, FileResult) and cached.path == path:
                results[path] = cached
            elif self.inputs[path].is_text:
                item = self.inputs[path]
                results[path] = analyze_text(item.text, path, self.settings.for_path(path),
                                             tree=self._trees.pop(path, None))
                self._store(path, results[path])
            else:
                todo.append(path)
        items = [(path, self.inputs[path].data, self.settings.for_path(path)) for path in todo]
        for path, result in zip(todo, analyze_files(items, self.jobs)):
            results[path] = result
            self._store(path, result)
        self._model_reached(results)
        self._legacy_keras(results)
        self._results = [results[path] for path in self._order]
        return self._results

    def _legacy_keras(self, results: Dict[str, FileResult]) -> None:
        """Mark, in `results`, the models of the files whose scope (engine/legacy.py: the
        top-level package, read from disk) has a module that sets TF_USE_LEGACY_KERAS
        before it loads `tf.keras`: `tf.keras` is Keras 2 there whatever TensorFlow the
        project targets, so a claim about Keras 2 rests on no guess. Where the target made
        `tf.keras` Keras 3, the file is modelled again with it as Keras 2. A file whose
        config sets `keras` keeps it."""
        scopes: Dict[Tuple[str, bool], Optional[str]] = {}
        checked: Dict[str, str] = {}  # absolute path -> the run's path, made on first need
        folders: Dict[str, Tuple[str, bool]] = {}  # a file's folder -> its scope
        for path, result in list(results.items()):
            if result.model is None or path not in self.inputs:
                continue
            settings = self.settings.for_path(path)
            if "keras" in settings.set_keys:
                continue
            folder = os.path.dirname(path)
            scope = folders.get(folder)
            if scope is None:
                scope = folders[folder] = legacy.scope_of(path)
            if scope not in scopes:
                if not checked:
                    checked.update((os.path.abspath(p), p) for p in self.inputs)
                scopes[scope] = self._legacy_in(scope, checked)
            found = scopes[scope]
            if found is None:
                continue
            if not tfapi.tf_keras_is_keras3(settings.target_tensorflow, settings.keras):
                # Modelled as Keras 2 already; a copy, since the result may be the cache's.
                results[path] = replace(result, model=replace(result.model, legacy_keras=found))
                continue
            key = self._digests[path] + "-legacy-keras"
            cached = self.cache.load_model(key) if self.cache else None
            if isinstance(cached, FileResult) and cached.path == path and \
                    cached.model is not None and cached.model.legacy_keras == found:
                results[path] = cached
                continue
            again = analyze_text(self.inputs[path].text, path, replace(settings, keras="2"),
                                 prefilter=False)
            if again.model is None:
                continue
            again.model.legacy_keras = found
            results[path] = again
            if self.cache is not None and not again.internal_error:
                self.cache.store_model(key, again)

    def _legacy_in(self, scope: Tuple[str, bool], checked: Dict[str, str]) -> Optional[str]:
        """"path:line" of the first module of `scope` that sets the variable at import
        (the run's own text of a file it checks -- `checked`: by absolute path -- else the
        file on disk); None: none."""
        for file in legacy.scope_files(*scope):
            path = checked.get(file)  # (scope_files names files by absolute path)
            if path is not None:
                item: Optional[Input] = self.inputs[path]
            else:
                try:
                    with open(file, "rb") as handle:
                        data = handle.read()
                except OSError:
                    continue
                if legacy.WORD not in data:
                    continue
                path = os.path.relpath(file)
                try:
                    item = load_input(file, data)
                except UnreadableSource:
                    continue
            if item is None or legacy.WORD not in item.data:
                continue
            try:
                line = legacy.sets_legacy_keras(item.text)
            except UnreadableSource:
                continue
            if line is not None:
                return f"{path}:{line}"
        return None

    def _model_reached(self, results: Dict[str, FileResult]) -> None:
        """The second pass: model, in `results`, the files the prefilter dropped that
        the modelled files' names lead into, until no name leads into another."""
        unmodelled: Dict[str, List[str]] = {}  # module name -> its dropped files
        for path, result in results.items():
            if result.model is None and not result.errors and path in self.inputs \
                    and not is_notebook(path):
                unmodelled.setdefault(module_name(path), []).append(path)
        model_reached(results, unmodelled, self._model_whole)

    def _model_whole(self, path: str) -> FileResult:
        """A file's result modelled without the prefilter. Cached apart from its stage 1
        result (the same bytes, another key): a run that does not reach the file must
        not find it modelled."""
        key = self._digests[path] + "-whole"
        cached = self.cache.load_model(key) if self.cache else None
        if isinstance(cached, FileResult) and cached.path == path:
            return cached
        item = self.inputs[path]
        try:
            text = item.text
        except UnreadableSource as exc:
            return unreadable(path, exc)
        result = analyze_text(text, path, self.settings.for_path(path), prefilter=False)
        if self.cache is not None and not result.internal_error:
            self.cache.store_model(key, result)
        return result

    def _store(self, path: str, result: FileResult) -> None:
        if self.cache is not None and not result.internal_error:
            self.cache.store_model(self._digests[path], result)

    def linked_files(self) -> List[LinkedFile]:
        """The linked model of every file that has one, in order: what the rules see."""
        linked = link(r.model for r in self.analyze() if r.model is not None)
        return [linked[r.path].link(r.model) for r in self.analyze() if r.model is not None]

    # --- stage 2 ----------------------------------------------------------------------

    def check(self) -> RunResult:
        """The run's findings, as the user sees each file."""
        if self.cache_runs:
            assert self.cache is not None
            folder, files = os.getcwd(), self._run_files()
            findings = self.cache.load_run(folder, files)
            if findings is not None:
                return RunResult(self.present(findings), len(files))
        run = check(self.analyze(), self.settings, self._text_of)
        if self.cache_runs and not run.internal_error:
            assert self.cache is not None
            self.cache.store_run(folder, files, run.findings)
        return RunResult(self.present(run.findings), run.files, run.internal_error)

    def _run_files(self) -> List[Tuple[str, str, str]]:
        """What a run's findings depend on: each file's path, digest and settings."""
        keys: Dict[int, str] = {}  # id of a Settings -> its run key, made once
        files = []
        for path, digest in self._digests.items():
            settings = self.settings.for_path(path)
            key = keys.get(id(settings))
            if key is None:
                key = keys[id(settings)] = settings.run_key()
            files.append((path, digest, key))
        return files

    def _text_of(self, path: str) -> Optional[str]:
        try:
            return self.inputs[path].text
        except UnreadableSource:  # (its findings are TFS900s, never suppressed)
            return None

    def present(self, findings: List[Finding]) -> List[Finding]:
        """Findings as the user sees the file (a notebook's by cell), sorted; so are the
        places they name in other files (`Finding.related`)."""
        shown = [self.inputs[f.path].present(f) if f.path in self.inputs else f
                 for f in findings]
        shown = [self._present_related(f) if f.related else f for f in shown]
        return sorted(shown, key=Finding.sort_key)

    def _present_related(self, f: Finding) -> Finding:
        places = tuple(self.inputs[r.path].present_related(r)
                       if r.path != f.path and r.path in self.inputs else r
                       for r in f.related)
        return replace(f, related=places) if places != f.related else f

    # --- fixes ------------------------------------------------------------------------

    def fix(self, unsafe: bool = False) -> FixOutcome:
        """Apply the safe fixes (and the unsafe ones, with `unsafe`) until nothing
        changes; nothing is written here."""
        from ..fixes import fix_results

        texts = {r.path: self.inputs[r.path].text for r in self.analyze() if r.model is not None}
        outcome = fix_results(self.analyze(), texts, self.settings, unsafe)
        refused = dict(outcome.rejected)
        files: Dict[str, str] = {}
        for path, fixed in outcome.fixed.items():
            try:
                files[path] = self.inputs[path].output(fixed)
            except ValueError as exc:  # a notebook cell the fix cannot be put back into
                refused[path] = str(exc)
        run = outcome.run
        reverted = [(self.present([r.finding])[0], self.present([r.introduced])[0])
                    for r in outcome.reverted]
        return FixOutcome(RunResult(self.present(run.findings), run.files, run.internal_error),
                          files, outcome.applied, refused, reverted)

    # --- noqa comments ---------------------------------------------------------------

    def add_noqa(self) -> NoqaOutcome:
        """A `# noqa: CODE` for every finding of the run that a comment can suppress (not
        TFS900: a file that cannot be read or parsed); nothing is written here."""
        from ..add_noqa import add_noqa

        run = check(self.analyze(), self.settings, self._text_of)
        by_path: Dict[str, List[Finding]] = {}
        for finding in run.findings:
            if finding.code != PARSE_ERROR and finding.path in self.inputs:
                by_path.setdefault(finding.path, []).append(finding)
        outcome = NoqaOutcome()
        for path, findings in by_path.items():
            text, added, cannot = add_noqa(self.inputs[path].text, findings)
            outcome.cannot.extend(self.present(cannot))
            if not added:
                continue
            try:
                outcome.files[path] = self.inputs[path].output(text)
            except ValueError as exc:  # a notebook that would not survive being rewritten
                outcome.refused[path] = str(exc)
                continue
            outcome.added += added
        return outcome
