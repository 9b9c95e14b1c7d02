"""Config files -> `Settings` for each file; code selection.

A file's settings come from the nearest config file above it, as ruff resolves them: a
`syncadvisor.toml` (its top-level keys are the table) or a `pyproject.toml` with a
`[tool.syncadvisor]` table; defaults where there is none. `Configuration` resolves them
for a run; a single `Settings` also answers `for_path`, for a run that uses one for
every file. Either way, a file's `target-tensorflow` (and what `keras` is) come from its
project's declared dependencies where the config does not set them (`targets`). Unknown
keys and bad values raise `ConfigError` naming the key and the file (exit 2).
"""
from __future__ import annotations

from .records import field, record, replace
import fnmatch
from functools import lru_cache
import os
import re
import stat
import sys
from pathlib import Path
from typing import (TYPE_CHECKING, Callable, Dict, Iterable, List, Mapping, Optional, Sequence,
                    Tuple, Union)

if TYPE_CHECKING:
    from .targets import Projects, Target


TABLE = "syncadvisor"
CONFIG_FILE = "syncadvisor.toml"
KERAS_CHOICES = ("auto", "2", "3")
ASSUME_CHOICES = ("unknown", "mirrored", "none")
DEFAULT_TARGET = (2, 21)
_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.\d+)?$")
_CODE_PREFIX = re.compile(r"^[A-Z]{1,3}[0-9]{0,3}$")


class ConfigError(Exception):
    """A bad setting: the message names the key and the file."""


# Folders and files that discovery does not walk into unless a config's `exclude` says
# otherwise (ruff's defaults, and a project's build output): matched by name. A path named
# on the command line is checked even so, unless --force-exclude.
DEFAULT_EXCLUDE = (".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg",
                   ".ipynb_checkpoints", ".mypy_cache", ".nox", ".pants.d", ".pyenv",
                   ".pytest_cache", ".pytype", ".ruff_cache", ".svn", ".tox", ".venv", ".vscode",
                   "__pypackages__", "_build", "buck-out", "build", "dist", "node_modules",
                   "site-packages", "venv",
                   # jupyterlab-lsp's copies of the open notebooks, as Python, named `.ipynb`
                   ".virtual_documents")
_DEFAULT_EXCLUDED = frozenset(DEFAULT_EXCLUDE)

# What runs where no selection says otherwise: the base that a config's `select` replaces
# and that its `ignore` and `extend-select` change (as ruff's defaults are).
DEFAULT_SELECT = ("TFS",)


