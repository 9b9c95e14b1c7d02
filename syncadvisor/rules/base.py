"""What a rule is: metadata, documentation, examples, and a check over the model.

A rule's docstring is its documentation (`syncadvisor explain` prints it) with
the sections *What it does*, *Why is this bad?*, *Example* and *Fix safety*.
Its VALID and INVALID examples run as tests.
"""
from __future__ import annotations

import inspect
import re
import textwrap
from functools import cached_property
from typing import ClassVar, Dict, FrozenSet, Iterator, List, Optional, Sequence, Tuple

from ..records import field, record
from ..findings import ERROR, INFO, SAFE, UNSAFE, WARNING, Edit, Finding, Fix, Related
from ..model import tfapi
from ..model.contexts import (IN_STRATEGY, NO_STRATEGY, UNKNOWN, At, Context, Note, Pair,
                              Placed, Strategy, describe_creator, describe_strategy,
                              unread_creator)
from ..model.facts import (BOUND_NAMES, BOUND_PARAM, QNAME, SOURCE_INPUT, SOURCE_RANDOM,
                           SOURCE_REPLICA_ID, SOURCE_STATE, TEST_IF, Argument, Bound,
                           CreationCall, FileModel, ObjectUse, Span)
from ..model.project import LinkedFile
from ..model.usage import CONSTANT, PYTHON_NUMBER, REPLICA_INVARIANT
from ..model.variables import Setting, VariableSite, family_evidence

SECTIONS = ("What it does", "Why is this bad?", "Example", "Fix safety")


def snippet(text: str) -> str:
    """Example code written as an indented triple-quoted block, Fixit style.

    The text starts on the line after the opening quotes, and the lines' common
    indentation is removed (`textwrap.dedent`, which also empties lines of nothing but
    spaces and tabs). The line break before the closing quotes ends the last line;
    closing quotes right after the code leave it without a final newline. So

        snippet('''
            v = tf.Variable(0.)
        ''')

    is `v = tf.Variable(0.)` and one newline."""
    if not text.startswith("\n"):
        raise ValueError("example code starts on the line after the opening quotes")
    return textwrap.dedent(text[1:])


@record(frozen=True)
class Expect:
    line: int
    column: Optional[int] = None  # 1-based
    severity: Optional[str] = None


