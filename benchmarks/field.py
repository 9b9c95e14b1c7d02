"""``python -m benchmarks field``: syncadvisor's findings on real packages, against hand labels.

Each pinned wheel (``FIELD_PINS``) is downloaded from PyPI into ``benchmarks/.work/wheels``,
unpacked whole (its ``*.dist-info`` included: the wheel's METADATA declares the TensorFlow and
Keras it targets) into a folder of its own, and checked as its own project, with that folder as
the working directory, so every finding's path is relative to the wheel
(``tensorflow_addons/layers/tlu.py``).

The findings are compared with ``benchmarks/field_labels.toml``: one hand-written entry per
finding, saying whether its claim holds (TRUE or FALSE) for the version the package declares
and for how the code is really used, whether a maintainer would change code for it, and why.
A label names its finding by package, path, code and *site*: the stripped text of the
finding's first line and, when several findings of that code in that file start on lines
with the same text, which one in order (``occurrence``). The line number is kept for people
only, so a label survives lines shifting above it.

Exit status: 0 when every finding is labelled and the precision targets are met; 1 when a
finding is unlabelled (someone has to read it) or a target is missed; 2 when the benchmark
could not run (no wheel and no network, an invalid labels file, syncadvisor failed).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from email.parser import Parser
from pathlib import Path

from benchmarks import HERE, REPO_ROOT, WHEELS_DIR, WORK_DIR
from benchmarks.corpus import download_wheel, find_wheel

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - syncadvisor depends on tomli before 3.11
    import tomli as tomllib

# The packages measured: (distribution on PyPI, pinned version). Data, in one place.
FIELD_PINS: list[tuple[str, str]] = [
    ("tensorflow-addons", "0.23.0"),
    ("tensorflow-probability", "0.25.0"),
    ("tensorflow-model-optimization", "0.8.1"),
    ("opennmt-tf", "2.32.0"),
    ("dm-sonnet", "2.0.2"),
    ("tf-agents", "0.19.0"),
    ("keras-hub", "0.32.0"),
    ("keras", "3.15.1"),
    ("tf_keras", "2.21.0"),
]

LABELS_FILE = HERE / "field_labels.toml"
FIELD_DIR = WORK_DIR / "field"

# The targets: the share of labelled findings of a severity whose claim is TRUE.
TARGETS = {"error": 1.0, "warning": 0.9}
SEVERITIES = ("error", "warning", "info")
# The Requires-Dist names that say which TensorFlow/Keras a package targets (shown per package).
TARGET_DISTS = ("tensorflow", "tensorflow-cpu", "tf-keras", "keras", "tf-nightly")


class FieldError(Exception):
    """The benchmark cannot run (exit 2); the message says why and what to do."""


def norm_dist(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


# --- labels ---------------------------------------------------------------------------------

@dataclass
class Label:
    package: str
    path: str
    code: str
    source: str
    occurrence: int
    verdict: bool
    actionable: bool
    reason: str
    line: int | None = None

    @property
    def key(self) -> tuple:
        return (norm_dist(self.package), self.path, self.code, self.source, self.occurrence)


def load_labels(path: Path) -> list[Label]:
    """Every ``[[finding]]`` of a labels file, checked: a malformed entry is a FieldError."""
    if not path.is_file():
        return []
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise FieldError(f"{path}: not valid TOML: {e}") from e
    entries = data.get("finding", [])
    labels: list[Label] = []
    seen: dict[tuple, int] = {}
    for i, e in enumerate(entries, 1):
        where = f"{path.name}: [[finding]] #{i}"
        for k, kind in (("package", str), ("path", str), ("code", str), ("source", str),
                        ("verdict", str), ("actionable", bool), ("reason", str)):
            if not isinstance(e.get(k), kind):
                raise FieldError(f"{where}: `{k}` must be a {kind.__name__} (got {e.get(k)!r})")
        verdict = e["verdict"].strip().upper()
        if verdict not in ("TRUE", "FALSE"):
            raise FieldError(f"{where}: `verdict` must be \"TRUE\" or \"FALSE\" (got {e['verdict']!r})")
        if not e["reason"].strip():
            raise FieldError(f"{where}: `reason` is empty: say why the claim holds or fails")
        occ = e.get("occurrence", 0)
        if not isinstance(occ, int) or occ < 0:
            raise FieldError(f"{where}: `occurrence` must be an integer >= 0 (got {occ!r})")
        lab = Label(package=e["package"], path=e["path"], code=e["code"], source=e["source"].strip(),
                    occurrence=occ, verdict=verdict == "TRUE", actionable=e["actionable"],
                    reason=e["reason"].strip(), line=e.get("line"))
        if lab.key in seen:
            raise FieldError(f"{where}: the same site as entry #{seen[lab.key]} "
                             f"({lab.package} {lab.path} {lab.code} {lab.source!r} #{lab.occurrence})")
        seen[lab.key] = i
        labels.append(lab)
    return labels


# --- findings -------------------------------------------------------------------------------

@dataclass
class Finding:
    package: str
    path: str
    line: int
    column: int
    code: str
    severity: str
    message: str
    source: str = ""
    occurrence: int = 0
    label: Label | None = None

    @property
    def key(self) -> tuple:
        return (norm_dist(self.package), self.path, self.code, self.source, self.occurrence)


def site_keys(findings: list[Finding], root: Path) -> None:
    """Fill each finding's ``source`` (its first line's stripped text) and ``occurrence`` (its
    rank, by position, among findings of the same code in the same file on lines of that text)."""
    lines_of: dict[str, list[str]] = {}
    for f in findings:
        if f.path not in lines_of:
            try:
                lines_of[f.path] = (root / f.path).read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                lines_of[f.path] = []
        lines = lines_of[f.path]
        f.source = lines[f.line - 1].strip() if 0 < f.line <= len(lines) else ""
    counts: Counter = Counter()
    for f in sorted(findings, key=lambda f: (f.path, f.line, f.column, f.code)):
        k = (f.path, f.code, f.source)
        f.occurrence = counts[k]
        counts[k] += 1


def match(findings: list[Finding], labels: list[Label]) -> list[Label]:
    """Attach each finding's label; return the labels no finding matched (stale)."""
    by_key = {lab.key: lab for lab in labels}
    used = set()
    for f in findings:
        lab = by_key.get(f.key)
        if lab is not None:
            f.label = lab
            used.add(lab.key)
    return [lab for lab in labels if lab.key not in used]


