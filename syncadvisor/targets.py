"""The TensorFlow and Keras a project declares: its dependency pins -> a `Target`.

A file's project is the nearest folder above it (its own included) that declares
dependencies: a pyproject.toml with a `[project]` or `[tool.poetry]` table, a setup.py, a
setup.cfg with `[metadata]` or `[options]`, a requirements*.txt, or an unpacked sdist's
PKG-INFO; all of those in that folder are read together. A folder of unpacked wheels or a
site-packages holds `*.dist-info` folders instead: there the project is the dist-info
whose top_level.txt (or, without one, RECORD) names the file's top-level package or
module, never a neighbour's; a file no dist-info claims is looked for further up.

What is read: requirements on the TensorFlow distributions (tensorflow, tensorflow-cpu,
-gpu, -macos, -intel), on keras and on tf-keras, in every extra and group; environment
markers are ignored (an extra's pin is as good as a main one). A declared range resolves to
the newest released version it allows (`tfapi.TENSORFLOW_RELEASES`), all of a project's
ranges on one distribution family together. Nothing is executed: setup.py is read with
`ast`, and only literal lists (and names bound to them) count. A declaration that cannot
be read, or a range that no release meets, is ignored: the defaults apply.

This reader of PEP 440 specifiers is deliberately small (release numbers only; pre-,
post- and dev- parts and local labels are dropped), so that the static path needs
nothing beyond the standard library.
"""
from __future__ import annotations

import ast
import configparser
import fnmatch
import os
import re
import sys
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from .model import tfapi
from .records import record

Release = Tuple[int, ...]
Clause = Tuple[str, Release, bool]  # operator, release, wildcard (`==2.12.*`)

_NAME = re.compile(r"^\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(\[[^\]]*\])?\s*(.*)$",
                   re.S)
_CLAUSE = re.compile(r"^(===|~=|==|!=|<=|>=|<|>)\s*(.+)$")
_VERSION = re.compile(
    r"^v?(?:\d+!)?(\d+(?:\.\d+)*)(\.\*)?"
    r"(?:[-_.]?(?:a|b|c|rc|alpha|beta|pre|preview)[-_.]?\d*)?"
    r"(?:(?:[-_.]?(?:post|rev|r)[-_.]?\d*)|(?:-\d+))?"
    r"(?:[-_.]?dev[-_.]?\d*)?(?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?$", re.I)
# A declaration without any of these words is not parsed.
_WORDS = tuple(word.encode("ascii") for word in tfapi.DISTRIBUTION_WORDS)