@record(frozen=True)
class Invalid:
    """Code the rule must flag, where, and (optionally) what its fixes make of it."""

    source: str
    expect: Tuple[Expect, ...]
    fixed: Optional[str] = None  # after safe fixes
    unsafe_fixed: Optional[str] = None  # after safe and unsafe fixes
    config: Dict[str, object] = field(default_factory=dict)


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[str]  # the default; a finding may be milder where TF only may raise
    summary: ClassVar[str]
    fix_availability: ClassVar[Optional[str]] = None  # SAFE, UNSAFE, "sometimes" or None
    VALID: ClassVar[Sequence[str]] = ()
    INVALID: ClassVar[Sequence[Invalid]] = ()

    def check(self, ctx: "RuleContext") -> Iterator[Finding]:  # pragma: no cover - abstract
        raise NotImplementedError

    @classmethod
    def documentation(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def sections(cls) -> Dict[str, str]:
        doc = cls.documentation()
        parts = re.split(r"^## (.+)$", doc, flags=re.M)
        return {parts[i].strip(): parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}


# --- judging strategy-dependent failures ----------------------------------

@record(frozen=True)
class Verdict:
    severity: str
    where: str  # e.g. "under MirroredStrategy `strategy` (line 5)"


def runs_it(via: Optional[Tuple[str, Span, str]], here: str, note: Optional[Note]) -> str:
    """", when `train(...)` at line 40 runs it": the call a claim's path goes through."""
    if via is None:
        return ""
    path, span, callee = via
    what = f"`{callee}(...)` at " + (f"line {span.line}" if path == here else
                                     f"{path}:{span.line}")
    if note is not None:
        note(what, Related(path, span.line, f"`{callee}(...)`", span.column + 1,
                           span.end_line, span.end_column + 1))
    return f", when {what} runs it"


def _kinds_phrase(kinds: Sequence[str]) -> str:
    kinds = list(kinds)
    return kinds[0] if len(kinds) == 1 else ", ".join(kinds[:-1]) + " or " + kinds[-1]


def judge(contexts: Sequence[Context], fails_under: Sequence[str], here: str,
          assume: str = "unknown", note: Optional[Note] = None,
          paths: Optional[Dict[Context, Tuple[str, Span, str]]] = None) -> Optional[Verdict]:
    """error where every visible strategy fails, warning where one only may. `note`
    learns where each strategy named in the verdict was created (`describe_strategy`).
    `paths`: the call that gives each context, where calls give different ones: a claim
    about one of them names its path ("..., when `build(...)` at line 13 runs it")."""
    failing_kinds = set(fails_under)
    certain: List[str] = []
    maybe: List[str] = []
    unknown = False
    for ctx in sorted(contexts, key=lambda c: (c.kind, str(c.strategy))):
        if ctx.kind == NO_STRATEGY:
            continue
        if ctx.kind == UNKNOWN:
            if assume == "mirrored" and tfapi.MIRRORED in failing_kinds \
                    and unread_creator(ctx) is None:
                certain.append(f"under {tfapi.MIRRORED} (assumed by `assume-strategy`)")
            elif assume != "none":
                unknown = True
            continue
        if ctx.kind == IN_STRATEGY and ctx.strategy is not None:
            kinds = ctx.strategy.kinds
            failing = kinds & failing_kinds
            creator = unread_creator(ctx)
            if failing and failing == kinds and creator is not None:
                maybe.append(f"under {describe_strategy(ctx.strategy, here, note)}, unless "
                             f"{describe_creator(creator, here, note)}, in effect there, changes "
                             f"the choice first")
            elif failing and failing == kinds:
                certain.append("under " + describe_strategy(ctx.strategy, here, note) +
                               runs_it(paths.get(ctx) if paths else None, here, note))
            elif failing or tfapi.ANY_STRATEGY in kinds:
                maybe.append(f"if {describe_strategy(ctx.strategy, here, note)} is a "
                             f"{_kinds_phrase([k for k in fails_under])}")
    if certain:
        return Verdict(ERROR, certain[0])
    if maybe:
        return Verdict(WARNING, maybe[0])
    if unknown:
        return Verdict(WARNING, f"once this runs under {_kinds_phrase(list(fails_under))} "
                                f"(no strategy is visible here)")
    return None


# --- the per-file view rules work on --------------------------------------

class _FileFacts:
    """What every rule's context of one file shares: each fact is found at most once
    per file, by whichever rule asks first."""

    def __init__(self, linked: LinkedFile):
        self._linked = linked

    @cached_property
    def enum_aliases(self) -> Dict[str, List[Tuple[str, FrozenSet[str]]]]:
        """setting -> (local name, members) of each enum class the file has a name for;
        found once per file, not once per fix (a file can have thousands of names)."""
        found: Dict[str, List[Tuple[str, FrozenSet[str]]]] = {}
        for qname, local in self._linked.aliases.items():
            spec = tfapi.ENUM_CLASSES.get(qname)
            if spec is not None:
                found.setdefault(spec.setting, []).append((local, frozenset(spec.members)))
        return found


class RuleContext:
    """One linked file, as one rule sees it, with helpers to report and fix.

    Made for a file (no rule yet); `for_rule` gives each rule a context of its own, and
    the contexts of one file share its `_FileFacts`. A context never changes rule."""

    def __init__(self, linked: LinkedFile, settings, rule: Optional[Rule] = None,
                 facts: Optional[_FileFacts] = None):
        self.linked = linked
        self.model: FileModel = linked.model
        self.sites: List[VariableSite] = linked.sites
        self.project = linked.project
        self.settings = settings
        self.path = linked.model.path
        self._rule = rule
        self._facts = facts if facts is not None else _FileFacts(linked)
        # (phrase, place) for each place a phrase built since the last finding names:
        # `finding` keeps those whose phrase its message contains. A rule builds a
        # finding's phrases just before making it, so the list is emptied at each finding.
        self._notes: List[Tuple[str, Related]] = []

    def written_settings(self, values: str) -> Iterator[Tuple[VariableSite, str, "Setting"]]:
        """(site, "synchronization"/"aggregation", setting) for every setting written out
        in a call of an API that takes `values` (enum members or Keras 3 strings)."""
        for site in self.sites:
            if site.api.values != values:
                continue
            for name, setting in ((tfapi.SYNC, site.sync), (tfapi.AGG, site.agg)):
                if setting.arg is not None:
                    yield site, name, setting

    def keras_assumption(self, family: Optional[str]) -> Optional[str]:
        """For a claim true of the Keras `family` only: "if this runs on Keras 3 (...)"
        where the project leaves the Keras major open, else None (settled, or not Keras)."""
        if family not in (tfapi.KERAS2, tfapi.KERAS3):
            return None
        if family == tfapi.KERAS2 and self.model.legacy_keras is not None:
            return None  # the project itself makes `tf.keras` Keras 2 (TF_USE_LEGACY_KERAS)
        return self.settings.keras_assumption(family)

    def site_keras(self, site: VariableSite) -> Tuple[bool, Optional[str]]:
        """(whether the call's own arguments show it was written for the other Keras,
        the assumption a claim about the site's family makes) -- (False, None) where the
        family is settled, by the project or by the call itself (`family_evidence`). A
        rule makes no claim about a call written for the other Keras, and no error on an
        assumption: a warning that names it."""
        assumed = self.keras_assumption(site.family)
        if assumed is None:
            return False, None
        evidence = family_evidence(site)
        if evidence is None:
            return False, assumed
        return evidence != site.family, None if evidence == site.family else assumed

    def sites_updated_here(self) -> List[VariableSite]:
        """The variable sites of the run with an update placed in this file: made here,
        or reached through a call made here (`Where.at`)."""
        return self.project.sites_updated_at(self.path)

    def all_object_uses(self) -> Iterator[Tuple[ObjectUse, str]]:
        """Every method call of the run on an object that may be a Keras model, optimizer or
        metric (`ObjectUse`: `optimizer.build(...)`, `model.compile(...)`), with its path."""
        for fm in self.project.files:
            for use in fm.uses:
                yield use, fm.path

    def object_calls(self):
        """Each constructed object the run's object calls may reach, by (path, span) of
        the call that makes it -> (the object, [(use, path, how many objects the reference
        may denote, whether the object is handed over in it)])."""
        return self.project.usage.object_calls()

    # --- the questions a rule asks about the run (answered by `model/`) -----------------

    def contexts_at(self, path: str, function: Optional[str], scopes: Tuple[int, ...]
                    ) -> FrozenSet[Context]:
        """The strategy contexts code in `function` of `path` runs in, inside `scopes`."""
        return self.project.strategies.contexts_at(path, function, scopes)

    def scope_context(self, path: str, scopes: Tuple[int, ...]) -> Optional[Context]:
        """The context of the innermost strategy scope among `scopes`, if any."""
        return self.project.strategies.scope_context(path, scopes)

    def where_at(self, function: Optional[str]):
        """The replica contexts (`Where`) code in `function` runs in."""
        return self.project.replica.where_at(function)

    def call_path(self, where, function: Optional[str]):
        """The calls (`Hop`s) from where `where` entered to `function`."""
        return self.project.replica.call_path(where, function)

    def traced_path(self, where, function: Optional[str]) -> bool:
        """Whether code in `function`, entered as `where` says (`call_path`), runs traced:
        a `tf.function` on the way, or the `strategy.run` made from traced code."""
        return self.project.replica.traced_path(where, function)

    def keras_traced_step(self, function: str) -> bool:
        """Whether `function` is a Keras step `fit` runs per replica, traced."""
        return self.project.replica.keras_traced_step(function)

    def tensor_test(self, test, path: str) -> bool:
        """Whether an `if`/`while` test may be a tensor (AutoGraph converts it)."""
        return self.project.replica.tensor_test(test, path)

    def constructions(self, bound, path: str):
        """The constructed objects (`Obj`s with an origin) a reference may denote."""
        return self.project.objects.constructions(bound, path)

    def construction_at(self, path: str, span: Span):
        """The recorded construction (`Construction`) of a call, if any."""
        return self.project.objects.construction_at(path, span)

    def constructions_of(self, class_id: str):
        """(construction, path) of each call that makes an instance of a project class."""
        return self.project.objects.constructions_of(class_id)

    def pairs(self, made: At, used: At) -> List[Pair]:
        """The contexts of two places, paired as one execution can pair them (`Pair`)."""
        return self.project.strategies.pairs(made, used)

    def placed(self, at: At) -> Placed:
        """The contexts of a place, each with the call that gives it where calls differ."""
        return self.project.strategies.placed(at)

    def call_place(self, bound, path: str) -> Optional[At]:
        """Where the call a call-bound names is made: (path, function, scopes)."""
        return self.project.usage.call_place(bound, path)

    def creation_contexts(self, bound, path: str) -> FrozenSet[Context]:
        """The strategy contexts where the object a call makes was made."""
        return self.project.usage.creation_contexts(bound, path)

    def handed_in(self, bound: Bound, path: str, function: Optional[str]
                  ) -> Optional[List[Tuple[Bound, str, At]]]:
        """For `bound`, a parameter of `function` (the code at hand), what each call of
        `function` passes for it and where that call is made, as (the argument, its file,
        the call's place): an object handed in by one call is used in the context that
        call gives, not in every caller's. None where `bound` is no such parameter or a
        call is one the model does not place (a construction, `partial`, `strategy.run`)."""
        if bound.kind == BOUND_NAMES and len(bound.options) == 1:
            bound = bound.options[0]
        if bound.kind != BOUND_PARAM or function is None or bound.qname != function or \
                not bound.attr:
            return None
        found: List[Tuple[Bound, str, At]] = []
        for passed, passed_path, edge in self.project.objects.arguments_with_calls(
                function, bound.attr):
            if edge is None:
                return None
            found.append((passed, passed_path, (passed_path, edge.caller, edge.scopes)))
        return found

    def held(self, site: VariableSite) -> bool:
        """Whether anything keeps a variable where a checkpoint or SavedModel reaches it."""
        return self.project.held(site)

    def holder(self, site: VariableSite) -> Optional[str]:
        """What keeps a variable where a checkpoint or SavedModel reaches it, if anything."""
        return self.project.holder(site)

    def class_bases(self, qname: str) -> List[str]:
        """A project class's library bases, as named outside the project; for any other
        name, the name itself."""
        index = self.project.index
        return index.external_bases(qname) if index.is_class(qname) else [qname]

    def model_at(self, path: str) -> FileModel:
        """The model of another file of the run."""
        return self.project.index.file_at(path)

    def where(self, path: str, span: Span, label: Optional[str] = None) -> str:
        """`line 42`, or `train.py:42` when it is in another file. With `label` (what is
        there), the next finding whose message contains the text names this place too
        (`Finding.related`); prefer `at`, whose longer phrase cannot be mistaken."""
        text = f"line {span.line}" if path == self.path else f"{path}:{span.line}"
        if label is not None:
            self.note(text, self._place(path, span, label))
        return text

    def at(self, what: str, path: str, span: Span, label: Optional[str] = None) -> str:
        """"`.assign(...)` at line 48": `what`, and where it is (`where`); the next finding
        whose message contains this phrase names the place, as `label` (default `what`)."""
        text = f"{what} at {self.where(path, span)}"
        self.note(text, self._place(path, span, what if label is None else label))
        return text

    def via(self, where, function: Optional[str] = None) -> str:
        """How code got into a replica/cross-replica context: "`strategy.run` at line 25";
        with `function` (where the code is), how it reached that (`reached`)."""
        text = self.at(where.via, *where.at) if where.at else where.via
        return text + self.reached(where, function)

    def reached(self, where, function: Optional[str]) -> str:
        """", reached from `call` through `tf.cond` at line 137 and `_init()` at line 140":
        the calls from where `where` entered to `function`, each naming its place; the
        first and the last two of a longer chain. "" where it entered `function` itself."""
        hops = self.call_path(where, function)
        if not hops:
            return ""
        shown = hops if len(hops) <= 3 else [hops[0], None, hops[-2], hops[-1]]
        parts = []
        for hop in shown:
            if hop is None:
                parts.append("...")
            elif hop.through is not None:
                parts.append(self.at(f"`{hop.through}`", hop.path, hop.span))
            elif hop.callee == "<lambda>":
                parts.append(self.at("a lambda", hop.path, hop.span))
            else:
                parts.append(self.at(f"`{hop.callee}()`", hop.path, hop.span))
        listed = ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]
        return f", reached from `{hops[0].caller}` through {listed}"

    def describe(self, strategy: Strategy) -> str:
        """`describe_strategy`, naming where the strategy was created for the next finding."""
        return describe_strategy(strategy, self.path, self.note)

    @staticmethod
    def _place(path: str, span: Span, label: str) -> Related:
        return Related(path, span.line, label, span.column + 1, span.end_line, span.end_column + 1)

    def note(self, phrase: str, place: Related) -> None:
        """`phrase` of a message to come names `place` (for `judge(..., note=ctx.note)`)."""
        self._notes.append((phrase, place))

    def _related(self, message: str) -> Tuple[Related, ...]:
        """The noted places whose phrase `message` contains, in the order it names them,
        each place once; the notes are then forgotten."""
        found: Dict[Tuple[str, int, Optional[int]], Tuple[int, Related]] = {}
        for phrase, place in self._notes:
            offset = _mention(message, phrase)
            key = (place.path, place.line, place.column)
            if offset >= 0 and (key not in found or offset < found[key][0]):
                found[key] = (offset, place)
        self._notes.clear()
        return tuple(place for _, place in sorted(found.values(), key=lambda item: item[0]))

    def for_rule(self, rule: Rule) -> "RuleContext":
        """A new context of this file for `rule`, sharing the file's facts."""
        return RuleContext(self.linked, self.settings, rule, self._facts)

    def judge(self, site_or_contexts, fails_under: Sequence[str]) -> Optional[Verdict]:
        """`judge` over a site's contexts (naming the call that gives the one a claim is
        about, where its function's calls give different ones), or over `contexts`."""
        contexts = getattr(site_or_contexts, "contexts", site_or_contexts)
        paths = None
        call = getattr(site_or_contexts, "call", None)
        if call is not None and len(contexts) > 1:
            placed = self.project.strategies.placed((site_or_contexts.path, call.function,
                                                     call.scopes))
            paths = {context: via for context, via in placed if via is not None}
        return judge(list(contexts), fails_under, self.path, self.settings.assume_strategy,
                     self.note, paths)

    def finding(self, span: Span, message: str, severity: Optional[str] = None,
                fix: Optional[Fix] = None) -> Finding:
        rule = self._rule
        assert rule is not None
        return Finding(
            path=self.path, line=span.line, column=span.column + 1, end_line=span.end_line,
            end_column=span.end_column + 1, code=rule.code, name=rule.name,
            severity=severity or rule.severity, message=message, fix=fix,
            related=self._related(message) if self._notes else (),
        )

    # --- edits ---------------------------------------------------------------

    @staticmethod
    def replace(span: Span, content: str) -> Edit:
        return Edit(span.line, span.column + 1, span.end_line, span.end_column + 1, content)

    @staticmethod
    def remove_argument(call: CreationCall, arg: Argument) -> Edit:
        """Delete an argument with the comma that separates it from its neighbour."""
        args = [a for a in call.args]
        i = next(k for k, a in enumerate(args) if a is arg)
        if i > 0:
            start = args[i - 1].span
            return Edit(start.end_line, start.end_column + 1, arg.span.end_line,
                        arg.span.end_column + 1, "")
        if i + 1 < len(args):
            end = args[i + 1].span
            return Edit(arg.span.line, arg.span.column + 1, end.line, end.column + 1, "")
        if arg.trailing_comma is not None:  # `f(x=1,)` becomes `f()`, not `f(,)`
            comma = arg.trailing_comma
            return Edit(arg.span.line, arg.span.column + 1, comma.end_line,
                        comma.end_column + 1, "")
        return Edit(arg.span.line, arg.span.column + 1, arg.span.end_line,
                    arg.span.end_column + 1, "")

    @staticmethod
    def add_argument(call, text: str) -> Edit:
        """Append `text` as the last argument of a call (anything with `.args` and `.span`)."""
        if call.args:
            last = call.args[-1].span
            return Edit(last.end_line, last.end_column + 1, last.end_line,
                        last.end_column + 1, ", " + text)
        end = call.span
        return Edit(end.end_line, end.end_column, end.end_line, end.end_column, text)

    def drop_setting(self, site: VariableSite, setting, default_text: str) -> Tuple[Edit, ...]:
        """Remove a keyword argument; a positional one is replaced by the default instead,
        so later positional arguments keep their meaning."""
        if setting.positional:
            return (self.replace(setting.arg.value.span, default_text),)
        return (self.remove_argument(site.call, setting.arg),)

    def enum_spelling(self, setting: str, member: str, hint: Optional[str] = None
                      ) -> Tuple[str, Tuple[Edit, ...]]:
        """How this file can spell `tf.Variable<setting>.<member>`, and any import it needs.

        `hint` is how the user already spelled the enum class at this place, if at all.
        """
        if hint:
            return f"{hint}.{member}", ()
        public = tfapi.ENUM_PUBLIC_PATH[setting]
        for local, members in self._facts.enum_aliases.get(setting, ()):
            if member in members:
                return f"{local}.{member}", ()
        aliases = self.linked.aliases
        for module in tfapi.ENUM_MODULES:
            if module in aliases:
                return f"{aliases[module]}.{public}.{member}", ()
        edit = Edit(self.model.import_line, 1, self.model.import_line, 1,
                    tfapi.TENSORFLOW_IMPORT + self.model.newline)
        return f"{tfapi.TENSORFLOW_IMPORTED_AS}.{public}.{member}", (edit,)


