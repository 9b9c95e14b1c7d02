"""The profile report: the JSON document and its text, for both modes (no TensorFlow).

Both modes print the same way: a header, one verdict line per site, the summary, then a
table per site. Every run is named by `plan.choice_name` (through the measurement's
`choice`), as the progress lines and the plot name it.
"""
from __future__ import annotations

import os
import sys
from typing import Any, Dict, List, Optional, TextIO

from ..model.tfapi import SYNC_ON_READ
from .plan import SiteSpec
from .verdict import STAGES, calls_per_step, clip, human_bytes, summary

NOT_MEASURED = "not measured"
ERROR_WIDTH = 110


def site_json(spec: SiteSpec, measurements: List[Dict[str, Any]],
              recommendation: Dict[str, Any]) -> Dict[str, Any]:
    pattern = spec.pattern.to_json()
    if spec.example is not None:
        pattern["example"] = spec.example
    site = {
        "path": spec.path,
        "line": spec.line,
        "name": spec.name,
        "shape": list(spec.pattern.shape),
        "dtype": spec.pattern.dtype,
        "api": spec.api,
        "current": {"synchronization": spec.current[0], "aggregation": spec.current[1]},
        "pattern": pattern,
        "measurements": measurements,
        "recommendation": recommendation,
    }
    if spec.library is not None:
        site["made_by_library"] = spec.library
    return site


def shown_path(path: str) -> str:
    """`path` relative to the working folder when it is under it (as `check` shows paths),
    else as it is (also where no relative path exists: another drive)."""
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return path
    return path if relative.startswith(os.pardir) else relative


def _short_device(name: str) -> str:
    return name.rsplit("/", 1)[-1].replace("device:", "")


def _ms(m: Dict[str, Any]) -> str:
    t = m.get("step_time_ms")
    if not t:
        return "-"
    return f"{t['median']:.3f} [{t['p10']:.3f}, {t['p90']:.3f}]"


def _per(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:g}"


def error_cell(m: Dict[str, Any], width: int = ERROR_WIDTH) -> str:
    """A run's error with where it came from, cut between words."""
    error = m.get("error")
    if not error:
        return ""
    stage = STAGES.get(m.get("error_stage") or "", "")
    first = error.splitlines()[0]
    text = f"{first.split(':', 1)[0]} {stage}:{first.split(':', 1)[1]}" if ":" in first and stage \
        else first
    return clip(text, width)


