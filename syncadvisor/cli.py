"""The `syncadvisor` command: argument parsing and exit codes, no analysis.

Exit codes (as ruff): 0 nothing found (or --exit-zero), 1 findings remain (a missing
path is one: TFS900, as ruff's E902), 2 bad usage, a bad config or an internal error.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .records import replace
from . import __version__
from .cache import FOLDER, Cache, default_directory
from .targets import NO_PROJECT as NO_TARGET
from .config import (Configuration, ConfigError, Selection, Settings, config_options,
                     settings_toml, validate_codes, with_table)
from .engine import FixOutcome, Run, RunResult
from .files import (MissingPath, UnreadableSource, discover, encode_source, split_missing,
                    tidy_path)
from .fixes import WriteError, unified_diff, write_fixed
from .inputs import Input, load_input, text_input
from .notebook import is_notebook
from .report import FORMATTERS, TEXT_FORMATS, Options, style, text as text_report
from .report.source import Sources
from .rules import all_rules, rules_by_code

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class UsageError(Exception):
    pass


def _jobs_option(value: str) -> int:
    try:
        jobs = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
    if jobs < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return jobs


def _codes_option(value: str) -> List[str]:
    return [c.strip() for c in value.split(",") if c.strip()]


def build_parser() -> argparse.ArgumentParser:
    # allow_abbrev=False on every parser: argparse would otherwise take `--output json` as
    # `--output-file json` and write the report to a file named `json` (ruff never
    # matches an option by prefix).
    parser = argparse.ArgumentParser(
        prog="syncadvisor", allow_abbrev=False,
        description="Find wrong tf.Variable synchronization/aggregation choices before run time.")
    parser.add_argument("-V", "--version", action="version", version=f"syncadvisor {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = sub.add_parser("check", allow_abbrev=False,
                           help="check files and folders (default: .)")
    check.add_argument("paths", nargs="*", metavar="PATH",
                       help="files, folders, or - for standard input")
    check.add_argument("--select", type=_codes_option, metavar="CODES",
                       help="only these codes or prefixes (comma-separated)")
    check.add_argument("--ignore", type=_codes_option, metavar="CODES", help="skip these")
    check.add_argument("--extend-select", type=_codes_option, metavar="CODES",
                       help="add these to the selection")
    check.add_argument("--output-format", "--format", dest="format", choices=sorted(FORMATTERS),
                       default="full", metavar="FORMAT",
                       help="full (default: each finding with its source lines and fix), "
                            "concise (one line each; text is the same), json, json-lines (one "
                            "JSON object a line), sarif (GitHub code scanning), github "
                            "(workflow annotations), gitlab (GitLab Code Quality), junit (JUnit "
                            "XML), pylint (path:line: [CODE] message); full and concise are "
                            "coloured on a terminal (NO_COLOR=1: never, FORCE_COLOR=1: always)")
    check.add_argument("--fix", action="store_true", help="apply safe fixes, in place")
    check.add_argument("--unsafe-fixes", action="store_true",
                       help="with --fix or --diff: apply unsafe fixes too (and count them "
                            "as fixable in the report)")
    check.add_argument("--show-fixes", action="store_true",
                       help="list the fixes applied (with --fix), or that --fix would apply, "
                            "per file and code")
    check.add_argument("--diff", action="store_true",
                       help="print what --fix would change as a unified diff; write nothing")
    check.add_argument("--add-noqa", action="store_true",
                       help="add a `# noqa: CODE` comment for every finding, in place")
    check.add_argument("--watch", action="store_true",
                       help="check again whenever a checked file changes (Ctrl-C stops)")
    check.add_argument("--profile", metavar="PROFILE.json",
                       help="read findings beside a saved profile (`syncadvisor profile --run "
                            "... --save PROFILE.json`): a finding on a measured site carries "
                            "the measurement, and one the measurement contradicts is dropped")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even with findings")
    check.add_argument("--quiet", "-q", action="store_true",
                       help="print the findings and nothing else: no summary line, no "
                            "warnings; with --fix, nothing when no finding remains")
    check.add_argument("--output-file", "-o", metavar="FILE",
                       help="write the report to FILE instead of standard output (any "
                            "format; never coloured)")
    check.add_argument("--statistics", action="store_true",
                       help="print the number of findings per code instead of the findings "
                            "(with --output-format json: a JSON array)")
    check.add_argument("--no-cache", action="store_true",
                       help=f"do not read or write the cache ({FOLDER}/)")
    check.add_argument("--jobs", "-j", type=_jobs_option, default=os.cpu_count() or 1,
                       metavar="N", help="worker processes (default: the CPU count)")
    check.add_argument("--stdin-filename", metavar="NAME",
                       help="the name to report (and match config against) for standard input")
    _add_configuration_arguments(check)

    rules = sub.add_parser("rules", allow_abbrev=False, help="list every rule")
    rules.add_argument("--output-format", "--format", dest="format",
                       choices=("text", "json", "markdown"), default="text",
                       help="text (default), json, markdown (the table in README.md)")

    explain = sub.add_parser("explain", allow_abbrev=False,
                             help="what a rule checks, why, and how it fixes")
    explain.add_argument("code", metavar="CODE")

    server = sub.add_parser(
        "server", allow_abbrev=False,
        help="a language server over standard input and output, for editors "
             "(needs `pip install 'syncadvisor[server]'`)")
    server.add_argument("--jobs", "-j", type=_jobs_option, default=None, metavar="N",
                        help="worker processes that index the workspace (default: the CPU "
                             "count)")

    from .profile import cli as profile_cli  # argument definitions only: no TensorFlow

    profile = sub.add_parser(
        "profile", allow_abbrev=False,
        help="measure each synchronization/aggregation choice on the devices at hand "
             "(needs `pip install 'syncadvisor[profile]'`, or `pip install "
             "'.[profile]'` from a checkout)")
    profile_cli.add_arguments(profile)
    for command in sub.choices.values():
        command.set_defaults(command_parser=command)
    return parser


def _add_configuration_arguments(check: argparse.ArgumentParser) -> None:
    """`check`'s options about which settings and files apply."""
    # The metavar is ruff's: "KEY=VALUE" invited `--config assume-strategy=mirrored`, which
    # is not TOML (the value is a bare word).
    check.add_argument("--config", action="append", default=[], metavar="CONFIG_OPTION",
                       help="a config file (pyproject.toml or syncadvisor.toml) to use for "
                            "every file instead of each file's own, or a TOML `key = value` "
                            "that sets one key for every file, a string quoted inside the "
                            "shell's quotes: --config \"assume-strategy = 'mirrored'\" "
                            "(repeatable)")
    check.add_argument("--show-settings", action="store_true",
                       help="print the settings in force for the first file (or PATH) and the "
                            "config file they come from; check nothing")
    check.add_argument("--verbose", "-v", action="store_true",
                       help="say on standard error, once per project, which TensorFlow and "
                            "Keras the check targets and which declaration says so")
    check.add_argument("--show-files", action="store_true",
                       help="print the files that would be checked, one a line; check nothing")
    check.add_argument("--force-exclude", action="store_true",
                       help="apply the excludes to paths named here too (the default ones: "
                            ".venv, build, ...; a config's own always apply)")