def _mention(message: str, phrase: str) -> int:
    """Where `message` contains `phrase` not followed by a digit ("line 4" is not in
    "line 42"), or -1."""
    start = message.find(phrase)
    while start >= 0:
        end = start + len(phrase)
        if end == len(message) or not message[end].isdigit():
            return start
        start = message.find(phrase, start + 1)
    return -1


# How a message says where a value that can differ between replicas comes from, by
# `Source.kind`: the phrase, then what is named at the place.
_SOURCE_WORDS = {
    SOURCE_INPUT: "the replica's batch",
    SOURCE_RANDOM: "a random op",
    SOURCE_REPLICA_ID: "the replica id",
    SOURCE_STATE: "state each replica keeps its own copy of",
}


def value_source(ctx: "RuleContext", update) -> str:
    """", computed from the replica's batch (`inputs` at line 121)": why an update's
    value can differ between replicas, or "" where the model does not know."""
    source = update.source
    if source is None or source.kind not in _SOURCE_WORDS:
        return ""
    return (f", computed from {_SOURCE_WORDS[source.kind]} "
            f"({ctx.at(f'`{source.name}`', update.path, source.span)})")


def suggest_aggregation(site: VariableSite) -> Tuple[str, str]:
    """An aggregation for a variable from how it is updated, and why."""
    integer = site.dtype in tfapi.INTEGER_DTYPES
    updates = [u for u in site.updates if u.replica_context] or site.updates
    methods = {u.method for u in updates}
    same_everywhere = updates and all(u.value_kind in (PYTHON_NUMBER, CONSTANT, REPLICA_INVARIANT)
                                      for u in updates)
    if methods and methods <= {"assign_add", "assign_sub"}:
        if same_everywhere:
            return tfapi.AGG_ONLY_FIRST_REPLICA, "a counter every replica advances alike"
        return tfapi.AGG_SUM, "an accumulator: the replicas' contributions add up"
    if "assign" in methods:
        if integer:
            return tfapi.AGG_ONLY_FIRST_REPLICA, "an integer state (MEAN needs a float dtype)"
        return tfapi.AGG_MEAN, "a statistic each replica assigns: the replicas' values are averaged"
    if integer:
        return tfapi.AGG_ONLY_FIRST_REPLICA, "an integer state, with no update visible"
    return tfapi.AGG_SUM, "no update is visible; SUM suits accumulators, MEAN statistics"