@record(frozen=True)
class Settings:
    select: Optional[Tuple[str, ...]] = None  # None: the config does not say (DEFAULT_SELECT)
    ignore: Tuple[str, ...] = ()
    extend_select: Tuple[str, ...] = ()
    per_file_ignores: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    exclude: Optional[Tuple[str, ...]] = None  # None: the config does not say (DEFAULT_EXCLUDE)
    extend_exclude: Tuple[str, ...] = ()
    target_tensorflow: Tuple[int, int] = DEFAULT_TARGET
    keras: str = "auto"  # what tf.keras is: "2", "3", or "auto" (from target_tensorflow)
    # What the `keras` package is: "2" or "3" where the project pins keras; "auto": the
    # keras TensorFlow itself requires (`tfapi.keras_is_keras3`). Inferred only.
    keras_package: str = "auto"
    assume_strategy: str = "unknown"
    # Selections made after the config's (the command line's): (select, extend-select, ignore)
    overrides: Tuple["Selection", ...] = ()
    force_exclude: bool = False  # excludes apply to paths named on the command line too
    root: str = field(default_factory=os.getcwd, compare=False)
    source: Optional[str] = field(default=None, compare=False)  # the config file (None: none)
    # The keys a config file or --config set: the project's declarations never change them.
    set_keys: Tuple[str, ...] = ()
    # Those of `set_keys` that --config set (over the config file's, if it set them too):
    # what --show-settings names as their source.
    option_keys: Tuple[str, ...] = field(default=(), compare=False)
    # Whether the project's declared target is applied (`for_path` has nothing left to
    # infer), and what it was: the declaration files and requirements read.
    resolved: bool = field(default=False, compare=False)
    target: Optional["Target"] = field(default=None, compare=False)

    def for_path(self, path: str) -> "Settings":
        """The settings of `path`: these, for every path, with the target that the
        project of `path` declares (see `Configuration`)."""
        if self.resolved:
            return self
        folder = os.path.dirname(path) or os.curdir
        return _resolved_for(self, os.path.realpath(folder), _module_in(folder, path))

    def for_folder(self, folder: str) -> "Settings":
        if self.resolved:
            return self
        return _resolved_for(self, os.path.realpath(folder), None)

    def cache_key(self) -> str:
        """What the per-file model depends on (selection does not change models)."""
        return f"tf={self.target_tensorflow};keras={self.keras};keras-package={self.keras_package}"

    def keras_assumption(self, family: str) -> Optional[str]:
        """What a claim that holds for the Keras `family` only (tfapi.KERAS3 or KERAS2)
        assumes here, as a phrase for its message: "if this runs on Keras 3 (TensorFlow
        >= 2.16; ...)"; None where a config or the project's declarations settle which
        Keras runs (`Target.keras_settled`). The tool resolves an open range to the newest
        release, but pip may install another: an error never rests on that guess."""
        from .model import tfapi

        if "keras" in self.set_keys or "target-tensorflow" in self.set_keys:
            return None
        target = self.target
        if target is not None and target.keras_settled:
            return None
        keras3 = family == tfapi.KERAS3
        version = "TensorFlow >= 2.16" if keras3 else "TensorFlow < 2.16"
        declared = target is not None and target.tensorflow is not None
        why = "the project does not pin it" if declared else \
            "the project declares no TensorFlow version"
        return f"if this runs on {'Keras 3' if keras3 else 'Keras 2'} ({version}; {why})"

    def target_summary(self) -> str:
        """What the target is and where it comes from, in a line."""
        from .model import tfapi

        tf_keras = 3 if tfapi.tf_keras_is_keras3(self.target_tensorflow, self.keras) else 2
        keras = 3 if tfapi.keras_is_keras3(self.target_tensorflow, self.keras_package) else 2
        target = self.target
        version = f"{self.target_tensorflow[0]}.{self.target_tensorflow[1]}"
        if "target-tensorflow" not in self.set_keys and self.target_tensorflow == DEFAULT_TARGET \
                and (target is None or target.tensorflow is None):
            version += " (the default)"
        what = f"TensorFlow {version}, tf.keras Keras {tf_keras}, keras Keras {keras}"
        # `keras = "auto"` sets nothing: what tf.keras is still follows the target.
        set_here = [key for key in ("target-tensorflow", "keras") if key in self.set_keys
                    and not (key == "keras" and self.keras == "auto")]
        by_file = [key for key in set_here if key not in self.option_keys and self.source]
        by_option = [key for key in set_here if key not in by_file]
        why = []
        if by_file:
            why.append(f"{' and '.join(by_file)} set by {tidy(self.source or '')}")
        if by_option:
            why.append(f"{' and '.join(by_option)} set by --config")
        files = ", ".join(tidy(path) for path in target.files) if target is not None else ""
        if not files:
            why.append("no dependency declaration above")
        elif target is not None and not target.requirements:
            why.append(f"none declared in {files}")
        elif target is not None:
            why.append(f"from {files}: {', '.join(target.requirements)}")
        if self.keras_assumption(tfapi.KERAS3) is not None:
            why.append("the Keras major is a guess, so Keras-only claims are warnings")
        return f"{what} ({'; '.join(why)})"

    def run_key(self) -> str:
        """What a run's findings depend on, besides the files."""
        return repr((self.select, self.ignore, self.extend_select, self.per_file_ignores,
                     self.overrides, self.exclude, self.extend_exclude, self.force_exclude,
                     self.assume_strategy, os.path.abspath(self.root)))

    def enabled(self, code: str, path: Optional[str] = None) -> bool:
        """Whether `code` runs (in the file `path`): selected, and not in a per-file ignore
        of that file, which wins over any selection (as in ruff)."""
        if not _selected(code, DEFAULT_SELECT,
                         ((self.select, self.extend_select, self.ignore),) + self.overrides):
            return False
        return not self.per_file_ignores or _longest_match(code, self._file_ignores(path)) is None

    def _file_ignores(self, path: Optional[str]) -> Tuple[str, ...]:
        if not path or not self.per_file_ignores:
            return ()
        rel = relative_to_root(path, self.root)
        codes: List[str] = []
        for pattern, pattern_codes in self.per_file_ignores:
            if path_matches(rel, pattern):
                codes.extend(pattern_codes)
        return tuple(codes)

    def is_excluded(self, path: str) -> bool:
        """Whether a path named on the command line (or standard input's name) is left out:
        by the config's own patterns (what pre-commit, which names every file, needs); with
        force_exclude, by the default excludes too, in any folder on its way from the root."""
        patterns = self._patterns()
        if not patterns and not self.force_exclude:
            return False
        rel = relative_to_root(path, self.root)
        if any(path_matches(rel, pattern) for pattern in patterns):
            return True
        return self.force_exclude and self.exclude is None and \
            any(part in _DEFAULT_EXCLUDED for part in rel.split("/"))

    def walks_past(self, path: str, name: str) -> bool:
        """Whether discovery leaves out the file or folder `path`, named `name`, that it
        came to while walking a folder: the default excludes by name, the config's
        patterns as for `is_excluded`."""
        if self.exclude is None and name in _DEFAULT_EXCLUDED:
            return True
        patterns = self._patterns()
        if not patterns:
            return False
        rel = relative_to_root(path, self.root)
        return any(path_matches(rel, pattern) for pattern in patterns)

    def _patterns(self) -> Tuple[str, ...]:
        return (self.exclude or ()) + self.extend_exclude