def _parse_args(parser: argparse.ArgumentParser,
                argv: Optional[Sequence[str]]) -> argparse.Namespace:
    """`parser.parse_args(argv)`, except that an unknown option is reported with the usage
    of the command it was given to (argparse would print the top level's)."""
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        owner = getattr(args, "command_parser", None) or parser
        owner.error(f"unrecognized arguments: {' '.join(unknown)}")
    return args


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = _parse_args(parser, argv)
    if argv is None and args.command == "check" and not args.watch:
        # The command's own process, which ends with the run: the cycle collector
        # would only scan every model again to free a few cycles, and so would freeing
        # every object one by one at exit, or as the run's functions return (see
        # `_HELD`): skipped, once the report is written (everything else the run
        # writes is closed by then).
        gc.disable()
        args.ends_process = True
        code = _command(parser, args)
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (BrokenPipeError, OSError):
            code = EXIT_ERROR
        os._exit(code)
    return _command(parser, args)


def _command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    try:
        if args.command == "check":
            return _check(args)
        if args.command == "rules":
            return _rules(args)
        if args.command == "explain":
            return _explain(args)
        if args.command == "server":
            from .server import main as server_main

            return server_main(args.jobs)
        if args.command == "profile":
            from .profile import cli as profile_cli

            return profile_cli.run(args)
        parser.print_help()
        return EXIT_ERROR
    except (ConfigError, UsageError) as exc:
        print(f"syncadvisor: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("syncadvisor: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_ERROR


def _configuration(args: argparse.Namespace) -> Configuration:
    """Each file's settings: its own config file's (or --config's), changed by the
    command line's options."""
    config_file, table = config_options(args.config)
    changes: Dict[str, Any] = {}
    selection = _selection(args)
    if selection is not None:
        changes["overrides"] = (selection,)
    if args.force_exclude:
        changes["force_exclude"] = True

    def adjust(settings: Settings) -> Settings:
        return replace(with_table(settings, table) if table else settings, **changes)

    return Configuration(config_file, adjust if table or changes else None)


def _selection(args: argparse.Namespace) -> Optional[Selection]:
    """--select, --extend-select and --ignore, as ruff applies them: after the config's
    selection, so --select replaces the config's and the other two change it."""
    codes: Dict[str, Any] = {}
    for option in ("select", "extend_select", "ignore"):
        value = getattr(args, option)
        if value is not None:
            codes[option] = tuple(validate_codes(value, f"--{option.replace('_', '-')}"))
    if not codes:
        return None
    return codes.get("select"), codes.get("extend_select", ()), codes.get("ignore", ())


# What a run holds (every file's model), kept here when the process ends with the run
# (`main`), so that it is not freed object by object as `_check` returns.
_HELD: List[object] = []


def _hold(args: argparse.Namespace, value: object) -> None:
    if getattr(args, "ends_process", False):
        _HELD.append(value)


def _paths(args: argparse.Namespace) -> List[str]:
    """What to check: the paths given; with none, standard input where --stdin-filename
    names it (as ruff reads it), else the current folder."""
    if args.paths:
        return list(args.paths)
    return ["-"] if args.stdin_filename else ["."]


def _show(args: argparse.Namespace, configuration: Configuration, paths: List[str]) -> int:
    """--show-files and --show-settings: what a check would look at, and under what."""
    if paths == ["-"]:
        name = tidy_path(args.stdin_filename) if args.stdin_filename else "-"
        files = [] if configuration.for_path(name).is_excluded(name) else [name]
    else:
        try:
            files = list(discover(paths, configuration))
        except MissingPath as exc:
            raise UsageError(f"{exc}: no such file or directory") from None
    if args.show_files:
        sys.stdout.write("".join(f"{path}\n" for path in sorted(files)))
    if args.show_settings:
        path = files[0] if files else tidy_path(paths[0])
        settings = configuration.for_folder(path) if os.path.isdir(path) \
            else configuration.for_path(path)
        sys.stdout.write(f"Settings for: {path}\n"
                         f"Config file: {settings.source or 'none (the defaults)'}\n"
                         f"Target: {settings.target_summary()}\n\n")
        sys.stdout.write(settings_toml(settings, None if os.path.isdir(path) else path))
    return EXIT_CLEAN


def _check(args: argparse.Namespace) -> int:
    if getattr(args, "watch", False):
        return _watch(args)
    configuration = _configuration(args)
    paths = _paths(args)
    if args.show_files or args.show_settings:
        return _show(args, configuration, paths)
    _check_add_noqa_usage(args)
    fixing = args.fix or args.diff or getattr(args, "add_noqa", False)
    if getattr(args, "profile", None) and fixing:
        raise UsageError("--profile reads a report beside measurements: it cannot be combined "
                         "with --fix, --diff or --add-noqa")
    stdin = "-" in paths
    if stdin:
        if len(paths) > 1:
            raise UsageError("`-` (standard input) cannot be combined with other paths")
        name = tidy_path(args.stdin_filename) if args.stdin_filename else "-"
        settings = configuration.for_path(name)
        run = Run(settings, jobs=args.jobs)
        _hold(args, run)
        data = sys.stdin.buffer.read()
        if args.stdin_filename and settings.is_excluded(name):
            if args.fix:
                sys.stdout.buffer.write(data)
            return EXIT_CLEAN
        try:
            load_input(name, data).text  # noqa: B018 - decoding is the check
        except UnreadableSource as exc:
            raise UsageError(f"standard input: {exc}") from None
        run.add_file(name, data)
        _say_targets(args, [settings])
    else:
        present, missing = split_missing(paths)
        files = list(discover(present, configuration))
        if not files and not missing and not args.quiet:
            print("syncadvisor: warning: no Python files found under the given paths",
                  file=sys.stderr)
        cache = None
        if not args.no_cache:  # in the project of the first path
            first = paths[0]
            settings = configuration.for_folder(first) if os.path.isdir(first) \
                else configuration.for_path(first)
            cache = Cache(default_directory(settings.root))
        run = Run(configuration, jobs=args.jobs, cache=cache, cache_runs=not fixing)
        _hold(args, run)
        for path in files:
            run.add_file(path)
        for path in missing:
            run.add_missing(path)
        _say_targets(args, [configuration.for_path(path) for path in files])
    if getattr(args, "add_noqa", False):
        return _add_noqa(run)
    if fixing:
        return _fix(args, run, stdin)
    result = run.check()
    if args.profile:
        result = _with_profile(args, result)
    return _report(args, result, sources=_sources(run))


def _with_profile(args: argparse.Namespace, result: RunResult) -> RunResult:
    """--profile: the findings judged by the saved measurements; the count on stderr."""
    from . import measured

    try:
        sites = measured.load(args.profile)
    except measured.ProfileUnreadable as exc:
        raise UsageError(str(exc)) from None
    applied = measured.apply(result.findings, sites)
    if not args.quiet:
        print(f"syncadvisor: {measured.summary(applied, args.profile)}", file=sys.stderr)
        for line in measured.report(applied):
            print(f"  {line}", file=sys.stderr)
    return replace(result, findings=applied.findings)


def _say_targets(args: argparse.Namespace, each: List[Settings]) -> None:
    """--verbose: the target of each project checked (and where it comes from), once."""
    if not getattr(args, "verbose", False):
        return
    said = set()
    for settings in each:
        line = settings.target_summary()
        if line not in said:
            said.add(line)
            print(f"syncadvisor: target {line}", file=sys.stderr)


def _sources(run: Run, changed: Optional[Dict[str, str]] = None) -> Sources:
    """The lines a report shows: the texts the run analysed, or a fixed file's new text
    (`changed`: path -> the file's new content, a notebook's JSON)."""
    def load(path: str) -> Optional[Input]:
        if changed is not None and path in changed:
            new = changed[path]
            return Input(path, new.encode("utf-8", "surrogatepass")) if is_notebook(path) \
                else text_input(path, new)
        return run.inputs.get(path)

    return Sources(load)


def _report(args: argparse.Namespace, run: RunResult, fixed: int = 0, out=None,
            sources: Optional[Sources] = None,
            fixes: Optional[text_report.FixCounts] = None) -> int:
    """Write the report; `fixed` and `fixes` (for --show-fixes) say what --fix fixed."""
    if args.output_file:
        with _output_file(args.output_file) as file:
            return _write_report(args, run, fixed, file, sources, False, fixes)
    out = out or sys.stdout
    # Colour only in the text formats, and only where `style.wanted` says (a terminal,
    # or FORCE_COLOR); JSON, SARIF and the rest never carry escape codes.
    colour = args.format in TEXT_FORMATS and style.wanted(out)
    return _write_report(args, run, fixed, out, sources, colour, fixes)


def _output_file(path: str):
    """--output-file: the file, made with its folder; "\n" ends lines on every platform.
    A report in a file never has colour."""
    try:
        folder = os.path.dirname(path)
        if folder:
            os.makedirs(folder, exist_ok=True)
        return open(path, "w", encoding="utf-8", newline="")
    except OSError as exc:
        raise UsageError(f"cannot write the report to {path}: {exc.strerror or exc}") from None


def _write_report(args: argparse.Namespace, run: RunResult, fixed: int, out, sources,
                  colour: bool, fixes: Optional[text_report.FixCounts]) -> int:
    findings = run.findings
    options = Options(style=style.Style(colour), unsafe_fixes=args.unsafe_fixes, sources=sources)
    if args.statistics:
        _statistics(args, findings, out, options)
    else:
        FORMATTERS[args.format](findings, out, options)
    if args.show_fixes and args.format in TEXT_FORMATS and not args.quiet:
        if args.format != "full" and findings and not args.statistics:
            out.write("\n")  # (full's blocks end with a blank line)
        if args.fix:
            text_report.show_fixes(out, "Fixed", fixes or {}, options.style)
        else:
            text_report.show_fixes(out, "Would fix",
                                   text_report.would_fix(findings, args.unsafe_fixes),
                                   options.style)
    if args.format in TEXT_FORMATS and not args.quiet:
        out.write(text_report.summary(findings, fixed, not args.unsafe_fixes) + "\n")
    if run.internal_error:
        return EXIT_ERROR
    if findings and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _statistics(args: argparse.Namespace, findings, out, options: Options) -> None:
    """--statistics: the counts per code instead of the findings; a JSON array with
    --format json (as ruff), one object a line with json-lines, else the table."""
    if args.format == "json":
        json.dump(text_report.statistics_rows(findings, args.unsafe_fixes), out, indent=2)
        out.write("\n")
    elif args.format == "json-lines":
        for row in text_report.statistics_rows(findings, args.unsafe_fixes):
            out.write(json.dumps(row, separators=(",", ":")) + "\n")
    else:
        text_report.statistics(findings, out, args.unsafe_fixes, options.style)


def _fix(args: argparse.Namespace, run: Run, stdin: bool) -> int:
    before = run.check().findings if args.show_fixes and not args.diff else None
    outcome = run.fix(args.unsafe_fixes)
    fixes = None
    if before is not None:
        fixes = text_report.were_fixed(before, outcome.run.findings, outcome.files,
                                       args.unsafe_fixes)
    for path, why in outcome.refused.items():
        print(f"syncadvisor: error: {path}: not fixed, left unchanged: {why}", file=sys.stderr)
    _print_reverted(outcome)
    new_files = outcome.files
    if args.diff:
        for path in sorted(new_files):
            sys.stdout.write(unified_diff(path, run.inputs[path].source.text, new_files[path]))
        n = outcome.applied
        if not args.quiet:
            print(f"Would fix {n} finding{'s' if n != 1 else ''} in {len(new_files)} "
                  f"file{'s' if len(new_files) != 1 else ''}.", file=sys.stderr)
        return EXIT_FINDINGS if new_files and not args.exit_zero else EXIT_CLEAN
    if stdin:
        name = next(iter(run.inputs))
        text = new_files.get(name, run.inputs[name].source.text)
        sys.stdout.buffer.write(encode_source(run.inputs[name].source, text))
        sys.stdout.flush()
        return _report(args, outcome.run, outcome.applied, out=sys.stderr,
                       sources=_sources(run, new_files), fixes=fixes)
    try:
        write_fixed(new_files, {path: run.inputs[path].source for path in new_files})
    except WriteError as exc:  # those files are as they were; the others are fixed
        written = {path: codes for path, codes in (fixes or {}).items()
                   if path not in exc.failures}
        _report(args, outcome.run, outcome.applied, sources=_sources(run, new_files),
                fixes=written)
        for path, why in exc.failures.items():
            print(f"syncadvisor: error: {path}: fix not written, the file is unchanged: {why}",
                  file=sys.stderr)
        return EXIT_ERROR
    return _report(args, outcome.run, outcome.applied, sources=_sources(run, new_files),
                   fixes=fixes)


def _print_reverted(outcome: FixOutcome) -> None:
    """Each finding whose fix was held back because it would bring a new finding (as ruff
    says when it reverts a fix): on stderr, so that the report itself stays as it is."""
    for finding, introduced in outcome.reverted:
        cell = f"cell {introduced.cell}:" if introduced.cell is not None else ""
        print(f"syncadvisor: warning: {text_report.location(finding)}: {finding.code} fix not "
              f"applied: it would introduce {introduced.code} ({introduced.name}) at "
              f"{cell}{introduced.line}:{introduced.column}", file=sys.stderr)


def _check_add_noqa_usage(args: argparse.Namespace) -> None:
    if not getattr(args, "add_noqa", False):
        return
    for option, given in (("--fix", args.fix), ("--diff", args.diff)):
        if given:
            raise UsageError(f"--add-noqa cannot be combined with {option}")
    if "-" in args.paths:
        raise UsageError("--add-noqa writes files: it cannot read standard input")


def _add_noqa(run: Run) -> int:
    """Write a `# noqa: CODE` comment for every finding (as `ruff check --add-noqa`):
    exit 0, and the count on stderr."""
    outcome = run.add_noqa()
    for path, why in outcome.refused.items():
        print(f"syncadvisor: error: {path}: no noqa comment added, left unchanged: {why}",
              file=sys.stderr)
    for finding in outcome.cannot:
        print(f"syncadvisor: warning: {text_report.location(finding)}: {finding.code} cannot be "
              "suppressed: a string in its line reads as a noqa comment first", file=sys.stderr)
    try:
        write_fixed(outcome.files, {path: run.inputs[path].source for path in outcome.files})
    except WriteError as exc:
        for path, why in exc.failures.items():
            print(f"syncadvisor: error: {path}: not written, the file is unchanged: {why}",
                  file=sys.stderr)
        return EXIT_ERROR
    n = outcome.added
    print(f"Added {n} noqa directive{'s' if n != 1 else ''}.", file=sys.stderr)
    return EXIT_ERROR if outcome.refused else EXIT_CLEAN


# How often `--watch` looks at the checked files, in seconds.
WATCH_POLL = 0.5
_CLEAR_SCREEN = "\x1b[2J\x1b[3J\x1b[H"


def _watch(args: argparse.Namespace) -> int:
    """Check, then check again whenever a checked file changes, a Python file appears in a
    checked folder, or the configuration changes (as `ruff check --watch`, by polling
    modification times and sizes); Ctrl-C ends it with exit 0."""
    for option, given in (("--fix", args.fix), ("--diff", args.diff),
                          ("--add-noqa", args.add_noqa)):
        if given:
            raise UsageError(f"--watch cannot be combined with {option}")
    if "-" in args.paths:
        raise UsageError("--watch cannot read standard input")
    once = argparse.Namespace(**vars(args))
    once.watch = False
    message = "Starting linter in watch mode..."
    first = True
    try:
        while True:
            before = _watched(once)
            if sys.stdout.isatty():
                sys.stdout.write(_CLEAR_SCREEN)
            print(f"[{time.strftime('%Y-%m-%d %H:%M:%S')}] {message}", flush=True)
            try:
                _check(once)
            except (ConfigError, UsageError) as exc:
                if first:
                    raise
                print(f"syncadvisor: error: {exc}", file=sys.stderr, flush=True)
            first = False
            print(f"[{time.strftime('%Y-%m-%d %H:%M:%S')}] Watching for file changes.",
                  flush=True)
            now = before
            while now == before:
                time.sleep(WATCH_POLL)
                now = _watched(once)
            for _ in range(5):  # let an editor finish writing before checking
                time.sleep(WATCH_POLL)
                settled, now = now, _watched(once)
                if now == settled:
                    break
            message = "File change detected..."
    except KeyboardInterrupt:
        return EXIT_CLEAN


def _watched(args: argparse.Namespace) -> Tuple[object, ...]:
    """What `--watch` compares: the size and modification time of every file the check
    would read (found again each time, so new ones count) and of each file's config file."""
    try:
        configuration = _configuration(args)  # afresh: a config file may come or go
        present, missing = split_missing(args.paths or ["."])
        files = list(discover(present, configuration))
        configs = sorted({source for source in (configuration.for_path(f).source
                                                for f in files) if source}
                         | {path for f in files
                            for path in (configuration.for_path(f).target or NO_TARGET).files})
    except (ConfigError, MissingPath) as exc:
        return (str(exc),)
    state: List[object] = []
    for path in files + missing + configs:  # (a missing path: until it appears)
        try:
            info = os.stat(path)
        except OSError:
            state.append((path, None))
        else:
            state.append((path, info.st_mtime_ns, info.st_size))
    return tuple(state)


def _rules(args: argparse.Namespace) -> int:
    rules = all_rules()
    if args.format == "json":
        data = [{"code": r.code, "name": r.name, "severity": r.severity, "summary": r.summary,
                 "fix": r.fix_availability} for r in rules]
        json.dump(data, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return EXIT_CLEAN
    if args.format == "markdown":
        from .rules.docs import rules_table

        sys.stdout.write(rules_table(rules))
        return EXIT_CLEAN
    width = max(len(r.name) for r in rules)
    for r in rules:
        marks = {"safe": "[*]", "sometimes": "[*]", "unsafe": "[~]"}
        fix = marks.get(r.fix_availability or "", "   ")
        sys.stdout.write(f"{r.code}  {fix}  {r.name:<{width}}  {r.severity:<7}  {r.summary}\n")
    sys.stdout.write("\n[*] has a safe fix (sometimes only), [~] has an unsafe fix\n")
    return EXIT_CLEAN


def _explain(args: argparse.Namespace) -> int:
    code = args.code.strip().upper()
    rule = rules_by_code().get(code)
    if rule is None:
        raise UsageError(f"unknown rule code `{args.code}` (run `syncadvisor rules` for the list)")
    sys.stdout.write(f"{rule.code} {rule.name} ({rule.severity})\n\n{rule.summary}\n\n")
    sys.stdout.write(rule.documentation() + "\n")
    return EXIT_CLEAN


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