def member_text(ctx: "RuleContext", site: VariableSite, setting_name: str, member: str,
                hint: Optional[str] = None) -> Tuple[str, Tuple[Edit, ...]]:
    """How to write a member for this site's API: an enum, or a Keras 3 string."""
    if site.api.values == tfapi.STRING_VALUES:
        table = tfapi.KERAS3_STRING[setting_name]
        return '"' + next(t for t, m in table.items() if m == member) + '"', ()
    return ctx.enum_spelling(setting_name, member, hint)


def set_setting(ctx: "RuleContext", site: VariableSite, setting_name: str, member: str
                ) -> Tuple[str, Tuple[Edit, ...]]:
    """Edits that make `setting_name=member`: replace the value, or add the argument;
    none where the API has no such parameter (`Optimizer.add_slot` makes AUTO + NONE)."""
    setting = site.sync if setting_name == tfapi.SYNC else site.agg
    if setting.arg is None and not site.api.has_parameter(setting_name):
        return member, ()
    text, replaced, imports = _member_edit(ctx, site, setting_name, member)
    if replaced is not None:
        return text, (replaced,) + imports
    return text, (ctx.add_argument(site.call, f"{setting_name}={text}"),) + imports


def _member_edit(ctx: "RuleContext", site: VariableSite, setting_name: str, member: str
                 ) -> Tuple[str, Optional[Edit], Tuple[Edit, ...]]:
    """`member` spelled for the site (as its written value spells the enum, if it has
    one), the edit that replaces the written value (None where the argument is not
    written), and the imports the spelling needs."""
    setting = site.sync if setting_name == tfapi.SYNC else site.agg
    hint = setting.arg.value.prefix_text if setting.arg is not None and \
        setting.arg.value.kind == QNAME else None
    text, imports = member_text(ctx, site, setting_name, member, hint)
    replaced = ctx.replace(setting.arg.value.span, text) if setting.arg is not None else None
    return text, replaced, imports


