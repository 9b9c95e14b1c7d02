"""The benchmark corpus: pinned wheels from PyPI, reduced to their ``.py`` files.

``ensure_corpus("keras")`` downloads ``keras==3.15.1`` with
``pip download --no-deps`` into ``benchmarks/.work/wheels`` (skipped when the
wheel is already there), extracts only the ``.py`` files of each top-level
package into ``benchmarks/corpus/keras/`` (skipped when a stamp says this wheel
was already extracted), and returns the file list with line counts.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks import CORPUS_DIR, SCALE_DIR, WHEELS_DIR, WORK_DIR

# name in benchmarks/corpus/ -> (distribution on PyPI, pinned version)
PINS: dict[str, tuple[str, str]] = {
    "keras": ("keras", "3.15.1"),
    "tf_keras": ("tf_keras", "2.21.0"),
    "tensorflow": ("tensorflow-cpu", "2.21.0"),
}

# --corpus choices -> the corpus sets measured, in order (each gets its own table)
CORPUS_CHOICES: dict[str, list[tuple[str, list[str]]]] = {
    "keras+tf_keras": [("keras+tf_keras", ["keras", "tf_keras"])],
    "tensorflow": [("tensorflow", ["tensorflow"])],
    "all": [("keras+tf_keras", ["keras", "tf_keras"]), ("tensorflow", ["tensorflow"])],
}


@dataclass
class Corpus:
    """A set of ``.py`` files under one root folder.

    ``files`` are relative to ``root``; every tool runs with ``cwd=root`` and
    gets exactly these paths (or ``top_dirs`` when the list is too long for
    one command line).
    """

    label: str
    root: Path
    files: list[str]
    lines: int
    bytes: int
    top_dirs: list[str] = field(default_factory=list)
    sources: list[dict] = field(default_factory=list)

    def describe(self) -> dict:
        return {
            "label": self.label,
            "root": str(self.root),
            "files": len(self.files),
            "lines": self.lines,
            "bytes": self.bytes,
            "top_dirs": self.top_dirs,
            "sources": self.sources,
        }


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _norm(dist: str) -> str:
    return re.sub(r"[-_.]+", "_", dist).lower()


def find_wheel(dist: str, version: str, wheels_dir: Path = WHEELS_DIR) -> Path | None:
    prefix = f"{_norm(dist)}-{version}-"
    if not wheels_dir.is_dir():
        return None
    for p in sorted(wheels_dir.glob("*.whl")):
        if p.name.lower().startswith(prefix):
            return p
    return None


def download_wheel(dist: str, version: str, wheels_dir: Path = WHEELS_DIR) -> Path:
    """``pip download --no-deps dist==version`` unless the wheel is already there."""
    found = find_wheel(dist, version, wheels_dir)
    if found:
        return found
    wheels_dir.mkdir(parents=True, exist_ok=True)
    cmd = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
        "--disable-pip-version-check", "-q", f"{dist}=={version}", "-d", str(wheels_dir),
    ]
    _log(f"[corpus] downloading {dist}=={version} ... ({' '.join(cmd[2:])})")
    subprocess.run(cmd, check=True)
    found = find_wheel(dist, version, wheels_dir)
    if not found:
        raise RuntimeError(f"pip download did not leave a {dist}=={version} wheel in {wheels_dir}")
    return found


def _top_level_packages(zf: zipfile.ZipFile) -> list[str]:
    """Top-level packages of a wheel: root folders other than .dist-info/.data that hold .py files."""
    tops = set()
    for name in zf.namelist():
        parts = name.split("/")
        if len(parts) < 2 or not name.endswith(".py"):
            continue
        if parts[0].endswith((".dist-info", ".data")):
            continue
        tops.add(parts[0])
    return sorted(tops)


def _stamp_path(name: str) -> Path:
    return WORK_DIR / f"corpus-{name}.json"


def count_lines(root: Path, files: list[str]) -> tuple[int, int]:
    lines = nbytes = 0
    for rel in files:
        data = (root / rel).read_bytes()
        nbytes += len(data)
        lines += data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    return lines, nbytes


def list_py_files(root: Path, top_dirs: list[str] | None = None) -> list[str]:
    """Every ``*.py`` file under ``root`` (or under ``root/<top_dir>``), relative, sorted."""
    bases = [root / d for d in top_dirs] if top_dirs else [root]
    out = []
    for base in bases:
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames.sort()
            for fn in sorted(filenames):
                if fn.endswith(".py"):
                    out.append(os.path.relpath(os.path.join(dirpath, fn), root))
    return out


def ensure_corpus(name: str) -> dict:
    """Download and extract one pinned package; idempotent.  Returns its stamp dict."""
    dist, version = PINS[name]
    stamp_file = _stamp_path(name)
    dest = CORPUS_DIR / name
    wheel = find_wheel(dist, version)
    if wheel and stamp_file.is_file() and dest.is_dir():
        stamp = json.loads(stamp_file.read_text())
        if stamp.get("wheel") == wheel.name:
            return stamp
    wheel = download_wheel(dist, version)
    _log(f"[corpus] extracting .py files of {wheel.name} into {dest}")
    tmp = CORPUS_DIR / f".{name}.tmp"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    with zipfile.ZipFile(wheel) as zf:
        tops = _top_level_packages(zf)
        for info in zf.infolist():
            parts = info.filename.split("/")
            if parts[0] in tops and info.filename.endswith(".py") and not info.is_dir():
                target = tmp / info.filename
                if ".." in parts:
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(info) as src, open(target, "wb") as dst:
                    shutil.copyfileobj(src, dst)
    if dest.exists():
        shutil.rmtree(dest)
    tmp.rename(dest)
    files = list_py_files(dest)
    lines, nbytes = count_lines(dest, files)
    stamp = {
        "name": name, "dist": dist, "version": version, "wheel": wheel.name,
        "top_level": tops, "files": len(files), "lines": lines, "bytes": nbytes,
    }
    stamp_file.parent.mkdir(parents=True, exist_ok=True)
    stamp_file.write_text(json.dumps(stamp, indent=2))
    return stamp


def load_corpus(label: str, names: list[str]) -> Corpus:
    """Ensure each named package is extracted and return them as one corpus rooted at benchmarks/corpus."""
    stamps = [ensure_corpus(n) for n in names]
    files = list_py_files(CORPUS_DIR, names)
    lines, nbytes = count_lines(CORPUS_DIR, files)
    c = Corpus(label=label, root=CORPUS_DIR, files=files, lines=lines, bytes=nbytes,
               top_dirs=list(names), sources=stamps)
    for s in stamps:
        _log(f"[corpus] {s['name']}: {s['dist']}=={s['version']}: {s['files']:,} files, {s['lines']:,} lines")
    _log(f"[corpus] {label}: {len(files):,} files, {lines:,} lines, {nbytes / 1e6:.1f} MB")
    return c


def corpus_from_path(path: Path, label: str | None = None) -> Corpus:
    """Any folder of ``.py`` files as a corpus (no download); used by tests and for ad-hoc trees."""
    path = path.resolve()
    files = list_py_files(path)
    lines, nbytes = count_lines(path, files)
    return Corpus(label=label or path.name, root=path, files=files, lines=lines, bytes=nbytes,
                  top_dirs=sorted({f.split(os.sep)[0] for f in files}),
                  sources=[{"name": path.name, "path": str(path)}])


def _link_tree(src: Path, dst: Path) -> None:
    """Copy a file or a tree, hard-linking where the file system allows (same bytes, no extra disk)."""
    def _copy(s, d):
        try:
            os.link(s, d)
        except OSError:
            shutil.copy2(s, d)
    if src.is_dir():
        shutil.copytree(src, dst, copy_function=_copy, ignore=shutil.ignore_patterns("__pycache__"))
    else:
        _copy(src, dst)


def scaled_copies(base: Corpus, factors=(1, 2, 4), scale_dir: Path = SCALE_DIR) -> list[tuple[int, Corpus]]:
    """``k`` copies of ``base`` under ``scale_dir/x<k>/copy<i>/`` for each factor ``k``.

    Each ``copy<i>/`` gets an empty ``__init__.py`` so the copies are distinct packages
    (``copy0.keras.src...``, ``copy1.keras.src...``), like vendored copies in a monorepo: a
    tool that keys anything on module names must not see the same module k times.
    """
    out = []
    base_set = set(base.files)
    for k in factors:
        root = scale_dir / f"x{k}"
        want = [f"copy{i}" for i in range(k)]
        complete = root / ".complete"
        marker = json.dumps({"layout": 2, "root": str(base.root), "top": base.top_dirs, "files": len(base.files),
                             "bytes": base.bytes, "list": hashlib.sha1("\n".join(base.files).encode()).hexdigest()})
        if not (complete.is_file() and complete.read_text() == marker):
            if root.exists():
                shutil.rmtree(root)
            root.mkdir(parents=True)
            for w in want:
                (root / w).mkdir()
                (root / w / "__init__.py").write_bytes(b"")
                for top in base.top_dirs:
                    _link_tree(base.root / top, root / w / top)
            complete.write_text(marker)
        files = [f for f in list_py_files(root, want)
                 if f.split(os.sep, 1)[1] in base_set or f == os.path.join(f.split(os.sep, 1)[0], "__init__.py")]
        lines, nbytes = count_lines(root, files)
        out.append((k, Corpus(label=f"{base.label} x{k}", root=root, files=files, lines=lines,
                              bytes=nbytes, top_dirs=want, sources=base.sources)))
    return out