def normalize(name: str) -> str:
    """A distribution name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_specifier(text: str) -> Optional[Tuple[Clause, ...]]:
    """`<2.16.0,>=2.13.0` -> its clauses; `()` for no constraint; None where unreadable."""
    text = text.strip()
    if text.startswith("(") and text.endswith(")"):
        text = text[1:-1].strip()
    if not text:
        return ()
    clauses = []
    for part in text.split(","):
        match = _CLAUSE.match(part.strip())
        if match is None:
            return None
        operator, version = match.group(1), match.group(2).strip()
        if operator == "===":
            found = re.match(r"^\d+(?:\.\d+)*$", version)
            if not found:
                return None
            clauses.append((operator, _release(version), False))
            continue
        parsed = _VERSION.match(version)
        if parsed is None:
            return None
        wildcard = parsed.group(2) is not None
        if (wildcard and operator not in ("==", "!=")) or \
                (operator == "~=" and "." not in parsed.group(1)):
            return None
        clauses.append((operator, _release(parsed.group(1)), wildcard))
    return tuple(clauses)


def _release(text: str) -> Release:
    return tuple(int(part) for part in text.split("."))


def allows(clauses: Sequence[Clause], version: Release) -> bool:
    """Whether the release `version` meets every clause (PEP 440, on release numbers)."""
    for operator, release, wildcard in clauses:
        if wildcard or operator == "~=":
            prefix = release if wildcard else release[:-1]
            same = _padded(version, len(prefix))[:len(prefix)] == prefix
            if operator == "!=":
                ok = not same
            elif operator == "==":
                ok = same
            else:  # ~=: at least the release, within its last-but-one component
                ok = same and _compare(version, release) >= 0
        else:
            order = _compare(version, release)
            ok = {"==": order == 0, "===": order == 0, "!=": order != 0, "<": order < 0,
                  "<=": order <= 0, ">": order > 0, ">=": order >= 0}[operator]
        if not ok:
            return False
    return True


def _padded(version: Release, length: int) -> Release:
    return version + (0,) * (length - len(version))


def _compare(a: Release, b: Release) -> int:
    length = max(len(a), len(b))
    left, right = _padded(a, length), _padded(b, length)
    return (left > right) - (left < right)


def parse_requirement(line: str) -> Optional[Tuple[str, Optional[Tuple[Clause, ...]]]]:
    """A PEP 508 requirement -> (normalised name, clauses; None where the version part
    cannot be read, as a direct URL's). None where it is not a requirement at all.
    Extras and environment markers are dropped."""
    line = line.split(";", 1)[0].strip()
    match = _NAME.match(line)
    if match is None:
        return None
    rest = match.group(3).strip()
    if rest.startswith("@"):
        return normalize(match.group(1)), None
    return normalize(match.group(1)), parse_specifier(rest)


def _every_patch(releases: Iterable[Release]) -> List[Release]:
    """`releases` (the newest patch of each minor) with every patch below each, newest
    first."""
    return sorted({release[:-1] + (patch,) for release in releases
                   for patch in range(release[-1] + 1)}, reverse=True)


def newest(ranges: Sequence[Tuple[Clause, ...]], releases: Iterable[Release]
           ) -> Optional[Release]:
    """The newest release that every range allows (`releases`: the newest patch of each
    minor, every patch below it released too); failing that (ranges that
    contradict each other, as alternative requirements files may), the newest any one
    allows; None where none does."""
    every = _every_patch(releases)
    for release in every:
        if all(allows(clauses, release) for clauses in ranges):
            return release
    for release in every:
        if any(allows(clauses, release) for clauses in ranges):
            return release
    return None


def allowed(ranges: Sequence[Tuple[Clause, ...]], releases: Iterable[Release]
            ) -> List[Release]:
    """Every release that all the ranges allow, newest first (none where they contradict
    each other)."""
    return [release for release in _every_patch(releases)
            if all(allows(clauses, release) for clauses in ranges)]


# --- what a project declares ------------------------------------------------------

@record(frozen=True)
class Target:
    """What a project's declarations say. `tensorflow`: the newest (major, minor) its
    range allows, None where it declares no TensorFlow; `keras`: "2" or "3" where it
    declares keras, else None; `files`: the declaration files read (none: no project);
    `requirements`: the requirements on those distributions, as declared."""

    tensorflow: Optional[Tuple[int, int]] = None
    keras: Optional[str] = None
    files: Tuple[str, ...] = ()
    requirements: Tuple[str, ...] = ()
    # Whether the declarations settle the Keras major of `tf.keras` and `keras`: every
    # TensorFlow release they allow is on one side of 2.16 (tfapi.KERAS3_FROM_TENSORFLOW),
    # or every keras release they allow has one major. Where they do not (an open
    # `tensorflow`, nothing declared), the newest is a guess: pip may well install an
    # older TensorFlow (another pin rules the newer out), and no error rests on a guess.
    keras_settled: bool = False


NO_PROJECT = Target()

Declared = List[Tuple[str, List[str]]]  # (file, its requirement strings), per file


def target_of(declared: Declared) -> Target:
    """The target of a project from its declaration files' requirement strings."""
    tensorflow: List[Tuple[Clause, ...]] = []
    keras: List[Tuple[Clause, ...]] = []
    shown: List[str] = []
    families = (tfapi.TENSORFLOW_DISTRIBUTIONS
                | {tfapi.KERAS_DISTRIBUTION, tfapi.TF_KERAS_DISTRIBUTION})
    for _, requirements in declared:
        for text in requirements:
            parsed = parse_requirement(text)
            if parsed is None or parsed[0] not in families:
                continue
            name, clauses = parsed
            written = re.sub(r"\s+", "", text.split(";", 1)[0]).replace("(", "").replace(")", "")
            if written not in shown:
                shown.append(written)
            if clauses is None:
                continue  # a URL or an unreadable range: says nothing about the version
            if name in tfapi.TENSORFLOW_DISTRIBUTIONS:
                tensorflow.append(clauses)
            elif name == tfapi.KERAS_DISTRIBUTION:
                keras.append(clauses)
    keras_major: Optional[str] = None
    keras_settled = False
    if keras:
        found = newest(keras, tfapi.KERAS_RELEASES)
        keras_major = None if found is None else str(found[0])
        majors = {release[0] for release in allowed(keras, tfapi.KERAS_RELEASES)}
        keras_settled = len(majors) == 1
    candidates: Sequence[Release] = tfapi.TENSORFLOW_RELEASES
    if keras_major == "2":
        # TensorFlow from 2.16 requires keras 3: a keras 2 pin keeps TensorFlow below it,
        # unless the TensorFlow range itself says otherwise.
        older = [r for r in candidates if r[:2] < tfapi.KERAS3_FROM_TENSORFLOW]
        if not tensorflow or newest(tensorflow, older) is not None:
            candidates = older
    release = newest(tensorflow, candidates) if (tensorflow or keras_major == "2") else None
    if tensorflow and not keras_settled:
        sides = {r[:2] >= tfapi.KERAS3_FROM_TENSORFLOW for r in allowed(tensorflow, candidates)}
        keras_settled = len(sides) == 1
    return Target(None if release is None else (release[0], release[1]), keras_major,
                  tuple(path for path, _ in declared), tuple(shown), keras_settled)


def _mentions(data: bytes) -> bool:
    lowered = data.lower()
    return any(word in lowered for word in _WORDS)


def _read(path: str) -> Optional[bytes]:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def pyproject_requirements(data: bytes) -> Optional[List[str]]:
    """`[project]` dependencies and optional-dependencies, and Poetry's dependency tables
    (as PEP 440 ranges); None where the file declares no project."""
    if b"[project" not in data and b"[tool.poetry" not in data:
        return None
    if not _mentions(data):
        return []
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python < 3.11 only
        import tomli as tomllib
    try:
        table = tomllib.loads(_text(data))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, RecursionError):
        return []
    found: List[str] = []
    project = table.get("project")
    if isinstance(project, dict):
        found += _strings(project.get("dependencies"))
        optional = project.get("optional-dependencies")
        if isinstance(optional, dict):
            for group in optional.values():
                found += _strings(group)
    poetry = table.get("tool", {}).get("poetry") if isinstance(table.get("tool"), dict) else None
    if isinstance(poetry, dict):
        tables = [poetry.get("dependencies"), poetry.get("dev-dependencies")]
        groups = poetry.get("group")
        if isinstance(groups, dict):
            tables += [g.get("dependencies") for g in groups.values() if isinstance(g, dict)]
        for deps in tables:
            if isinstance(deps, dict):
                for name, constraint in deps.items():
                    for one in constraint if isinstance(constraint, list) else [constraint]:
                        pep440 = poetry_range(one.get("version", "*") if isinstance(one, dict)
                                              else one)
                        found.append(f"{name}{pep440}" if pep440 is not None else f"{name} @ ?")
    return found