def set_on_read(ctx: "RuleContext", site: VariableSite, aggregation: Optional[str] = None
                ) -> Tuple[str, Tuple[Edit, ...]]:
    """Edits that make the site ON_READ (with `aggregation` where given) and not trainable,
    as one edit per argument: replaced values, and the missing arguments added together
    (two insertions at one place would overlap). Returns the text of everything it sets,
    `trainable=False` included where that changes."""
    wanted = [(tfapi.SYNC, tfapi.SYNC_ON_READ)]
    if aggregation is not None:
        wanted.insert(0, (tfapi.AGG, aggregation))
    edits: List[Edit] = []
    added: List[str] = []
    said: List[str] = []
    for name, member in wanted:
        text, replaced, imports = _member_edit(ctx, site, name, member)
        said.append(f"{name}={text}")
        edits.extend(imports)
        if replaced is not None:
            edits.append(replaced)
        else:
            added.append(f"{name}={text}")
    if site.trainable is not False:
        said.append("trainable=False")  # a change of its own: the message says it
        if site.trainable_arg is not None:
            edits.append(ctx.replace(site.trainable_arg.value.span, "False"))
        else:
            added.append("trainable=False")
    if added:
        edits.append(ctx.add_argument(site.call, ", ".join(added)))
    return ", ".join(said), tuple(edits)