# --- wheels ---------------------------------------------------------------------------------

@dataclass
class Package:
    dist: str
    version: str
    root: Path
    requires: list[str] = field(default_factory=list)
    settings: dict[str, str] = field(default_factory=dict)
    files: int = 0
    findings: list[Finding] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)


def ensure_wheel(dist: str, version: str, wheels_dir: Path, offline: bool) -> Path:
    found = find_wheel(dist, version, wheels_dir)
    if found:
        return found
    if offline:
        raise FieldError(f"no {dist}=={version} wheel in {wheels_dir} and --offline: "
                         f"put the wheel there or run without --offline")
    try:
        return download_wheel(dist, version, wheels_dir)
    except (subprocess.CalledProcessError, RuntimeError, OSError) as e:
        raise FieldError(f"could not download {dist}=={version} from PyPI ({e}) and no wheel is cached "
                         f"in {wheels_dir}: run where PyPI is reachable, or copy the wheel there "
                         f"(`pip download --no-deps --only-binary :all: {dist}=={version} -d {wheels_dir}`)"
                         ) from e


def unpack(wheel: Path, dest: Path) -> Path:
    """The whole wheel, dist-info included, in ``dest``, laid out as an installer would
    (``*.data/purelib`` and ``platlib`` at the top); reused when a stamp says it is this wheel."""
    stamp = dest.parent / f"{dest.name}.json"
    st = wheel.stat()
    want = {"wheel": wheel.name, "size": st.st_size, "mtime_ns": st.st_mtime_ns, "layout": 2}
    if dest.is_dir() and stamp.is_file():
        try:
            if json.loads(stamp.read_text()) == want:
                return dest
        except ValueError:
            pass
    tmp = dest.parent / f".{dest.name}.tmp"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    with zipfile.ZipFile(wheel) as zf:
        for info in zf.infolist():
            parts = info.filename.split("/")
            if info.is_dir() or ".." in parts or info.filename.startswith("/"):
                continue
            # An installer puts `<name>.data/purelib/x` and `<name>.data/platlib/x` at `x`.
            if len(parts) > 2 and parts[0].endswith(".data") and parts[1] in ("purelib", "platlib"):
                parts = parts[2:]
            target = tmp.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as src, open(target, "wb") as dst:
                shutil.copyfileobj(src, dst)
    if dest.exists():
        shutil.rmtree(dest)
    tmp.rename(dest)
    stamp.write_text(json.dumps(want))
    return dest