def poetry_range(constraint: object) -> Optional[str]:
    """A Poetry version constraint as a PEP 440 specifier (`^2.13` -> `>=2.13,<3`); None
    where it cannot be read (alternatives with `||`, anything not a string)."""
    if not isinstance(constraint, str) or "||" in constraint:
        return None
    parts = []
    for part in re.split(r"\s*,\s*|\s+(?=[<>=!~^])", constraint.strip()):
        if part in ("", "*"):
            continue
        if part[0] in "^~" and not part.startswith("~="):
            text = part[1:].strip()
            if not re.match(r"^\d+(?:\.\d+)*$", text):
                return None
            release = list(_release(text))
            if part[0] == "^":
                index = next((i for i, n in enumerate(release) if n), len(release) - 1)
            else:
                index = min(1, len(release) - 1) if len(release) > 1 else 0
            upper = release[:index] + [release[index] + 1]
            parts += [f">={text}", "<" + ".".join(map(str, upper))]
        elif part[0].isdigit():
            parts.append(f"=={part}")
        else:
            parts.append(part)
    return ",".join(parts)


def setup_py_requirements(data: bytes) -> List[str]:
    """`install_requires` and `extras_require` of the `setup(...)` calls: literal lists
    and dicts, names bound to them at the top level, and `+` of those; nothing runs."""
    if not _mentions(data):
        return []
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    names: Dict[str, ast.AST] = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and \
                isinstance(statement.targets[0], ast.Name):
            names[statement.targets[0].id] = statement.value
    found: List[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        callee = node.func.id if isinstance(node.func, ast.Name) else \
            node.func.attr if isinstance(node.func, ast.Attribute) else None
        if callee != "setup":
            continue
        for keyword in node.keywords:
            value = _literal(keyword.value, names, 0, [_LITERAL_BUDGET])
            if keyword.arg == "install_requires":
                found += _strings(value)
            elif keyword.arg == "extras_require" and isinstance(value, dict):
                for group in value.values():
                    found += _strings(group)
    return found


# How many nodes one `setup(...)` keyword may cost: `x = [x, x, x]` would double forever.
_LITERAL_BUDGET = 10_000


def _literal(node: ast.AST, names: Dict[str, ast.AST], depth: int, budget: List[int]) -> object:
    """The value of a literal, names bound to literals and `+` of lists; None for
    anything else. `budget[0]`: nodes left to read."""
    budget[0] -= 1
    if depth > 20 or budget[0] < 0:
        return None
    if isinstance(node, ast.Name) and node.id in names:
        return _literal(names[node.id], names, depth + 1, budget)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = (_literal(node.left, names, depth + 1, budget),
                       _literal(node.right, names, depth + 1, budget))
        if isinstance(left, list) and isinstance(right, list):
            return left + right
        return None
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_literal(element, names, depth + 1, budget) for element in node.elts]
    if isinstance(node, ast.Dict):
        found = {}
        for k, v in zip(node.keys, node.values):
            key = _literal(k, names, depth + 1, budget) if k is not None else None
            if isinstance(key, str):  # an extra's name; anything else is no extra
                found[key] = _literal(v, names, depth + 1, budget)
        return found
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def setup_cfg_requirements(data: bytes) -> Optional[List[str]]:
    """`[options] install_requires` and `[options.extras_require]`; None where the file
    declares no project (only tools' sections)."""
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(_text(data))
    except configparser.Error:
        return []
    if not parser.has_section("metadata") and not parser.has_section("options"):
        return None
    found: List[str] = []
    if parser.has_option("options", "install_requires"):
        found += _lines(parser.get("options", "install_requires"))
    if parser.has_section("options.extras_require"):
        for _, value in parser.items("options.extras_require"):
            found += _lines(value)
    return found


