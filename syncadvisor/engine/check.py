"""Stage 2, the whole run at once: link the models, run the enabled rules over each
linked file, drop what `# noqa` suppresses or the settings deselect, sort. Every file
is checked under its own settings, linked with all the others whatever theirs are.

A file's `# noqa` comments are read here, from its text, and only where the rules
found something, or where stage 1 saw a `# noqa` naming a TFS code (`tfs_noqa`), whose
codes that suppressed nothing are TFS901 findings: reading them takes Python's
tokenizer over the whole file, which would cost more than modelling every file that
has one.
"""
from __future__ import annotations

from typing import (Callable, Collection, Dict, Iterable, List, Mapping, Optional, Protocol,
                    Sequence, Set, Tuple, Union)

from ..records import record
from ..collector import collector_paused
from ..config import Resolver, Settings
from ..findings import Finding
from ..model.db import Query
from ..model.facts import FileModel
from ..model.project import Project, projects, source_root
from ..rules import all_codes, enabled_rules
from ..rules.base import Rule, RuleContext
from ..rules.tfs901_unused_noqa import unused_noqa
from ..suppress import Directive, parse_suppressions
from .analyze import FileResult, internal_error

UNUSED_NOQA = "TFS901"


@record
class RunResult:
    findings: List[Finding]
    files: int
    internal_error: bool = False


def link(models: Iterable[FileModel], track: bool = False) -> Dict[str, Project]:
    """The project each model is linked in, by path: what the rules ask about (`track`:
    projects whose files may be replaced, `Project.replace`)."""
    found: Dict[str, Project] = {}
    for project in projects(models, track):
        for fm in project.files:
            found[fm.path] = project
    return found


class Linked:
    """The projects a run's files are linked in, kept across changes to the files: a
    changed file's model replaces its old one in its project (`Project.replace`), which
    forgets only the answers that read what changed. The language server keeps one for
    its workspace, `--fix` one for its rounds.

    Invariant: `projects` maps the path of every model a project holds to that project.
    """

    def __init__(self, models: Iterable[FileModel]):
        self.projects: Dict[str, Project] = link(models, track=True)

    def model(self, path: str) -> Optional[FileModel]:
        """The model the projects hold for `path`, if any."""
        project = self.projects.get(path)
        return project.index.files.get(path) if project is not None else None

    def replace(self, path: str, model: Optional[FileModel]) -> bool:
        """The file at `path` is now `model` (None: gone, or not modelled); False where a
        file new to the projects joins none (its module clashes with each project's):
        they are to be linked anew."""
        project = self.projects.get(path)
        if project is None:
            if model is None:
                return True
            project = self._project_for(model)
            if project is None:
                return False
        self.join(project, path, model)
        return True

    def join(self, project: Project, path: str, model: Optional[FileModel]) -> None:
        """`model` at `path` is in `project` now (None: in none)."""
        project.replace(path, model)
        if model is None:
            self.projects.pop(path, None)
        else:
            self.projects[path] = project

    def _project_for(self, model: FileModel) -> Optional[Project]:
        """The project a new file joins: the one that has its source root, else the first
        whose modules its module does not clash with."""
        root = source_root(model)
        candidates: List[Project] = []
        for path, project in self.projects.items():
            if project not in candidates:
                candidates.append(project)
            if source_root(project.index.files[path]) == root and \
                    project.index.module(model.module) is None:
                return project
        return next((p for p in candidates if p.index.module(model.module) is None), None)


class KeptFindings:
    """Each file's rule findings kept across the checks of tracked projects (`--fix`'s
    rounds and trials): an answer of the file's project's query engine, which records
    what the rules read (answers, and models through the index), so that a check runs
    the rules again only on the files where something they read has changed.

    Invariant: a kept answer is what the rules find on the model its project holds for
    the file, under the settings it is keyed by (`Db.verify` checks it before use)."""

    def __init__(self) -> None:
        # id of a project -> (the project, kept so that its id stays its own; its query)
        self._queries: Dict[int, Tuple[Project, Query]] = {}
        # id of a settings -> (the settings, kept likewise; the rules it selects)
        self._settings: Dict[int, Tuple[Settings, List[Rule]]] = {}

    def findings(self, project: Project, path: str, settings: Settings,
                 rules: List[Rule]) -> Sequence[Finding]:
        self._settings.setdefault(id(settings), (settings, rules))
        kept = self._queries.get(id(project))
        if kept is None:
            chosen = self._settings  # (not `self`: the query must not hold what holds it)

            def compute(path: str, settings_id: int) -> Tuple[Finding, ...]:
                settings, rules = chosen[settings_id]
                return tuple(_rule_findings(project, project.index.file_at(path), settings,
                                            rules))

            query = project.db.query("rule_findings", compute, (), same=_equal,
                                     outermost=True)
            kept = self._queries[id(project)] = (project, query)
        return kept[1](path, id(settings))