def declared_requirements(root: Path) -> list[str]:
    """The Requires-Dist lines of the unpacked wheel's METADATA that name TensorFlow or Keras."""
    out = []
    for meta in sorted(root.glob("*.dist-info/METADATA")):
        msg = Parser().parsestr(meta.read_text(encoding="utf-8", errors="replace"), headersonly=True)
        for req in msg.get_all("Requires-Dist") or []:
            m = re.match(r"\s*([A-Za-z0-9_.-]+)", req)
            if m and norm_dist(m.group(1)) in TARGET_DISTS:
                out.append(req.strip())
    return out


_DECLARING = re.compile(r"[^\s\"'`(),]*(?:pyproject\.toml|setup\.cfg|setup\.py|requirements[^\s\"'`(),]*\.txt)")


def outside_sources(settings_text: str, root: Path) -> list[str]:
    """Files named in ``--show-settings`` output that declare dependencies and lie outside the
    unpacked wheel: the wheel is then not checked as its own project (the unpack folder sits
    inside this repository, whose pyproject.toml pins TensorFlow for its tests)."""
    out = []
    root = root.resolve()
    for name in _DECLARING.findall(settings_text):
        path = (root / name).resolve()
        if root != path and root not in path.parents and str(path) not in out:
            out.append(str(path))
    return out


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["NO_COLOR"] = "1"
    env.pop("FORCE_COLOR", None)
    return env


