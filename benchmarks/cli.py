"""``python -m benchmarks``: the issue-6 benchmark harness."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from benchmarks import HERE, corpus as corpus_mod
from benchmarks.editor import format_editor, run_editor
from benchmarks.harness import run_scaling, run_tools
from benchmarks.report import format_result, format_scaling, machine_info
from benchmarks.tools import ALL_TOOLS, TOOL_ALIASES, build_tools, resolve_tool_keys


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def build_parser() -> argparse.ArgumentParser:
    aliases = ", ".join(k + "=" + "+".join(v) for k, v in TOOL_ALIASES.items())
    p = argparse.ArgumentParser(
        prog="python -m benchmarks", allow_abbrev=False,
        description="Time syncadvisor (cold, warm), ruff, flake8 with and without the TFS plugin, and "
                    "TorchFix on the same files, alternating runs; print medians, ratios to ruff "
                    "--no-cache, peak memory and the targets.",
        epilog="python -m benchmarks field [--help]: the field benchmark instead: syncadvisor's findings "
               "on pinned real packages against the hand labels in benchmarks/field_labels.toml. "
               "python -m benchmarks blind [--help]: the same on projects chosen blind (issue 37), "
               "dev and held-out parts. "
               "python -m benchmarks server [--help]: the language server's edit latency, memory "
               "and first diagnostics.")
    p.add_argument("--corpus", choices=list(corpus_mod.CORPUS_CHOICES), default="keras+tf_keras",
                   help="which pinned PyPI packages to measure on; 'all' = keras+tf_keras, then tensorflow "
                        "(default: %(default)s)")
    p.add_argument("--corpus-path", type=Path, metavar="DIR",
                   help="measure on the .py files under DIR instead (no download)")
    p.add_argument("--repeats", type=int, default=3, metavar="N", help="timed runs per tool (default: 3)")
    p.add_argument("--warmup", type=int, default=1, metavar="N",
                   help="untimed runs per tool before the timed rounds; TorchFix gets none (default: 1)")
    p.add_argument("--tools", default=None, metavar="LIST",
                   help="comma-separated subset of: " + ", ".join(ALL_TOOLS)
                        + f" (aliases: {aliases}; "
                        "'none' = no tool table, e.g. with --scaling); default: all")
    p.add_argument("--timeout", type=float, default=600.0, metavar="S",
                   help="per-run limit in seconds; a run that exceeds it is reported as '> S s' "
                        "and the tool is not run again (default: 600)")
    p.add_argument("--scaling", action="store_true",
                   help="also time syncadvisor cold on 1x, 2x, 4x copies of the keras+tf_keras corpus "
                        "(or of --corpus-path)")
    p.add_argument("--scaling-factors", default="1,2,4", metavar="LIST", help=argparse.SUPPRESS)
    p.add_argument("--flake8-jobs", type=int, default=2, metavar="N", help="flake8 -j (default: 2)")
    p.add_argument("--editor", action="store_true",
                   help="also time flake8 with and without the TFS plugin on a changed 300-line buffer "
                        "from stdin, as an editor runs it (--repeats calls each, at least 10)")
    p.add_argument("--results", type=Path, default=HERE / "RESULTS.md", metavar="FILE",
                   help="append this run's tables to FILE (default: benchmarks/RESULTS.md)")
    p.add_argument("--no-results", action="store_true", help="append nothing to a results file")
    p.add_argument("--prepare", action="store_true",
                   help="only download/extract the corpus and install TorchFix, then exit")
    p.add_argument("--json", type=Path, metavar="FILE", help="write all raw numbers to FILE")
    return p


def main(argv: list[str] | None = None) -> int:
    rest = sys.argv[1:] if argv is None else list(argv)
    if rest[:1] == ["field"]:
        from benchmarks import field

        return field.main(rest[1:])
    if rest[:1] == ["blind"]:
        from benchmarks import blind

        return blind.main(rest[1:])
    if rest[:1] == ["snapshot"]:
        from benchmarks import snapshot

        return snapshot.main(rest[1:])
    if rest[:1] == ["server"]:
        from benchmarks import server

        return server.main(rest[1:])
    args = build_parser().parse_args(argv)
    started = time.perf_counter()
    if args.repeats < 1:
        _log("--repeats must be at least 1")
        return 2
    if args.tools and args.tools.strip().lower() == "none":
        keys = []
    else:
        try:
            keys = resolve_tool_keys(args.tools)
        except ValueError as e:
            _log(str(e))
            return 2
    if args.scaling and "syncadvisor-cold" not in keys:
        keys_for_build = keys + ["syncadvisor-cold"]
    else:
        keys_for_build = keys

    machine = machine_info()

    if args.corpus_path:
        corpora = [lambda: corpus_mod.corpus_from_path(args.corpus_path)]
    else:
        corpora = [lambda label=label, names=names: corpus_mod.load_corpus(label, names)
                   for label, names in corpus_mod.CORPUS_CHOICES[args.corpus]]

    if args.prepare:
        for make in corpora:
            make()
        if "torchfix" in keys:
            build_tools(["torchfix"], log=_log)
        return 0

    _fresh_bytecode()
    if args.editor:
        keys_for_build = keys_for_build + [k for k in ("flake8", "flake8-tfs") if k not in keys_for_build]
    tools = build_tools(keys_for_build, flake8_jobs=args.flake8_jobs, log=_log)
    table_tools = [t for t in tools if t.key in keys]
    for t in tools:
        _log(f"[tools] {t.key:18s} " + (t.display() if t.available else f"n/a: {t.na_reason}"))

    out: dict = {"machine": machine, "argv": sys.argv[1:] if argv is None else list(argv),
                 "results": [], "scaling": None}
    texts = []
    for make in corpora:
        corpus = make()
        if not table_tools:
            continue
        res = run_tools(corpus, table_tools, repeats=args.repeats, warmup=args.warmup,
                        timeout=args.timeout, log=_log)
        out["results"].append(res)
        text = format_result(res, machine)
        texts.append(text)
        print("\n" + text, flush=True)

    if args.scaling:
        if args.corpus_path:
            base = corpus_mod.corpus_from_path(args.corpus_path)
        else:
            label, names = corpus_mod.CORPUS_CHOICES["keras+tf_keras"][0]
            base = corpus_mod.load_corpus(label, names)
        factors = tuple(int(x) for x in args.scaling_factors.split(","))
        copies = corpus_mod.scaled_copies(base, factors)
        cold = next(t for t in tools if t.key == "syncadvisor-cold")
        sc = run_scaling(base, copies, cold, repeats=args.repeats, warmup=args.warmup,
                         timeout=args.timeout, log=_log)
        out["scaling"] = sc
        text = format_scaling(sc)
        texts.append(text)
        print("\n" + text, flush=True)

    if args.editor:
        by_key = {t.key: t for t in tools}
        ed = run_editor(by_key["flake8"], by_key["flake8-tfs"], calls=max(10, args.repeats),
                        timeout=args.timeout, log=_log)
        out["editor"] = ed
        text = format_editor(ed)
        texts.append(text)
        print("\n" + text, flush=True)

    out["total_seconds"] = time.perf_counter() - started
    print(f"\n(total harness time {out['total_seconds']:.0f} s)")
    if texts and not args.no_results:
        _append_results(args.results, machine, out["argv"], texts, out["total_seconds"])
        _log(f"[bench] tables appended to {args.results}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=2))
        _log(f"[bench] raw numbers written to {args.json}")
    return 0


def _fresh_bytecode() -> None:
    """Every tool's Python modules compiled now: with PYTHONDONTWRITEBYTECODE set, a module
    edited since its .pyc was written would be compiled again in every timed run, which an
    installed tool never does."""
    import os
    import subprocess

    import syncadvisor

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "compileall", "-q",
                    str(Path(syncadvisor.__file__).parent)], env=env, check=False,
                   stdout=subprocess.DEVNULL)


def _append_results(path: Path, machine: dict, argv: list, texts: list, seconds: float) -> None:
    """One section per run, newest last: when, where, the command, the tables."""
    new = not path.exists()
    with open(path, "a", encoding="utf-8") as out:
        if new:
            out.write("# Benchmark results\n\nWritten by `python -m benchmarks` (one section per run, "
                      "newest last; `--no-results` leaves this file alone). Each section names the "
                      "machine and the commit it measured.\n")
        commit = machine.get("git_commit") or "?"
        out.write(f"\n## {machine.get('date_utc', '?')} at {commit}\n\n")
        out.write(f"`python -m benchmarks {' '.join(argv)}` ({seconds:.0f} s)\n\n```\n")
        out.write("\n\n".join(t.strip("\n") for t in texts) + "\n```\n")


if __name__ == "__main__":
    raise SystemExit(main())
