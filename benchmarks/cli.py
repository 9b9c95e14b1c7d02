"""``python -m benchmarks``: the issue-6 benchmark harness."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from benchmarks import corpus as corpus_mod
from benchmarks.harness import run_scaling, run_tools
from benchmarks.report import format_result, format_scaling, machine_info
from benchmarks.tools import ALL_TOOLS, TOOL_ALIASES, build_tools, resolve_tool_keys


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def build_parser() -> argparse.ArgumentParser:
    aliases = ", ".join(k + "=" + "+".join(v) for k, v in TOOL_ALIASES.items())
    p = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Time syncadvisor (cold, warm), ruff, flake8 with and without the TFS plugin, and "
                    "TorchFix on the same files, alternating runs; print medians, ratios to ruff "
                    "--no-cache, peak memory and issue 6's targets.")
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
    p.add_argument("--prepare", action="store_true",
                   help="only download/extract the corpus and install TorchFix, then exit")
    p.add_argument("--json", type=Path, metavar="FILE", help="write all raw numbers to FILE")
    return p


def main(argv: list[str] | None = None) -> int:
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

    out["total_seconds"] = time.perf_counter() - started
    print(f"\n(total harness time {out['total_seconds']:.0f} s)")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=2))
        _log(f"[bench] raw numbers written to {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