def check_package(pkg: Package, python: str = sys.executable, timeout: float = 1800) -> None:
    """Run this checkout's syncadvisor on the unpacked wheel; fill ``findings`` and ``settings``."""
    base = [python, "-m", "syncadvisor", "check"]
    shown = subprocess.run(base + ["--show-settings", "."], cwd=pkg.root, env=_env(), capture_output=True,
                           text=True, timeout=timeout)
    for line in shown.stdout.splitlines():
        m = re.match(r"(target-tensorflow|keras)\s*=\s*(.*)", line)
        if m:
            pkg.settings[m.group(1)] = m.group(2).strip()
    pkg.outside = outside_sources(shown.stdout, pkg.root)
    proc = subprocess.run(base + ["--no-cache", "--format", "json", "."], cwd=pkg.root, env=_env(),
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode not in (0, 1) or "Traceback (most recent call last)" in proc.stderr:
        raise FieldError(f"syncadvisor failed on {pkg.dist}=={pkg.version} (exit {proc.returncode}):\n"
                         + proc.stderr[-3000:])
    try:
        raw = json.loads(proc.stdout or "[]")
    except ValueError as e:
        raise FieldError(f"syncadvisor's JSON output on {pkg.dist} does not parse: {e}") from e
    pkg.findings = [Finding(package=pkg.dist, path=r["path"].replace(os.sep, "/"), line=r["line"],
                            column=r.get("column", 0), code=r["code"], severity=r["severity"],
                            message=r["message"]) for r in raw]
    site_keys(pkg.findings, pkg.root)
    pkg.files = sum(1 for _ in pkg.root.rglob("*.py"))


# --- report ---------------------------------------------------------------------------------

def _pct(num: int, den: int) -> str:
    return f"{100.0 * num / den:.0f}% ({num}/{den})" if den else "n/a (0 labelled)"


@dataclass
class Summary:
    text: str
    unlabelled: int
    targets_met: bool
    stale_true: int


def summarize(packages: list[Package], stale: list[Label]) -> Summary:
    out: list[str] = []
    w = out.append
    allf = [f for p in packages for f in p.findings]

    w("Packages (each checked as its own project; target = what syncadvisor used)")
    w(f"{'package':34s} {'files':>6s} {'err':>4s} {'warn':>4s} {'info':>4s} {'labelled':>8s}  target / declared")
    for p in packages:
        sev = Counter(f.severity for f in p.findings)
        lab = sum(1 for f in p.findings if f.label)
        target = ", ".join(f"{k} {v}" for k, v in p.settings.items()) or "?"
        w(f"{p.dist + ' ' + p.version:34s} {p.files:6d} {sev['error']:4d} {sev['warning']:4d} {sev['info']:4d} "
          f"{lab:4d}/{len(p.findings):<3d}  {target}")
        w(f"{'':34s} {'':6s} {'':4s} {'':4s} {'':4s} {'':8s}  declared: {'; '.join(p.requires) or 'nothing'}")
        for path in p.outside:
            w(f"{'':34s} {'':6s} {'':4s} {'':4s} {'':4s} {'':8s}  WARNING: settings read from {path},"
              " outside the wheel")
    sev = Counter(f.severity for f in allf)
    w(f"{'total':34s} {sum(p.files for p in packages):6d} {sev['error']:4d} {sev['warning']:4d} {sev['info']:4d} "
      f"{sum(1 for f in allf if f.label):4d}/{len(allf):<3d}")

    w("")
    w("By code")
    w(f"{'code':7s} {'severity':8s} {'found':>5s} {'TRUE':>5s} {'FALSE':>5s} {'unlab':>5s} {'action':>6s}  packages")
    for (code, severity) in sorted({(f.code, f.severity) for f in allf}):
        fs = [f for f in allf if f.code == code and f.severity == severity]
        t = sum(1 for f in fs if f.label and f.label.verdict)
        fa = sum(1 for f in fs if f.label and not f.label.verdict)
        a = sum(1 for f in fs if f.label and f.label.actionable)
        pk = Counter(f.package for f in fs)
        w(f"{code:7s} {severity:8s} {len(fs):5d} {t:5d} {fa:5d} {len(fs) - t - fa:5d} {a:6d}  "
          + ", ".join(f"{k} {n}" for k, n in sorted(pk.items())))

    w("")
    w("Precision (TRUE / labelled) and the issue's targets")
    met = True
    for s in SEVERITIES:
        fs = [f for f in allf if f.severity == s and f.label]
        if s not in TARGETS and not fs:
            continue
        t = sum(1 for f in fs if f.label and f.label.verdict)
        line = f"  {s + 's':9s} {_pct(t, len(fs)):18s}"
        if s in TARGETS:
            ok = not fs or t / len(fs) >= TARGETS[s]
            met = met and ok
            line += f"  target >= {TARGETS[s]:.0%}: {'PASS' if ok else 'FAIL'}"
        w(line)
    labelled = [f for f in allf if f.label]
    w(f"  actionable {_pct(sum(1 for f in labelled if f.label and f.label.actionable), len(labelled))}"
      " of labelled findings")

    unl = [f for f in allf if not f.label]
    w("")
    if unl:
        w(f"UNLABELLED: {len(unl)} finding(s) nobody has read yet (the benchmark fails until each is labelled;"
          " --write-unlabelled FILE writes entries to fill in)")
        for f in sorted(unl, key=lambda f: (f.package, f.path, f.line, f.column)):
            w(f"  {f.package}  {f.path}:{f.line}  {f.code} ({f.severity})  site {f.source!r} #{f.occurrence}")
            w(f"      {f.message}")
    else:
        w("Every finding is labelled.")

    stale_true = [lab for lab in stale if lab.verdict]
    if stale:
        w("")
        w(f"STALE LABELS: {len(stale)} labelled site(s) no longer found (they do not fail the benchmark)")
        for lab in stale_true:
            w(f"  !!! LOST TRUE FINDING{' (actionable)' if lab.actionable else ''}: {lab.package}  "
              f"{lab.path}:{lab.line}  {lab.code}  {lab.source!r} #{lab.occurrence}: {lab.reason}")
        for lab in stale:
            if not lab.verdict:
                w(f"  gone (was FALSE): {lab.package}  {lab.path}:{lab.line}  {lab.code}  {lab.source!r}"
                  f" #{lab.occurrence}")
        w("  Delete a gone FALSE label once its finding is meant to be gone; a lost TRUE finding is a"
          " recall loss to explain.")
    return Summary(text="\n".join(out), unlabelled=len(unl), targets_met=met, stale_true=len(stale_true))


def _toml_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def skeleton(findings: list[Finding]) -> str:
    """``[[finding]]`` entries to fill in (verdict, actionable, reason) and append to the labels file."""
    parts = []
    for f in sorted(findings, key=lambda f: (f.package, f.path, f.line, f.column)):
        parts.append("\n".join([
            "[[finding]]",
            f"# {f.severity}: {f.message}",
            f"package = {_toml_str(f.package)}",
            f"path = {_toml_str(f.path)}",
            f"line = {f.line}",
            f"code = {_toml_str(f.code)}",
            f"source = {_toml_str(f.source)}",
            f"occurrence = {f.occurrence}",
            'verdict = ""        # "TRUE" or "FALSE"',
            "actionable = false  # would a maintainer change code for it?",
            'reason = ""',
        ]))
    return "\n\n".join(parts) + ("\n" if parts else "")


# --- command --------------------------------------------------------------------------------

def add_common_arguments(p: argparse.ArgumentParser, names: list[str], labels: Path,
                         work_dir: Path) -> None:
    """The options the field and blind benchmarks share."""
    p.add_argument("--packages", metavar="LIST",
                   help="comma-separated subset of: " + ", ".join(names) + " (default: all)")
    p.add_argument("--labels", type=Path, default=labels, metavar="FILE",
                   help=f"the labels file (default: benchmarks/{labels.name})")
    p.add_argument("--wheels-dir", type=Path, default=WHEELS_DIR, metavar="DIR",
                   help="where wheels are cached and downloaded to "
                        "(default: benchmarks/.work/wheels)")
    p.add_argument("--work-dir", type=Path, default=work_dir, metavar="DIR",
                   help=f"where each wheel is unpacked (default: benchmarks/.work/{work_dir.name})")
    p.add_argument("--offline", action="store_true", help="never download: use only cached wheels")
    p.add_argument("--write-unlabelled", type=Path, metavar="FILE",
                   help="write a [[finding]] entry to fill in for every unlabelled finding to FILE")
    p.add_argument("--json", type=Path, metavar="FILE",
                   help="write every finding with its label to FILE")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks field", allow_abbrev=False,
        description="Check pinned PyPI wheels of real TensorFlow/Keras packages, each as its own project, and "
                    "compare the findings with the hand labels in benchmarks/field_labels.toml: counts by code "
                    "and severity, precision for errors and warnings, the share labelled actionable, every "
                    "unlabelled finding and every stale label. Exit 0: all labelled, targets met; 1: an "
                    "unlabelled finding or a missed target; 2: could not run.")
    add_common_arguments(p, [d for d, _ in FIELD_PINS], LABELS_FILE, FIELD_DIR)
    return p


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def select_pins(pins: list[tuple[str, str]], packages: str | None) -> list[tuple[str, str]]:
    """The pins named in ``--packages`` (all when None); an unknown name is a FieldError."""
    if not packages:
        return list(pins)
    want = [norm_dist(x) for x in packages.split(",") if x.strip()]
    known = {norm_dist(d) for d, _ in pins}
    bad = [x for x in want if x not in known]
    if bad:
        raise FieldError(f"unknown package(s): {', '.join(bad)}; "
                         f"choose from {', '.join(d for d, _ in pins)}")
    return [(d, v) for d, v in pins if norm_dist(d) in want]


