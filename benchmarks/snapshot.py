"""``python -m benchmarks snapshot``: every finding and fix over a fixed set of trees.

A restructuring of the engine or the model must not change what users see. This takes a
snapshot of it: for each tree (the check fixtures, the project fixtures, the fix and
notebook fixtures, the examples, the runtime snippets, each field benchmark package, and
the installed tensorflow, keras and tf_keras), `syncadvisor check --format json`
and `syncadvisor check --diff --unsafe-fixes`, run in the tree's folder so that paths are
relative, into one file per tree and kind. `--compare A B` prints what differs between
two snapshots, finding by finding (exit 1 when anything does).

    python -m benchmarks snapshot --out /tmp/before
    (change the code)
    python -m benchmarks snapshot --out /tmp/after
    python -m benchmarks snapshot --compare /tmp/before /tmp/after

The field packages are the ones `python -m benchmarks field` unpacked (run it once first);
a tree that is not there is skipped, and said so.
"""
from __future__ import annotations

import argparse
import difflib
import json
import os
import subprocess
import sys
import sysconfig
import time
from pathlib import Path
from typing import Dict, List, Tuple

from benchmarks import REPO_ROOT, WORK_DIR

FIXTURES = REPO_ROOT / "tests" / "fixtures"


def trees() -> List[Tuple[str, Path, List[str]]]:
    """(name, folder to run in, what to check there) of every tree the snapshot covers."""
    found: List[Tuple[str, Path, List[str]]] = [
        ("fixtures-check", FIXTURES / "check", ["."]),
        ("fixtures-fix", FIXTURES / "fix", ["."]),
        ("fixtures-notebooks", FIXTURES / "notebooks", ["."]),
        ("fixtures-targets", FIXTURES / "targets", ["."]),
        ("examples", REPO_ROOT / "examples", ["."]),
        ("snippets", REPO_ROOT / "tests" / "runtime" / "snippets", ["."]),
    ]
    projects = FIXTURES / "projects"
    for project in sorted(p for p in projects.iterdir() if p.is_dir()):
        found.append((f"project-{project.name}", project, ["."]))
    field = WORK_DIR / "field"
    if field.is_dir():
        for package in sorted(p for p in field.iterdir() if p.is_dir()):
            found.append((f"field-{package.name}", package, ["."]))
    site = Path(sysconfig.get_paths()["purelib"])
    for name in ("tensorflow", "keras", "tf_keras"):
        found.append((f"installed-{name}", site, [name]))
    return found