Selection = Tuple[Optional[Tuple[str, ...]], Tuple[str, ...], Tuple[str, ...]]


def tidy(path: str) -> str:
    """A path as a report shows it: relative to the current folder where below it."""
    rel = os.path.relpath(path) if os.path.isabs(path) else path
    return path if rel.startswith("..") else rel


def with_target(settings: Settings, target: "Target") -> Settings:
    """`settings` with what the project declares (`target`) in the keys that no config
    file or --config set and that hold their defaults."""
    values: Dict[str, object] = {"resolved": True, "target": target}
    if target.tensorflow is not None and "target-tensorflow" not in settings.set_keys and \
            settings.target_tensorflow == DEFAULT_TARGET:
        values["target_tensorflow"] = target.tensorflow
    if target.keras is not None and settings.keras_package == "auto":
        values["keras_package"] = target.keras
    return replace(settings, **values)  # type: ignore[arg-type]


# (id of a settings, real folder, module) -> (that settings, kept so that its id stays its
# own; the settings with that project's target): for a `Settings` that answers for every
# path (the API's, the flake8 plugin's), which is not a `Configuration`.
_RESOLVED: Dict[Tuple[int, str, Optional[str]], Tuple[Settings, Settings]] = {}
_PROJECTS: List["Projects"] = []
_RESOLVED_LIMIT = 4096


def _resolved_for(settings: Settings, real_folder: str, module: Optional[str]) -> Settings:
    key = (id(settings), real_folder, module)
    found = _RESOLVED.get(key)
    if found is None:
        if len(_RESOLVED) >= _RESOLVED_LIMIT:  # a long-lived process (an editor's) reads
            _RESOLVED.clear()                   # declarations afresh now and then
            _PROJECTS.clear()
        if not _PROJECTS:
            from .targets import Projects

            _PROJECTS.append(Projects())
        projects = _PROJECTS[0]
        if module is not None and not projects.holds_dist_info(real_folder):
            return _resolved_for(settings, real_folder, None)
        found = _RESOLVED[key] = (settings,
                                  with_target(settings, projects.target(real_folder, module)))
    return found[1]


def _module_in(folder: str, path: str) -> Optional[str]:
    """The top-level module a file directly in a site-packages-like folder is."""
    name = os.path.basename(path)
    return name.rsplit(".", 1)[0] if name.endswith((".py", ".pyi")) else None


