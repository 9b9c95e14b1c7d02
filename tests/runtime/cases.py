"""The snippet files under ``snippets/``: their metadata and the variants to run.

A snippet ``<CODE>_<slug>.py`` is ordinary user code that starts with metadata comments::

    # claim: free text (what the snippet shows)
    # syncadvisor-expect: TFS101 error 7      code, severity, 1-based line the linter must report;
                                              repeat the line for several findings
    # syncadvisor-expect-none: TFS105         the linter must NOT report this code here (negative case)
    # tensorflow-raises: ValueError: fragment exception type, and a fragment of str(exc); omitted: must run clean
    # without-strategy: clean                 with the strategy constructor replaced by
                                              OneDeviceStrategy("/cpu:0") and by the default
                                              strategy, it must run clean ...
    # without-strategy: raises ValueError: fragment   ... or raise that (the error is not strategy-dependent)
    # result-assert: RESULT["copies"][0] != RESULT["copies"][1]   a Python expression over RESULT
                                              (the snippet's global ``RESULT``) that must be true

Every snippet that declares findings has a sibling ``<CODE>_<slug>.fixed.py`` that applies the
rule's fix and must run clean (and, statically, must not get a finding of ``<CODE>``). A snippet with
only ``syncadvisor-expect-none`` lines is a negative case and needs no ``.fixed.py``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

SNIPPET_DIR = Path(__file__).resolve().parent / "snippets"

_META = re.compile(r"^#\s*(?P<key>[a-z][a-z-]*)\s*:\s*(?P<value>.*?)\s*$")
_EXPECT = re.compile(r"^(?P<code>[A-Z]{1,3}[0-9]{1,3})\s+(?P<severity>error|warning|info)\s+(?P<line>[0-9]+)$")
_RAISES = re.compile(r"^(?P<type>[A-Za-z_][A-Za-z0-9_.]*)(?::\s*(?P<fragment>.*))?$")
_CODE_FROM_NAME = re.compile(r"^(?P<code>[A-Z]{1,3}[0-9]{1,3})_[A-Za-z0-9_]+$")
# The strategy constructor replaced in the without-strategy variants (first one in the file).
_STRATEGY_CALL = re.compile(
    r"tf\.distribute\.(?:experimental\.)?"
    r"(?:MirroredStrategy|MultiWorkerMirroredStrategy|CentralStorageStrategy)"
    r"\((?:[^()]|\([^()]*\))*\)"
)
NO_STRATEGY_REPLACEMENTS = {
    "onedevice": 'tf.distribute.OneDeviceStrategy("/cpu:0")',
    "default": "tf.distribute.get_strategy()",
}
KNOWN_KEYS = {
    "claim",
    "syncadvisor-expect",
    "syncadvisor-expect-none",
    "tensorflow-raises",
    "without-strategy",
    "result-assert",
}


class MetadataError(ValueError):
    pass


@dataclass(frozen=True)
class Expectation:
    code: str
    severity: str
    line: int


@dataclass(frozen=True)
class Raises:
    exc_type: str
    fragment: str  # may be empty: only the type is checked


@dataclass
class Snippet:
    path: Path
    source: str
    expects: list[Expectation] = field(default_factory=list)
    expect_none: list[str] = field(default_factory=list)
    raises: Raises | None = None
    without_strategy: str | Raises | None = None  # None, "clean" or Raises
    result_asserts: list[str] = field(default_factory=list)
    claim: str = ""

    @property
    def name(self) -> str:
        """File name without ``.py`` (``TFS101_none_mirrored`` / ``TFS101_none_mirrored.fixed``)."""
        return self.path.name[: -len(".py")]

    @property
    def is_fixed(self) -> bool:
        return self.name.endswith(".fixed")

    @property
    def base_name(self) -> str:
        return self.name[: -len(".fixed")] if self.is_fixed else self.name

    @property
    def code(self) -> str:
        match = _CODE_FROM_NAME.match(self.base_name)
        if not match:
            raise MetadataError(f"{self.path.name}: name must be <CODE>_<slug>.py")
        return match.group("code")

    def strategy_free_variants(self) -> dict[str, str]:
        """``{label: source}`` with the strategy constructor replaced (same line numbers)."""
        match = _STRATEGY_CALL.search(self.source)
        if match is None:
            raise MetadataError(f"{self.path.name}: declares without-strategy but has no strategy constructor")
        return {
            label: self.source[: match.start()] + replacement + self.source[match.end() :]
            for label, replacement in NO_STRATEGY_REPLACEMENTS.items()
        }


def _parse_raises(value: str, path: Path) -> Raises:
    match = _RAISES.match(value)
    if not match:
        raise MetadataError(f"{path.name}: cannot parse exception spec {value!r}")
    return Raises(match.group("type"), (match.group("fragment") or "").strip())


def parse_snippet(path: Path) -> Snippet:
    source = path.read_text(encoding="utf-8")
    snippet = Snippet(path=path, source=source)
    claim_lines = []
    for raw in source.splitlines():
        stripped = raw.strip()
        if not stripped.startswith("#"):
            continue
        match = _META.match(stripped)
        if not match:
            continue
        key, value = match.group("key"), match.group("value")
        if key not in KNOWN_KEYS:
            continue  # an ordinary comment that happens to contain a colon
        if key == "claim":
            claim_lines.append(value)
        elif key == "syncadvisor-expect":
            found = _EXPECT.match(value)
            if not found:
                raise MetadataError(f"{path.name}: bad syncadvisor-expect {value!r}")
            snippet.expects.append(
                Expectation(found.group("code"), found.group("severity"), int(found.group("line")))
            )
        elif key == "syncadvisor-expect-none":
            snippet.expect_none.extend(c.strip() for c in value.split(",") if c.strip())
        elif key == "tensorflow-raises":
            if snippet.raises is not None:
                raise MetadataError(f"{path.name}: more than one tensorflow-raises")
            snippet.raises = _parse_raises(value, path)
        elif key == "without-strategy":
            if value == "clean":
                snippet.without_strategy = "clean"
            elif value.startswith("raises "):
                snippet.without_strategy = _parse_raises(value[len("raises ") :].strip(), path)
            else:
                raise MetadataError(f"{path.name}: without-strategy must be 'clean' or 'raises TYPE: fragment'")
        elif key == "result-assert":
            snippet.result_asserts.append(value)
    snippet.claim = " ".join(claim_lines)
    return snippet


def load_snippets(directory: Path = SNIPPET_DIR) -> list[Snippet]:
    """All snippet files, originals and ``.fixed.py`` alike, sorted by file name."""
    return [parse_snippet(p) for p in sorted(directory.glob("*.py"))]


def originals(snippets: list[Snippet]) -> list[Snippet]:
    return [s for s in snippets if not s.is_fixed]


def fixed_of(snippet: Snippet, snippets: list[Snippet]) -> Snippet | None:
    for other in snippets:
        if other.is_fixed and other.base_name == snippet.name:
            return other
    return None


def runtime_requests(snippets: list[Snippet]) -> dict[str, str]:
    """Every source the TF half needs, keyed ``name`` / ``name@onedevice`` / ``name@default``."""
    request: dict[str, str] = {}
    for snippet in snippets:
        request[snippet.name] = snippet.source
        if snippet.without_strategy is not None:
            for label, source in snippet.strategy_free_variants().items():
                request[f"{snippet.name}@{label}"] = source
    return request


def describe_record(record: dict) -> str:
    """A readable one-paragraph summary of a harness record, for assertion messages."""
    if record.get("ok"):
        return f"ran clean in {record.get('seconds')} s; RESULT={record.get('result')!r}"
    text = f"raised {record.get('exc_type')} at snippet line {record.get('lineno')}: {record.get('message')}"
    if record.get("traceback"):
        text += "\n--- traceback (tail) ---\n" + record["traceback"][-3000:]
    return text


def matches(record: dict, raises: Raises) -> bool:
    if record.get("ok"):
        return False
    names = record.get("exc_mro") or [record.get("exc_type")]
    wanted = raises.exc_type.rsplit(".", 1)[-1]
    return wanted in names and raises.fragment in (record.get("message") or "")