def _table(rows: List[tuple]) -> List[str]:
    """Rows as indented columns; the last column (an error) is left ragged."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    return [("  " + "  ".join([r[i].ljust(widths[i]) for i in range(len(widths))] + [r[-1]]))
            .rstrip() for r in rows]


def _agree(value: Optional[bool]) -> str:
    return "-" if value is None else ("agree" if value else "DIFFER")


def copies_cell(m: Dict[str, Any]) -> str:
    if m.get("error"):
        return "-"
    if m.get("copies_agree") is None and m.get("synchronization") == SYNC_ON_READ:
        return "local"
    return _agree(m.get("copies_agree"))


def _place(site: Dict[str, Any]) -> str:
    if site["path"] is None:
        return f"canonical {site['pattern']['title']}"
    return f"{site['path']}:{site['line']}: {site['name']}"


# --- text -------------------------------------------------------------------------------------

def render_text(report: Dict[str, Any]) -> str:
    out = _run_header(report) if report.get("mode") == "run" else _replay_header(report)
    out.append("")
    for site in report["sites"]:
        out.append(f"{_place(site)}: {site['verdict']['text']}")
    if report.get("nothing_to_profile"):
        out.append(f"nothing to profile: {report['nothing_to_profile']}")
    elif not report["sites"]:
        out.append("no site that matters was created by the program as written"
                   if report.get("mode") == "run"
                   else "no variable creation sites found in the given files")
    out.append("")
    out.append(report["summary"]["text"] if "summary" in report
               else summary(report["sites"], 0)["text"])
    for site in report["sites"]:
        out.append("")
        out.extend(_site_text(site, report))
    if report.get("not_reached"):
        out.append("")
        out.append("not created inside a strategy.scope() by the program as written (not "
                   "measured: the profiler sees only variables made in a scope):")
        for s in report["not_reached"]:
            out.append(f"  {s['path']}:{s['line']}: {s['name']}")
    library = [s for s in report.get("library") or [] if not s.get("measured")]
    if library:
        out.append("")
        out.append("variables library code made on lines of the program (not measured; "
                   "--site PATH:LINE measures one):")
        for s in library:
            out.append(f"  {s['path']}:{s['line']}: {s['why']}")
    return "\n".join(out) + "\n"


def _run_header(report: Dict[str, Any]) -> List[str]:
    program = report["program"]
    name = program.get("script") or f"-m {program.get('module')}"
    if program.get("script"):
        name = shown_path(name)
    devices = ", ".join(_short_device(d) for d in report["devices"])
    out = [
        f"syncadvisor profile: {name} under {report['strategy']}, {report['replicas']} replicas, "
        f"TensorFlow {report['tensorflow']}",
        f"devices: {devices} ({report['device_note']})",
        f"each run: {_steps(report['warmup'], 'warm-up step')}, then {_measured(report)}; seed "
        f"{report['seed']}; costs are the whole program's per step",
    ]
    if report.get("task"):
        out.append(f"this worker: {report['task'].get('type')} {report['task'].get('index')} "
                   f"of {report.get('workers')}")
    reference = report.get("reference")
    if reference:
        out.append(_values_line(reference))
    if report.get("noise_ms") is not None:
        out.append(f"step-time noise: two runs of the program as written differ by "
                   f"{report['noise_ms']:.3f} ms in median step")
    return out


def _values_line(reference: Dict[str, Any]) -> str:
    where = reference.get("device_note") or "one device"
    text = (f"values: judged against the program on one replica ({where}), same seed and "
            f"global batch, within {reference['tolerance']:.2g} of each variable's largest "
            f"magnitude")
    drift = reference.get("drift")
    if drift is not None:
        text += f" (two runs of the program as written drifted {drift:.2g})"
    if reference.get("problem"):
        text += f"; cannot judge: {reference['problem']}"
    return text


def _replay_header(report: Dict[str, Any]) -> List[str]:
    devices = ", ".join(_short_device(d) for d in report["devices"])
    what = "the canonical patterns" if report.get("canonical") else "the sites of the files"
    out = [
        f"syncadvisor profile: {what} replayed under {report['strategy']}, "
        f"{report['replicas']} replicas, TensorFlow {report['tensorflow']}",
        f"devices: {devices} ({report['device_note']})",
        f"each run: {_steps(report['warmup'], 'warm-up step')}, then {report['steps']} "
        f"measured; costs are the pattern's per step",
        "values: judged against the choice each pattern's updates imply (marked ref)",
    ]
    if report.get("task"):
        out.append(f"this worker: {report['task'].get('type')} {report['task'].get('index')} "
                   f"of {report.get('workers')}")
    return out


def _steps(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def _measured(report: Dict[str, Any]) -> str:
    measured = report.get("measured_steps")
    if measured is None or measured >= report["steps"]:
        return f"{report['steps']} measured"
    return (f"{measured} measured (asked for {report['steps']}: the program ended after "
            f"{report.get('program_steps')} steps; the fewer the steps, the less the counts "
            f"and times say)")


def _site_text(site: Dict[str, Any], report: Dict[str, Any]) -> List[str]:
    pattern = site["pattern"]
    trainable = "trainable" if pattern["trainable"] else "not trainable"
    lines = [f"{_place(site)} ({trainable}; {site['api'] or 'variable'})"]
    if site.get("made_by_library"):
        lines.append(f"  {site['made_by_library']}")
    if site["path"] is None and pattern.get("updates_per_step"):
        updates = "; ".join(_describe(u) for u in pattern["updates_per_step"])
        lines.append(f"  per step: {updates}")
    rows = [("choice", "", "all-reduces", "bytes", "step ms", "copies", "values", "error")]
    for m in site["measurements"]:
        mark = ",".join(x for x, on in (("code", m.get("as_written")),
                                        ("ref", m.get("reference"))) if on)
        calls = calls_per_step(m) if m.get("reductions_per_step") is not None else None
        nbytes = "-" if m.get("bytes_per_step") is None and m.get("error") else \
            human_bytes(m.get("bytes_per_step"))
        rows.append((m["choice"], mark, _per(calls), nbytes, _ms(m), copies_cell(m),
                     "-" if m.get("error") else _agree(m.get("values_agree")),
                     error_cell(m)))
    lines.extend(_table(rows))
    for m in site["measurements"]:
        if m.get("differ") and m.get("values_agree") is False:
            names = ", ".join(m["differ"][:4]) + (f" and {len(m['differ']) - 4} more"
                                                  if len(m["differ"]) > 4 else "")
            lines.append(f"  {m['choice']}: differs from the one-replica run in {names}")
    judgement = site.get("judgement") or {}
    if judgement.get("unaffected"):
        names = ", ".join(judgement["unaffected"][:4])
        more = len(judgement["unaffected"]) - 4
        verb = "differs" if len(judgement["unaffected"]) == 1 else "differ"
        lines.append(f"  under every choice here, {names}{f' and {more} more' if more > 0 else ''}"
                     f" {verb} from the one-replica run: not this site's doing, left out")
    for f in site["recommendation"].get("static_findings") or []:
        if f["verdict"] != NOT_MEASURED:
            where = (f"line {f['line']} of its example" if site["path"] is None
                     else f"line {f['line']}")
            lines.append(f"  {f['verdict']}: {f['code']} ({where}): {f['why']}")
    return lines


def _describe(u: Dict[str, Any]) -> str:
    if u["method"] == "gradient":
        return "a gradient step (optimizer-style: gradients summed across replicas)"
    what = {"per-replica": "a per-replica value", "constant": "a constant tensor",
            "python-number": "a Python number"}.get(u["value"], u["value"])
    where = "replica context" if u["replica_context"] else "cross-replica context"
    if u.get("decay") is not None:
        return f"assign(v * {u['decay']} + {what} * {1 - u['decay']:g}) in {where}"
    return f"{u['method']}({what}) in {where}"


# --- progress ---------------------------------------------------------------------------------

class Progress:
    """A progress bar on a terminal; one line per site otherwise."""

    def __init__(self, total: int, stream: Optional[TextIO] = None, enabled: bool = True):
        self.total = max(1, total)
        self.done = 0
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.site = ""
        self._width = 0

    def start_site(self, index: int, count: int, label: str) -> None:
        self.site = label
        if self.enabled and not self.tty:
            self.stream.write(f"profiling {index}/{count}: {label}\n")
            self.stream.flush()

    def choice(self, name: str) -> None:
        """A run starts, named as the tables name it."""
        if self.enabled and self.tty:
            filled = int(30 * self.done / self.total)
            bar = "#" * filled + "-" * (30 - filled)
            text = f"\r[{bar}] {self.done}/{self.total} {clip(self.site, 40)}: {name}"
            pad = max(0, self._width - len(text))
            self._width = len(text)
            self.stream.write(text + " " * pad)
            self.stream.flush()
        self.done += 1

    def finish(self) -> None:
        if self.enabled and self.tty:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