@lru_cache(maxsize=None)
def _selected(code: str, base: Tuple[str, ...], selections: Sequence[Selection]) -> bool:
    """Whether `code` runs, as ruff decides it: `base` is on, then each selection (select,
    extend-select, ignore) in turn changes what it names. A selection's most specific
    (longest) matching prefix decides, ignore over select at the same length ("ALL" is
    the least specific); a selection with a `select` turns off everything it does not
    select, one without changes only what it names."""
    on = _longest_match(code, base) is not None
    for select, extend_select, ignore in selections:
        chosen = _longest_match(code, (select or ()) + extend_select)
        dropped = _longest_match(code, ignore)
        verdict = chosen is not None and (dropped is None or len(chosen) > len(dropped))
        if select is not None or chosen is not None or dropped is not None:
            on = verdict
    return on


def settings_toml(settings: Settings, path: Optional[str] = None) -> str:
    """`settings` as the lines of a config file would set them (a key not set shows its
    default), then the command line's selections, and the rules that run on `path`."""
    import json

    def value(item: object) -> str:
        if isinstance(item, tuple):
            return "[" + ", ".join(value(part) for part in item) + "]"
        if isinstance(item, bool):
            return "true" if item else "false"
        return json.dumps(item)

    pfi = ", ".join(f"{value(glob)} = {value(codes)}" for glob, codes in settings.per_file_ignores)
    lines = [
        f"select = {value(DEFAULT_SELECT if settings.select is None else settings.select)}",
        f"extend-select = {value(settings.extend_select)}",
        f"ignore = {value(settings.ignore)}",
        f"per-file-ignores = {{{pfi}}}",
        f"exclude = {value(DEFAULT_EXCLUDE if settings.exclude is None else settings.exclude)}",
        f"extend-exclude = {value(settings.extend_exclude)}",
        f"target-tensorflow = \"{settings.target_tensorflow[0]}.{settings.target_tensorflow[1]}\"",
        f"keras = {value(settings.keras)}",
        f"assume-strategy = {value(settings.assume_strategy)}",
    ]
    for select, extend_select, ignore in settings.overrides:
        lines += ["", "# the command line's, after the above"]
        if select is not None:
            lines.append(f"select = {value(select)}")
        lines += [f"extend-select = {value(extend_select)}", f"ignore = {value(ignore)}"]
    lines += ["", f"force-exclude = {value(settings.force_exclude)}"]
    if path is not None:
        from .rules import all_codes  # late: rules import config-free modules only

        running = tuple(code for code in all_codes() if settings.enabled(code, path))
        lines += ["", "# what runs on this file", f"rules = {value(running)}"]
    return "\n".join(lines) + "\n"


def _longest_match(code: str, prefixes: Iterable[str]) -> Optional[str]:
    best: Optional[str] = None
    for prefix in prefixes:
        p = "" if prefix == "ALL" else prefix
        if code.startswith(p) and (best is None or len(p) > len(best)):
            best = p
    return best


def relative_to_root(path: str, root: str) -> str:
    try:
        rel = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    except ValueError:  # another drive on Windows
        rel = path
    return rel.replace(os.sep, "/")


def path_matches(rel: str, pattern: str) -> bool:
    """Match like ruff/flake8: the whole relative path, its tail, or any component."""
    pattern = pattern.replace(os.sep, "/").rstrip("/")
    if pattern.startswith("./"):
        pattern = pattern[2:]
    if fnmatch.fnmatchcase(rel, pattern) or fnmatch.fnmatchcase(rel, pattern + "/*"):
        return True
    if "/" not in pattern:
        return any(fnmatch.fnmatchcase(part, pattern) for part in rel.split("/"))
    return (fnmatch.fnmatchcase(rel, "*/" + pattern)
            or fnmatch.fnmatchcase(rel, "*/" + pattern + "/*"))


# --- loading -----------------------------------------------------------------