def refusing_branch(ctx: RuleContext, where, update, traced: bool = False,
                    autograph: bool = True) -> Tuple[Optional[str], bool]:
    """("`tf.cond` at line 12", whether it always refuses) for the first call of
    tfapi.MERGE_CALL_REFUSING_CALLS through whose branch or loop body the update is
    reached, or the first `if`/`while` with a tensor test on the way (in a caller, around
    the call, or around the update), which AutoGraph makes a `tf.cond`/`tf.while_loop`
    where it converts the function; (None, False) where there is none. `traced`: the way
    in is known to run traced (`ctx.traced_path`), and the phrase says so no longer.
    Without `autograph` (code traced without AutoGraph: Keras 3's `fit` steps), an
    `if`/`while` is Python and counts for nothing."""
    found: Tuple[Optional[str], bool] = (None, False)
    for hop in ctx.call_path(where, update.function):
        tensor = tensor_branch(ctx, hop.tests, hop.path, traced) if autograph else None
        if tensor is not None:
            return tensor, True
        always = tfapi.MERGE_CALL_REFUSING_CALLS.get(hop.through_qname or "")
        if always is not None and (found[0] is None or always):
            found = (ctx.at(f"`{hop.through}`", hop.path, hop.span), always)
            if always:
                return found
    tensor = tensor_branch(ctx, update.tests, update.path, traced) if autograph else None
    return (tensor, True) if tensor is not None else found