def _run(folder: Path, args: List[str]) -> str:
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    done = subprocess.run([sys.executable, "-m", "syncadvisor", "check", "--no-cache", *args],
                          cwd=folder, env=env, capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise SystemExit(f"snapshot: syncadvisor failed in {folder} ({' '.join(args)}):\n"
                         f"{done.stderr[-2000:]}")
    return done.stdout


def take(out: Path, only: List[str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, folder, paths in trees():
        if only and name not in only:
            continue
        if not all((folder / p).exists() for p in paths):
            print(f"snapshot: skipping {name}: {folder} is not there", file=sys.stderr)
            continue
        start = time.perf_counter()
        report = _run(folder, ["--exit-zero", "--format", "json", *paths])
        (out / f"{name}.json").write_text(report)
        (out / f"{name}.diff").write_text(_run(folder, ["--diff", "--unsafe-fixes", *paths]))
        count = len(json.loads(report or "[]"))
        print(f"snapshot: {name}: {count} findings ({time.perf_counter() - start:.1f} s)",
              file=sys.stderr)


def _findings(path: Path) -> Dict[str, dict]:
    items = json.loads(path.read_text() or "[]")
    keyed: Dict[str, dict] = {}
    for item in items:
        key = f"{item['path']}:{item['line']}:{item['column']} {item['code']}"
        while key in keyed:
            key += "+"
        keyed[key] = item
    return keyed


def compare(a: Path, b: Path) -> int:
    differ = False
    for before in sorted(a.glob("*.json")):
        after = b / before.name
        if not after.exists():
            print(f"{before.stem}: only in {a}")
            differ = True
            continue
        old, new = _findings(before), _findings(after)
        for key in sorted(old.keys() | new.keys()):
            if old.get(key) == new.get(key):
                continue
            differ = True
            if key not in new:
                print(f"{before.stem}: gone: {key}: {old[key]['message']}")
            elif key not in old:
                print(f"{before.stem}: new: {key}: {new[key]['message']}")
            else:
                print(f"{before.stem}: changed: {key}")
                for field in sorted(old[key].keys() | new[key].keys()):
                    if old[key].get(field) != new[key].get(field):
                        print(f"    {field}: {json.dumps(old[key].get(field))}\n"
                              f"    {' ' * len(field)}  {json.dumps(new[key].get(field))}")
        diff_before, diff_after = before.with_suffix(".diff"), after.with_suffix(".diff")
        if diff_after.exists() and diff_before.read_text() != diff_after.read_text():
            differ = True
            print(f"{before.stem}: --diff output differs:")
            sys.stdout.writelines(difflib.unified_diff(
                diff_before.read_text().splitlines(True), diff_after.read_text().splitlines(True),
                str(diff_before), str(diff_after), n=1))
    differ = compare_facts(a, b) or differ
    print("snapshots differ" if differ else "snapshots are identical")
    return 1 if differ else 0


def main(argv: List[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks snapshot", allow_abbrev=False,
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, metavar="DIR", help="write a snapshot into DIR")
    p.add_argument("--only", metavar="NAMES", default="",
                   help="a comma-separated list of tree names to snapshot (default: all)")
    p.add_argument("--facts", action="store_true",
                   help="also dump the linked facts the rules read (sites, contexts, updates, "
                        "reads, holders) of each tree")
    p.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"),
                   help="print what differs between snapshots A and B")
    args = p.parse_args(argv)
    if args.compare:
        return compare(*args.compare)
    if args.out is None:
        p.error("give --out DIR or --compare A B")
    only = [n for n in args.only.split(",") if n]
    take(args.out, only)
    if args.facts:
        take_facts(args.out, only)
    return 0


# --- linked facts ----------------------------------------------------------------------
# Findings are few on most real code; the facts the rules read are many. A dump of them
# (every variable site with its settings, contexts, updates, reads and holder) guards a
# change to the linker far more closely than the findings do.

FACTS_SCRIPT = r'''
import os, sys
from syncadvisor.config import Configuration
from syncadvisor.engine import Run
from syncadvisor.files import discover

def key(x):
    return repr(x)

def dump_where(w):
    at = f"{w.at[0]}:{w.at[1].line}:{w.at[1].column}" if w.at else "-"
    return f"{w.kind}|{w.via}|{w.strategy!r}|{at}"

conf = Configuration()
run = Run(conf)
for path in discover(sys.argv[1:], conf):
    run.add_file(path)
out = []
for linked in run.linked_files():
    project = linked.project
    for site in linked.sites:
        out.append(f"SITE {site.path}:{site.call.span.line}:{site.call.span.column} "
                   f"{site.api.family}/{site.api.title} sync={site.sync.member}/{site.sync.form}"
                   f"/{site.sync.creator is not None} agg={site.agg.member}/{site.agg.form} "
                   f"trainable={site.trainable} dtype={site.dtype} target={site.call.target}")
        for c in sorted(map(key, site.contexts)):
            out.append("  CTX " + c)
        out.append(f"  HOLDER {project.holder(site)}")
        for u in sorted(site.updates, key=lambda u: (u.path, u.span.line, u.span.column)):
            out.append(f"  UPDATE {u.path}:{u.span.line}:{u.span.column} {u.method} "
                       f"{u.value_kind} acc={u.accumulates} fs={u.function_style} "
                       f"src={u.source!r} tests={[t.text for t in u.tests]}")
            for w in sorted(map(dump_where, u.where)):
                out.append("    WHERE " + w)
            for w in sorted(u.in_replica(), key=dump_where):
                hops = getattr(project, "replica", project.usage).call_path(w, u.function)
                out.append("    PATH " + " > ".join(f"{h.caller}@{h.path}:{h.span.line}->"
                                                     f"{h.callee}" for h in hops))
            for c in sorted(map(key, u.contexts)):
                out.append("    UCTX " + c)
        for r in sorted(site.reads, key=lambda r: (r.path, r.span.line, r.span.column, r.kind)):
            out.append(f"  READ {r.path}:{r.span.line}:{r.span.column} {r.kind} "
                       + " ".join(sorted(map(dump_where, r.where))))
sys.stdout.write("\n".join(out) + "\n")
'''


def take_facts(out: Path, only: List[str]) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    for name, folder, paths in trees():
        if only and name not in only:
            continue
        if not all((folder / p).exists() for p in paths):
            continue
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", FACTS_SCRIPT, *paths], cwd=folder,
                              env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"snapshot: the facts of {name} failed:\n{done.stderr[-3000:]}")
        (out / f"{name}.facts").write_text(done.stdout)
        print(f"snapshot: {name}: {done.stdout.count('SITE ')} sites "
              f"({time.perf_counter() - start:.1f} s)", file=sys.stderr)


def compare_facts(a: Path, b: Path) -> bool:
    differ = False
    for before in sorted(a.glob("*.facts")):
        after = b / before.name
        if after.exists() and before.read_text() != after.read_text():
            differ = True
            print(f"{before.stem}: linked facts differ:")
            sys.stdout.writelines(list(difflib.unified_diff(
                before.read_text().splitlines(True), after.read_text().splitlines(True),
                str(before), str(after), n=2))[:400])
    return differ