def check_pins(pins: list[tuple[str, str]], wheels_dir: Path, work_dir: Path, offline: bool,
               tag: str = "field") -> list[Package]:
    """Get, unpack and check every pinned wheel, in order; a FieldError when one cannot be."""
    packages = []
    for dist, version in pins:
        wheel = ensure_wheel(dist, version, wheels_dir, offline)
        root = unpack(wheel, work_dir / f"{norm_dist(dist)}-{version}")
        packages.append(Package(dist=dist, version=version, root=root,
                                requires=declared_requirements(root)))
    for pkg in packages:
        _log(f"[{tag}] checking {pkg.dist}=={pkg.version} in {pkg.root}")
        check_package(pkg)
    return packages


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        pins = select_pins(FIELD_PINS, args.packages)
        labels = load_labels(args.labels)
        packages = check_pins(pins, args.wheels_dir, args.work_dir, args.offline)
    except FieldError as e:
        _log(f"[field] {e}")
        return 2
    return report(packages, labels, args)


def report(packages: list[Package], labels: list[Label], args: argparse.Namespace,
           tag: str = "field") -> int:
    """Match, print, write the optional files; the exit status."""
    findings = [f for p in packages for f in p.findings]
    checked = {norm_dist(p.dist) for p in packages}
    stale = match(findings, [lab for lab in labels if norm_dist(lab.package) in checked])
    summary = summarize(packages, stale)
    print(summary.text, flush=True)
    unl = [f for f in findings if not f.label]
    if args.write_unlabelled is not None:
        args.write_unlabelled.write_text(skeleton(unl), encoding="utf-8")
        _log(f"[{tag}] {len(unl)} entr{'y' if len(unl) == 1 else 'ies'} to fill in written to "
             f"{args.write_unlabelled}")
    if args.json is not None:
        args.json.write_text(json.dumps([{
            "package": f.package, "path": f.path, "line": f.line, "column": f.column, "code": f.code,
            "severity": f.severity, "message": f.message, "source": f.source, "occurrence": f.occurrence,
            "label": None if not f.label else {"verdict": "TRUE" if f.label.verdict else "FALSE",
                                               "actionable": f.label.actionable, "reason": f.label.reason},
        } for f in findings], indent=2), encoding="utf-8")
    if summary.unlabelled:
        return 1
    return 0 if summary.targets_met else 1