def tensor_branch(ctx: RuleContext, tests, path: str, traced: bool = False) -> Optional[str]:
    """"the `if` at line 12 (`not self.initialized`), which AutoGraph makes a `tf.cond`
    where the function is traced," for the first of `tests` that may be a tensor (without
    the last words where the code is known to run traced)."""
    for test in tests:
        if ctx.tensor_test(test, path):
            made = "`tf.cond`" if test.keyword == TEST_IF else "`tf.while_loop`"
            at = ctx.at(f"the `{test.keyword}`", path, test.span)
            if traced:
                return f"{at} (`{test.text}`), which AutoGraph makes a {made}"
            return (f"{at} (`{test.text}`), which AutoGraph makes a {made} where the "
                    f"function is traced (a `tf.function`, Keras `fit`),")
    return None


def strategy_contexts(site: VariableSite, updates=None) -> List[Context]:
    """The site's strategy contexts; where they are unknown, the strategies of the
    `strategy.run` calls its updates run in stand in for them."""
    contexts = list(site.contexts)
    if any(c.kind == UNKNOWN for c in contexts):
        for update in updates if updates is not None else site.updates:
            for where in update.in_replica():
                if where.strategy is not None:
                    contexts.append(Context(IN_STRATEGY, where.strategy))
    return contexts


def site_span(site: VariableSite, setting=None) -> Span:
    """Where a finding about a site goes: the argument if written, else the call."""
    if setting is not None and setting.arg is not None:
        return setting.arg.span
    return site.call.span


def written(setting_name: str, setting) -> str:
    """`synchronization=3` as the user wrote it (positional arguments get their name)."""
    return f"{setting_name}={setting.arg.value.text}" if setting.arg is not None else setting_name


def enum_title(setting_name: str) -> str:
    return tfapi.ENUM_TITLE[setting_name]


def make_fix(applicability: str, message: str, *edits: Edit) -> Optional[Fix]:
    """The fix; None without edits (`set_setting` for an API that has no such parameter)."""
    return Fix(applicability, message, tuple(edits)) if edits else None


__all__ = ["Rule", "Invalid", "Expect", "snippet", "RuleContext", "Verdict", "judge", "make_fix",
           "written", "enum_title", "suggest_aggregation", "member_text", "set_setting",
           "site_span", "strategy_contexts", "refusing_branch", "tensor_branch", "SAFE", "UNSAFE",
           "ERROR", "WARNING", "INFO"]
