"""Stage 2, the whole run at once: link the models, run the enabled rules over each
linked file, drop what `# noqa` suppresses or the settings deselect, sort. Every file
is checked under its own settings, linked with all the others whatever theirs are.

A file's `# noqa` comments are read here, from its text, and only where the rules
found something: reading them takes Python's tokenizer over the whole file, which
would cost more than modelling every file that has one.
"""
from __future__ import annotations

from typing import Callable, Dict, Iterable, List, Optional, Sequence

from ..records import record
from ..collector import collector_paused
from ..config import Resolver
from ..findings import Finding
from ..model.facts import FileModel
from ..model.project import LinkedFile, projects
from ..rules import enabled_rules
from ..rules.base import Rule, RuleContext
from ..suppress import parse_suppressions
from .analyze import FileResult, internal_error


@record
class RunResult:
    findings: List[Finding]
    files: int
    internal_error: bool = False


def link(models: Iterable[FileModel]) -> Dict[str, LinkedFile]:
    """Each file's model linked with the rest of the run: what the rules see."""
    linked: Dict[str, LinkedFile] = {}
    for project in projects(models):
        for fm in project.index.files:
            linked[fm.path] = project.link(fm)
    return linked


def check(results: Sequence[FileResult], resolver: Resolver,
          text_of: Callable[[str], Optional[str]]) -> RunResult:
    """Every file's TFS900 findings and the enabled rules' findings, unsuppressed, sorted.
    `resolver.for_path(path)` is a file's settings; `text_of(path)` is the text it was
    modelled from (None: gone), for its `# noqa` comments. A rule that raises costs its
    file a TFS900 (internal error), not the run."""
    with collector_paused():
        linked = link(r.model for r in results if r.model is not None)
        rules_of: Dict[int, List[Rule]] = {}  # id of a Settings -> the rules it selects
        findings: List[Finding] = []
        internal = any(r.internal_error for r in results)
        for result in results:
            settings = resolver.for_path(result.path)
            findings.extend(f for f in result.errors if settings.enabled(f.code, result.path))
            if result.model is None:
                continue
            rules = rules_of.get(id(settings))
            if rules is None:
                rules = rules_of[id(settings)] = enabled_rules(settings)
            file_findings: List[Finding] = []
            try:
                ctx = RuleContext(linked[result.path], settings)
                for rule in rules:
                    if settings.enabled(rule.code, result.path):
                        file_findings.extend(rule.check(ctx.for_rule(rule)))
            except Exception as exc:  # noqa: BLE001 - report, go on with the next file
                file_findings = [internal_error(result.path, exc)]
                internal = True
            if not file_findings:
                continue
            text = text_of(result.path)
            if text is not None:
                suppressed = parse_suppressions(text).suppressed
                file_findings = [f for f in file_findings if not suppressed(f.code, f.line)]
            findings.extend(file_findings)
        findings.sort(key=Finding.sort_key)
        return RunResult(findings, len(results), internal)