def find_config(start: Path) -> Optional[Path]:
    """The nearest config file from `start` up: a `syncadvisor.toml`, or a pyproject.toml
    with a [tool.syncadvisor] table (syncadvisor.toml first, as ruff reads ruff.toml
    before pyproject.toml)."""
    directory = os.path.realpath(start)
    if not os.path.isdir(directory):
        directory = os.path.dirname(directory)
    while True:
        found = _config_in(directory)
        if found is not None:
            return Path(found)
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def _config_in(directory: str) -> Optional[str]:
    """The config file of `directory` itself, if it has one."""
    path = os.path.join(directory, CONFIG_FILE)
    if _is_file(path) is not None:
        return path
    path = os.path.join(directory, "pyproject.toml")
    status = _is_file(path)
    if status is not None and TABLE in _read_toml(Path(path), status).get("tool", {}):
        return path
    return None


def _is_file(path: str) -> Optional[os.stat_result]:
    try:
        status = os.stat(path)
    except OSError:
        return None
    return status if stat.S_ISREG(status.st_mode) else None


# path -> (mtime, size, table): the flake8 plugin looks for settings once per folder, and
# would otherwise read and parse the same project's pyproject.toml once per folder.
_TOML_READ: Dict[str, Tuple[int, int, dict]] = {}


def _read_toml(path: Path, status: Optional[os.stat_result] = None) -> dict:
    if status is None:
        try:
            status = os.stat(path)
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    known = _TOML_READ.get(str(path))
    if known is not None and known[:2] == (status.st_mtime_ns, status.st_size):
        return known[2]
    data = _parse_toml(path)
    _TOML_READ[str(path)] = (status.st_mtime_ns, status.st_size, data)
    return data


def _tomllib():
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python < 3.11 only
        import tomli as tomllib
    return tomllib


