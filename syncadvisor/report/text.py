"""`--format concise`: `path:line:col: CODE [*] severity: message`, one line a finding;
the summary line and the statistics table that the text formats end with."""
from __future__ import annotations

from collections import Counter
from typing import Dict, Iterable, List, TextIO

from ..findings import SAFE, SEVERITIES, UNSAFE, Finding
from .options import DEFAULT, Options
from .style import PLAIN, Style


def location(f: Finding) -> str:
    cell = f"cell {f.cell}:" if f.cell is not None else ""
    return f"{f.path}:{cell}{f.line}:{f.column}"


def line(f: Finding, style: Style = PLAIN) -> str:
    """A finding's one line (without its newline); also `--format full`'s header."""
    mark = " [*]" if f.fix is not None and f.fix.applicability == SAFE else ""
    if not style.colour:
        return f"{location(f)}: {f.code}{mark} {f.severity}: {f.message}"
    colon = style.punct(":")
    cell = f"cell {f.cell}{colon}" if f.cell is not None else ""
    if mark:
        mark = f" [{style.fixable('*')}]"
    return (f"{style.path(f.path)}{colon}{cell}{f.line}{colon}{f.column}{colon} "
            f"{style.code(f.code)}{mark} {style.severity(f.severity)}: {f.message}")


def write(findings: List[Finding], out: TextIO, options: Options = DEFAULT) -> None:
    style = options.style
    out.write("".join(line(f, style) + "\n" for f in findings))


def summary(findings: List[Finding], fixed: int = 0, unsafe_hidden: bool = True) -> str:
    """The last line: what remains, by severity, and how many of those `--fix` would fix
    with the flags given (`unsafe_hidden`: without --unsafe-fixes, so the unsafe fixes
    are counted apart, as "more with --unsafe-fixes")."""
    if not findings and not fixed:
        return "All checks passed."
    parts = []
    n = len(findings)
    if n:
        by_severity = Counter(f.severity for f in findings)
        detail = ", ".join(f"{c} {s}{'s' if c != 1 else ''}" for s, c in
                           sorted(by_severity.items(), key=lambda kv: SEVERITIES.index(kv[0])))
        parts.append(f"{n} finding{'s' if n != 1 else ''} ({detail})")
    if fixed:
        parts.append(f"{fixed} fixed")
        if not findings:
            return f"Fixed {fixed} finding{'s' if fixed != 1 else ''}; nothing remains."
    safe = sum(1 for f in findings if f.fix is not None and f.fix.applicability == SAFE)
    unsafe = sum(1 for f in findings if f.fix is not None and f.fix.applicability == UNSAFE)
    fixable = safe if unsafe_hidden else safe + unsafe
    if fixable:
        parts.append(f"{fixable} fixable with --fix")
    if unsafe and unsafe_hidden:
        parts.append(f"{unsafe} more with --unsafe-fixes")
    return ", ".join(parts) + "."


def fixable(f: Finding, unsafe_fixes: bool = False) -> bool:
    """Whether `--fix` (with `--unsafe-fixes` if given) would fix this finding."""
    return f.fix is not None and (f.fix.applicability == SAFE or unsafe_fixes)


def statistics_rows(findings: List[Finding], unsafe_fixes: bool = False) -> List[dict]:
    """`--statistics`: per code, its name, how many findings and whether `--fix` fixes
    any of them; the most frequent first, then by code (ruff's shape, for JSON)."""
    counts = Counter((f.code, f.name) for f in findings)
    fixes = {f.code for f in findings if fixable(f, unsafe_fixes)}
    return [{"code": code, "name": name, "count": count, "fixable": code in fixes}
            for (code, name), count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def statistics(findings: List[Finding], out: TextIO, unsafe_fixes: bool = False,
               style: Style = PLAIN) -> None:
    """The counts as a table: `count  CODE  [*] name`, one line a code."""
    for row in statistics_rows(findings, unsafe_fixes):
        mark = f"[{style.fixable('*')}]" if row["fixable"] else "   "
        out.write(f"{row['count']:6d}  {style.code(row['code'])}  {mark} {row['name']}\n")


# --show-fixes: path -> how many fixes of each (code, name)
FixCounts = Dict[str, Counter]


def would_fix(findings: List[Finding], unsafe_fixes: bool = False) -> FixCounts:
    """What `--fix` would fix with the flags given, per file and code."""
    counts: FixCounts = {}
    for f in findings:
        if fixable(f, unsafe_fixes):
            counts.setdefault(f.path, Counter())[(f.code, f.name)] += 1
    return counts


def were_fixed(before: List[Finding], after: List[Finding], paths: Iterable[str],
               unsafe_fixes: bool = False) -> FixCounts:
    """What `--fix` fixed in `paths` (the files it changed), per file and code: the fixable
    findings before less those after. The fixer reports only its total, and a fix removes
    its own finding (a safe fix never adds one), so this is exact except where an unsafe
    fix also removes or adds a fixable finding of another code."""
    changed = set(paths)
    was = would_fix([f for f in before if f.path in changed], unsafe_fixes)
    still = would_fix([f for f in after if f.path in changed], unsafe_fixes)
    counts: FixCounts = {}
    for path, codes in was.items():
        left = codes - still.get(path, Counter())  # (Counter subtraction keeps counts > 0)
        if left:
            counts[path] = left
    return counts


def show_fixes(out: TextIO, verb: str, counts: FixCounts, style: Style = PLAIN) -> None:
    """`Fixed 3 findings:` (or `Would fix`), then each file and its fixes per code, as
    ruff's --show-fixes; nothing when there are none."""
    total = sum(sum(codes.values()) for codes in counts.values())
    if not total:
        return
    out.write(f"{verb} {total} finding{'s' if total != 1 else ''}:\n")
    for path in sorted(counts):
        out.write(f"- {style.path(path)}:\n")
        for (code, name), n in sorted(counts[path].items(), key=lambda kv: (-kv[1], kv[0])):
            out.write(f"    {n} \u00d7 {style.code(code)} ({name})\n")
    out.write("\n")