def requirements_txt(data: bytes) -> List[str]:
    """A pip requirements file's requirements (options, `-r` includes and URLs left out)."""
    text = _text(data).replace("\\\n", " ")
    found = []
    for line in text.splitlines():
        line = re.split(r"(?:^|\s)#", line, maxsplit=1)[0]
        line = re.split(r"\s--?[a-z]", line, maxsplit=1)[0].strip()
        if line and not line.startswith("-"):
            found.append(line)
    return found


def metadata_requirements(data: bytes) -> List[str]:
    """The `Requires-Dist` fields of a METADATA or PKG-INFO file (its header only)."""
    header = _text(data).replace("\r\n", "\n").split("\n\n", 1)[0]
    return [line.split(":", 1)[1].strip() for line in header.split("\n")
            if line.lower().startswith("requires-dist:")]


def _strings(value: object) -> List[str]:
    if isinstance(value, str):
        return _lines(value)
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def _lines(value: str) -> List[str]:
    return [line.strip() for line in value.splitlines() if line.strip()]


# --- finding a file's project ---------------------------------------------------------

class Projects:
    """Each folder's project and its `Target`, found once per folder (and each
    dist-info read once)."""

    def __init__(self) -> None:
        self._listings: Dict[str, Optional[List[str]]] = {}
        self._declared: Dict[str, Optional[Target]] = {}
        self._claims: Dict[str, Dict[str, List[str]]] = {}
        self._dist: Dict[str, Target] = {}
        self._found: Dict[Tuple[str, Optional[str]], Target] = {}

    def target(self, folder: str, module: Optional[str] = None) -> Target:
        """The target of the files in `folder` (a real path); `module`: the top-level
        name of the file itself, where `folder` may hold dist-infos that claim it."""
        key = (folder, module)
        found = self._found.get(key)
        if found is None:
            found = self._found[key] = self._walk(folder, module)
        return found

    def holds_dist_info(self, folder: str) -> bool:
        return any(name.endswith(".dist-info") for name in self._listing(folder) or ())

    def _walk(self, folder: str, module: Optional[str]) -> Target:
        below: List[str] = [] if module is None else [module]
        directory = folder
        while True:
            declared = self._declaration(directory)
            if declared is not None:
                return declared
            if below:
                dist = self._claiming(directory, below)
                if dist is not None:
                    return self._dist_target(dist)
            parent = os.path.dirname(directory)
            if parent == directory:
                return NO_PROJECT
            below.insert(0, os.path.basename(directory))
            directory = parent

    def _listing(self, folder: str) -> Optional[List[str]]:
        if folder not in self._listings:
            try:
                self._listings[folder] = sorted(os.listdir(folder))
            except OSError:
                self._listings[folder] = None
        return self._listings[folder]

    def _declaration(self, folder: str) -> Optional[Target]:
        """The target of `folder`'s own declaration files; None where it has none."""
        if folder in self._declared:
            return self._declared[folder]
        declared: Declared = []
        for name in self._listing(folder) or ():
            path = os.path.join(folder, name)
            requirements: Optional[List[str]] = None
            if name in ("pyproject.toml", "setup.py", "setup.cfg", "PKG-INFO") or \
                    fnmatch.fnmatchcase(name, "requirements*.txt"):
                data = _read(path) if os.path.isfile(path) else None
                if data is None:
                    continue
                if name == "pyproject.toml":
                    requirements = pyproject_requirements(data)
                elif name == "setup.py":
                    requirements = setup_py_requirements(data)
                elif name == "setup.cfg":
                    requirements = setup_cfg_requirements(data)
                elif name == "PKG-INFO":
                    requirements = metadata_requirements(data)
                else:
                    requirements = requirements_txt(data)
            if requirements is not None:
                declared.append((path, requirements))
        target = target_of(declared) if declared else None
        self._declared[folder] = target
        return target

    def _claiming(self, folder: str, below: List[str]) -> Optional[str]:
        """The dist-info in `folder` that installed `below` (the path from `folder` to
        the file's folder, or to the file's module); None where none or several do."""
        claims = self._claims.get(folder)
        if claims is None:
            claims = self._claims[folder] = self._read_claims(folder)
        top = below[0][:-3] if below[0].endswith(".py") else below[0]
        owners = claims.get(top, [])
        if len(owners) > 1:  # a namespace package: the one whose RECORD holds this folder
            prefix = "/".join(below) + "/"
            owners = [d for d in owners
                      if any(row.startswith(prefix) for row in _record_rows(d))]
        return owners[0] if len(owners) == 1 else None

    def _read_claims(self, folder: str) -> Dict[str, List[str]]:
        claims: Dict[str, List[str]] = {}
        for name in self._listing(folder) or ():
            if not name.endswith(".dist-info"):
                continue
            dist = os.path.join(folder, name)
            data = _read(os.path.join(dist, "top_level.txt"))
            tops = set(_lines(_text(data))) if data is not None else \
                {_top_of(row) for row in _record_rows(dist)} - {None}
            for top in tops:
                claims.setdefault(str(top), []).append(dist)
        return claims

    def _dist_target(self, dist: str) -> Target:
        target = self._dist.get(dist)
        if target is None:
            path = os.path.join(dist, "METADATA")
            data = _read(path)
            declared: Declared = [(path, metadata_requirements(data) if data else [])]
            target = self._dist[dist] = target_of(declared)
        return target


def _record_rows(dist: str) -> List[str]:
    data = _read(os.path.join(dist, "RECORD"))
    return [] if data is None else [row.split(",", 1)[0] for row in _lines(_text(data))]


def _top_of(row: str) -> Optional[str]:
    """The top-level package or module a RECORD row installs (None: metadata, scripts)."""
    first = row.split("/", 1)[0]
    if first.endswith((".dist-info", ".data")) or first in ("..", "") or "/" not in row and \
            not first.endswith(".py"):
        return None
    return first[:-3] if "/" not in row else first