def _parse_toml(path: Path) -> dict:
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    if path.name == "pyproject.toml" and TABLE.encode() not in data:
        return {}  # no table of ours, whatever else it holds: not parsed (nor imported tomllib)
    tomllib = _tomllib()
    try:
        return tomllib.loads(data.decode("utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{path}: nested too deeply to read") from None
    except UnicodeDecodeError as exc:  # TOML is UTF-8 by definition
        raise ConfigError(f"{path}: not valid TOML: not UTF-8 ({exc.reason} at byte "
                          f"{exc.start})") from None


def load_settings(config_file: Optional[str] = None, start: Optional[str] = None) -> Settings:
    """Settings from `config_file`, or the nearest config file above `start` (or cwd)."""
    if config_file is not None:
        if not os.path.isfile(config_file):
            raise ConfigError(f"--config: {config_file}: no such file")
        return settings_from_file(config_file)
    found = find_config(Path(start) if start else Path.cwd())
    return Settings() if found is None else settings_from_file(str(found))


def settings_from_file(config_file: str) -> Settings:
    """The settings a config file holds: a pyproject.toml's [tool.syncadvisor] table (none:
    the defaults), or a syncadvisor.toml's top-level keys (or its [tool.syncadvisor])."""
    path = Path(config_file)
    data = _read_toml(path)
    table = data.get("tool", {}).get(TABLE, data if path.name != "pyproject.toml" else {})
    return settings_from_table(table, str(path.parent.resolve()), str(path))


def config_options(values: Sequence[str]) -> Tuple[Optional[str], Dict[str, object]]:
    """--config's values, as ruff reads them: each a config file to use for every file
    (one at most), or a TOML `key = value` that sets one key for every file, over what
    each file's config says. Returns the file and the table of keys (validated)."""
    config_file: Optional[str] = None
    table: Dict[str, object] = {}
    for value in values:
        if os.path.isfile(value):
            if config_file is not None:
                raise ConfigError(f"--config: {value}: one config file at most "
                                  f"({config_file} is one)")
            config_file = value
            continue
        tomllib = _tomllib()
        try:
            table.update(tomllib.loads(value))
        except tomllib.TOMLDecodeError as exc:
            if "=" not in value:
                why = "not a file" if os.path.exists(value) else "no such file"
                raise ConfigError(f"--config: {value}: {why} (--config takes a config file, "
                                  f"or a TOML `key = value` that sets one key)") from None
            raise ConfigError(f"--config: {value}: not a TOML `key = value` ({exc}); "
                              f"{_quoting_hint(value)}") from None
    if table:
        settings_from_table(table, os.getcwd(), "--config", where="--config")
    return config_file, table


def _quoting_hint(value: str) -> str:
    """How to write `value` as --config wants it, as ruff wants it: valid TOML, so a
    string is quoted, inside the shell's quotes (`--config 'keras = 2'` is the usual slip:
    the shell's quotes are gone before TOML reads it)."""
    key, _, given = (part.strip() for part in value.partition("="))
    if key and re.fullmatch(r"[\w.-]+", given):  # a bare word: the string it meant
        return f"quote a string inside the shell's quotes: --config \"{key} = '{given}'\""
    return ("write the value as TOML, a string quoted inside the shell's quotes, e.g. "
            "--config \"assume-strategy = 'mirrored'\" or --config \"select = ['TFS1']\"")


def with_table(settings: Settings, table: Mapping[str, object]) -> Settings:
    """`settings` with the keys of `table` (a valid --config table) set as a config file's
    would set them, the others left as they are."""
    given = settings_from_table(table, settings.root, "--config", where="--config")
    values = {key.replace("-", "_"): getattr(given, key.replace("-", "_")) for key in table}
    values["set_keys"] = tuple(sorted(set(settings.set_keys) | set(table)))
    values["option_keys"] = tuple(sorted(set(settings.option_keys) | set(table)))
    return replace(settings, **values)


class Configuration:
    """Each file's `Settings`, as ruff resolves them: those of the nearest config file
    above the file (`find_config`), or the defaults where there is none; or those of
    `config_file` for every file (--config FILE). `adjust` (the command line's changes)
    applies to each. Then the target that the file's project declares (`targets`: the
    nearest folder above the file with a dependency declaration, found independently of
    the config file) fills `target-tensorflow` and what `keras` is, where neither the
    config nor `adjust` set them. Looked up once per folder, and each config file and
    declaration read once, so the files of one config and one project share one
    `Settings` object."""

    def __init__(self, config_file: Optional[str] = None,
                 adjust: Optional[Callable[[Settings], Settings]] = None):
        from .targets import Projects

        self.adjust = adjust or (lambda settings: settings)
        self._fixed = None if config_file is None else self.adjust(load_settings(config_file))
        self._folders: Dict[str, Settings] = {}  # a folder as named -> its settings
        self._real: Dict[str, Settings] = {}  # a real folder -> its config's settings
        self._files: Dict[Optional[str], Settings] = {}  # a config file (None: none) -> ...
        self.projects = Projects()
        # a folder as named -> its real path if it holds a dist-info (site-packages), else None
        self._dist_folders: Dict[str, Optional[str]] = {}
        self._reals: Dict[str, str] = {}  # a folder as named -> its real path
        # (id of a config's settings, a project's target) -> the two together
        self._targeted: Dict[Tuple[int, "Target"], Settings] = {}

    def for_path(self, path: str) -> Settings:
        """The settings of the file (or standard input's name) `path`."""
        folder = os.path.dirname(path) or os.curdir
        dist = self._dist_folders.get(folder, "")
        if dist == "":
            real = self._realpath(folder)
            dist = self._dist_folders[folder] = \
                real if self.projects.holds_dist_info(real) else None
        module = _module_in(folder, path) if dist is not None else None
        if dist is not None and module is not None:  # the file's own dist-info decides
            return self._with_target(self._config_for(folder), dist, module)
        return self.for_folder(folder)

    def for_folder(self, folder: str) -> Settings:
        """The settings of the files directly in `folder`."""
        settings = self._folders.get(folder)
        if settings is None:
            settings = self._folders[folder] = self._with_target(
                self._config_for(folder), self._realpath(folder), None)
        return settings

    def _realpath(self, folder: str) -> str:
        real = self._reals.get(folder)
        if real is None:
            real = self._reals[folder] = os.path.realpath(folder)
        return real

    def _config_for(self, folder: str) -> Settings:
        if self._fixed is not None:
            return self._fixed
        return self._resolve(self._realpath(folder))

    def _with_target(self, settings: Settings, real: str, module: Optional[str]) -> Settings:
        target = self.projects.target(real, module)
        key = (id(settings), target)
        found = self._targeted.get(key)
        if found is None:
            found = self._targeted[key] = with_target(settings, target)
        return found

    def _resolve(self, real: str) -> Settings:
        passed: List[str] = []
        directory = real
        while True:
            settings = self._real.get(directory)
            if settings is not None:
                break
            passed.append(directory)
            found = _config_in(directory)
            parent = os.path.dirname(directory)
            if found is not None or parent == directory:
                settings = self._load(found)
                break
            directory = parent
        for directory in passed:
            self._real[directory] = settings
        return settings

    def _load(self, config_file: Optional[str]) -> Settings:
        settings = self._files.get(config_file)
        if settings is None:
            loaded = Settings() if config_file is None else settings_from_file(config_file)
            settings = self._files[config_file] = self.adjust(loaded)
        return settings


# What answers `for_path`: one `Settings` for every file, or a `Configuration`.
Resolver = Union[Settings, Configuration]


def settings_from_table(table: Mapping, root: str, source: str = "pyproject.toml",
                        where: Optional[str] = None) -> Settings:
    """The settings `table` holds; ConfigError names the key and `where` it is (by
    default, the table of the config file `source`)."""
    where = where or f"{source}: [tool.{TABLE}]"
    if not isinstance(table, Mapping):
        raise ConfigError(f"{where} must be a table")
    known = {"select", "ignore", "extend-select", "per-file-ignores", "exclude", "extend-exclude",
             "target-tensorflow", "keras", "assume-strategy"}
    unknown = sorted(set(table) - known)
    if unknown:
        raise ConfigError(f"{where}: unknown key `{unknown[0]}` "
                          f"(known: {', '.join(sorted(known))})")
    settings = Settings(root=root, source=source)
    values: Dict[str, object] = {"set_keys": tuple(sorted(table))}
    for key in ("select", "ignore", "extend-select"):
        if key in table:
            values[key.replace("-", "_")] = tuple(validate_codes(table[key], f"{where} `{key}`"))
    if "per-file-ignores" in table:
        pfi = table["per-file-ignores"]
        if not isinstance(pfi, Mapping):
            raise ConfigError(f"{where} `per-file-ignores` must be a table of glob = [codes]")
        values["per_file_ignores"] = tuple(
            (str(glob), tuple(validate_codes(codes, f"{where} `per-file-ignores` \"{glob}\"")))
            for glob, codes in pfi.items())
    for key in ("exclude", "extend-exclude"):
        if key in table:
            values[key.replace("-", "_")] = tuple(_string_list(table[key], f"{where} `{key}`"))
    if "target-tensorflow" in table:
        values["target_tensorflow"] = parse_version(table["target-tensorflow"],
                                                    f"{where} `target-tensorflow`")
    if "keras" in table:
        values["keras"] = _choice(table["keras"], KERAS_CHOICES, f"{where} `keras`")
    if "assume-strategy" in table:
        values["assume_strategy"] = _choice(table["assume-strategy"], ASSUME_CHOICES,
                                            f"{where} `assume-strategy`")
    return replace(settings, **values)  # type: ignore[arg-type]


def _string_list(value: object, where: str) -> List[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where} must be a list of strings")
    return list(value)


def validate_codes(value: object, where: str) -> List[str]:
    from .rules import all_codes  # late: rules import config-free modules only

    codes = _string_list(value, where)
    known = all_codes()
    result = []
    for code in codes:
        code = code.strip().upper()
        if code == "ALL":
            result.append(code)
            continue
        if not _CODE_PREFIX.match(code) or not any(k.startswith(code) for k in known):
            raise ConfigError(f"{where}: unknown rule code `{code}` "
                              f"(run `syncadvisor rules` for the list)")
        result.append(code)
    return result


def parse_version(value: object, where: str) -> Tuple[int, int]:
    match = _VERSION.match(str(value).strip())
    if not match:
        raise ConfigError(f"{where} must look like \"2.21\", got {value!r}")
    return int(match.group(1)), int(match.group(2))


def _choice(value: object, choices: Sequence[str], where: str) -> str:
    text = str(value)
    if text not in choices:
        raise ConfigError(f"{where} must be one of {', '.join(repr(c) for c in choices)}, "
                          f"got {value!r}")
    return text