def _equal(old: object, new: object) -> bool:
    return old == new


def _rule_findings(project: Project, model: FileModel, settings: Settings,
                   rules: List[Rule]) -> List[Finding]:
    ctx = RuleContext(project.link(model), settings)
    found: List[Finding] = []
    for rule in rules:
        if settings.enabled(rule.code, model.path):
            found.extend(rule.check(ctx.for_rule(rule)))
    return found


class PathSettings(Protocol):
    """What gives each file its settings (a `Resolver`, or one that keeps its answers)."""

    def for_path(self, path: str) -> Settings: ...


def check(results: Sequence[FileResult], resolver: Union[Resolver, PathSettings],
          text_of: Callable[[str], Optional[str]],
          only: Optional[Collection[str]] = None,
          linked: Optional[Mapping[str, Project]] = None,
          kept: Optional[KeptFindings] = None) -> RunResult:
    """Every file's TFS900 findings and the enabled rules' findings, unsuppressed, sorted.
    `resolver.for_path(path)` is a file's settings; `text_of(path)` is the text it was
    modelled from (None: gone), for its `# noqa` comments. A rule that raises costs its
    file a TFS900 (internal error), not the run. With `only`, the findings of those
    paths alone (an editor's open files): facts are asked for only as far as their rules
    need. `linked` gives the project of each modelled path, where the caller keeps them
    (the language server); else they are linked here. With `kept` (tracked projects
    only), each file's rule findings are kept across checks."""
    with collector_paused():
        if linked is None:
            linked = link(r.model for r in results if r.model is not None)
        rules_of: Dict[int, List[Rule]] = {}  # id of a Settings -> the rules it selects
        findings: List[Finding] = []
        internal = any(r.internal_error for r in results)
        for result in results:
            if only is not None and result.path not in only:
                continue
            settings = resolver.for_path(result.path)
            findings.extend(f for f in result.errors if settings.enabled(f.code, result.path))
            rules = rules_of.get(id(settings))
            if rules is None:
                rules = rules_of[id(settings)] = enabled_rules(settings)
            file_findings: List[Finding] = []
            if result.model is not None:
                try:
                    project = linked[result.path]
                    if kept is not None and project.index.files.get(result.path) \
                            is result.model:
                        file_findings = list(kept.findings(project, result.path, settings,
                                                           rules))
                    else:
                        file_findings = _rule_findings(project, result.model, settings, rules)
                except Exception as exc:  # noqa: BLE001 - report, go on with the next file
                    file_findings = [internal_error(result.path, exc)]
                    internal = True
            unused = (result.tfs_noqa and not result.errors
                      and settings.enabled(UNUSED_NOQA, result.path))
            if not file_findings and not unused:
                continue
            text = text_of(result.path)
            if text is not None:
                file_findings = _unsuppressed(file_findings, result.path, text, settings, unused)
            findings.extend(file_findings)
        findings.sort(key=Finding.sort_key)
        return RunResult(findings, len(results), internal)


def _unsuppressed(findings: List[Finding], path: str, text: str, settings: Settings,
                  unused: bool) -> List[Finding]:
    """The findings no `# noqa` of the file suppresses; with `unused`, and a TFS901 for
    each inline `# noqa` whose TFS codes suppressed none of them."""
    suppressions = parse_suppressions(text)
    kept: List[Finding] = []
    used: Dict[Directive, Set[str]] = {}
    for finding in findings:
        directive = suppressions.lines.get(finding.line)
        code = directive.covers(finding.code) if directive is not None else None
        if code is not None:
            used.setdefault(directive, set()).add(code)  # type: ignore[arg-type]
        elif not suppressions.suppressed(finding.code, finding.line):
            kept.append(finding)
    if unused:
        for finding in unused_noqa(path, text, suppressions, used,
                                   lambda code: settings.enabled(code, path), all_codes()):
            if not suppressions.suppressed(finding.code, finding.line):
                kept.append(finding)
    return kept
