"""A content-addressed cache of per-file models, and of a run's findings.

- `models/<digest>.pickle`: the `FileResult` of one file's bytes. The digest covers
  the tool version, the settings that change the file's model, and the bytes, so an
  entry never goes stale and two runs writing the same entry write the same thing.
- `runs/<key>.pickle`: for one folder the command ran in, every file's digest and the
  settings it was checked under, and the findings they gave; when nothing changed, a
  run prints them without parsing or linking anything.

Every write goes to a temporary file and is renamed into place, so runs can
share the folder; anything unreadable is ignored and rebuilt.
"""
from __future__ import annotations

import os
import pickle
import tempfile
from typing import List, Sequence, Tuple

try:  # BLAKE2 alone: `hashlib` would also load OpenSSL's hashes, a few ms an editor pays per call
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python without the module
    from hashlib import blake2b

from . import __version__
from .collector import collector_paused

FOLDER = ".syncadvisor_cache"
_FORMAT = 4  # 4: models from Python's `ast` alone (no `exact` field)

RunFile = Tuple[str, str, str]  # a file of a run: path, digest, its settings' run key


def _tool_fingerprint() -> str:
    """The version, and the size and mtime of every module of the tool: an edited
    checkout (or a new release) never reads entries written by another."""
    here = os.path.dirname(os.path.abspath(__file__))
    parts = [__version__]
    for folder, _, names in sorted(os.walk(here)):
        for name in sorted(names):
            if name.endswith(".py"):
                stat = os.stat(os.path.join(folder, name))
                parts.append(f"{name}:{stat.st_size}:{stat.st_mtime_ns}")
    return blake2b("/".join(parts).encode(), digest_size=8).hexdigest()


def digest(data: bytes, salt: str) -> str:
    h = blake2b(data, digest_size=16, person=b"syncadvisor")
    h.update(salt.encode())
    return h.hexdigest()


class Cache:
    def __init__(self, directory: str):
        self.directory = directory
        self.salt = f"{_tool_fingerprint()}/{_FORMAT}"

    # --- per-file models ---------------------------------------------------------

    def file_digest(self, data: bytes, path: str, module: str, model_key: str) -> str:
        """A model depends on the bytes, on the path and module name it was read as, and
        on the settings of that file that change models (`Settings.cache_key`)."""
        return digest(data, f"{self.salt}/{model_key}/{path}/{module}")

    def _model_path(self, key: str) -> str:
        return os.path.join(self.directory, "models", key[:2], key + ".pickle")

    def load_model(self, key: str):
        return _read(self._model_path(key))

    def store_model(self, key: str, result) -> None:
        # Called after a miss only: an entry already there is corrupt (or was just written
        # by a run beside this one, with the same bytes), so it is replaced, not kept.
        _write(self._model_path(key), result, self.directory)

    # --- whole runs --------------------------------------------------------------------

    def _run_path(self, folder: str) -> str:
        name = blake2b(f"{self.salt}/{os.path.abspath(folder)}".encode(),
                       digest_size=12).hexdigest()
        return os.path.join(self.directory, "runs", name + ".pickle")

    def load_run(self, folder: str, files: Sequence[RunFile]):
        """The findings of the last run from `folder` over exactly these files: (path,
        digest, `Settings.run_key` of the file's settings) each."""
        stored = _read(self._run_path(folder))
        if not isinstance(stored, dict) or stored.get("files") != list(files):
            return None
        return stored.get("findings")

    def store_run(self, folder: str, files: Sequence[RunFile], findings: List) -> None:
        _write(self._run_path(folder), {"files": list(files), "findings": findings},
               self.directory)


def _read(path: str):
    try:
        with open(path, "rb") as handle, collector_paused():  # unpickling is all allocation
            return pickle.load(handle)
    except Exception:  # noqa: BLE001 - missing, truncated, corrupt or from another version
        return None


def _write(path: str, value, root: str) -> None:
    directory = os.path.dirname(path)
    try:
        os.makedirs(directory, exist_ok=True)
        _ignore_in_git(root)
        handle, temp = tempfile.mkstemp(prefix=".tmp-", dir=directory)
    except OSError:
        return  # a read-only tree: run without a cache
    try:
        with os.fdopen(handle, "wb") as out:
            pickle.dump(value, out, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(temp, path)
    except Exception:  # noqa: BLE001 - a full disk, or a value that cannot be pickled
        try:
            os.unlink(temp)
        except OSError:
            pass


def _ignore_in_git(folder: str) -> None:
    marker = os.path.join(folder, ".gitignore")
    if not os.path.exists(marker):
        try:
            with open(marker, "w") as out:
                out.write("# created by syncadvisor\n*\n")
        except OSError:
            pass


def default_directory(root: str) -> str:
    return os.environ.get("SYNCADVISOR_CACHE_DIR") or os.path.join(root, FOLDER)

