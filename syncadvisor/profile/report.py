"""The profile report: JSON document, text tables, progress bar (no TensorFlow)."""
from __future__ import annotations

import os
import sys
from typing import Any, Dict, List, Optional, TextIO

from ..model.tfapi import SYNC_ON_READ
from .advice import fmt
from .plan import SiteSpec
from .verdict import STAGES, calls_per_step, human_bytes, spelled, summary

NOT_MEASURED = "not measured"


def site_json(spec: SiteSpec, measurements: List[Dict[str, Any]],
              recommendation: Dict[str, Any]) -> Dict[str, Any]:
    pattern = spec.pattern.to_json()
    if spec.example is not None:
        pattern["example"] = spec.example
    return {
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


# --- text -------------------------------------------------------------------------------------

def _ms(m: Dict[str, Any]) -> str:
    t = m.get("step_time_ms")
    if not t:
        return "-"
    return f"{t['median']:.3f} [{t['p10']:.3f}, {t['p90']:.3f}]"


def _num(value: Optional[int]) -> str:
    return "-" if value is None else str(value)


def _values(m: Dict[str, Any]) -> str:
    agree = m.get("values_agree")
    return "-" if agree is None else ("agree" if agree else "differ")


def _error(m: Dict[str, Any], width: int = 110) -> str:
    error = m.get("error")
    if not error:
        return ""
    stage = STAGES.get(m.get("error_stage") or "", "")
    first = error.splitlines()[0]
    text = f"{first.split(':', 1)[0]} {stage}:{first.split(':', 1)[1]}" if ":" in first and stage \
        else first
    return text if len(text) <= width else text[: width - 3] + "..."


def _table(rows: List[tuple]) -> List[str]:
    """Rows as indented columns; the last column (an error) is left ragged."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    return [("  " + "  ".join([r[i].ljust(widths[i]) for i in range(len(widths))] + [r[-1]]))
            .rstrip() for r in rows]


def _header(report: Dict[str, Any]) -> List[str]:
    devices = ", ".join(report["devices"])
    lines = [
        f"syncadvisor profile: TensorFlow {report['tensorflow']}, {report['strategy']}, "
        f"{report['replicas']} replicas",
        f"devices: {devices} ({report['device_note']})",
        f"steps: {report['steps']} timed after {report['warmup']} warm-up steps per choice; "
        "step times in ms: median [p10, p90]",
    ]
    if report.get("task"):
        lines.append(f"this worker: {report['task'].get('type')} {report['task'].get('index')}")
    return lines


def render_text(report: Dict[str, Any]) -> str:
    if report.get("mode") == "run":
        return render_run_text(report)
    out = _header(report)
    if not report["sites"]:
        out.append("")
        out.append("no variable creation sites found in the given files")
    else:
        out.append("")
        for site in report["sites"]:
            title = (f"canonical {site['pattern']['title']}" if site["path"] is None
                     else f"{site['path']}:{site['line']}: {site['name']}")
            verdict = site.get("verdict") or {}
            out.append(f"{title}: {verdict.get('text', '')}")
        out.append("")
        out.append(summary(report["sites"], 0)["text"].replace("measured", "replayed", 1))
    for site in report["sites"]:
        out.append("")
        out.extend(_site_text(site))
    return "\n".join(out) + "\n"


def _site_text(site: Dict[str, Any]) -> List[str]:
    pattern = site["pattern"]
    trainable = "trainable" if pattern["trainable"] else "not trainable"
    shape = "[" + ", ".join(str(d) for d in site["shape"]) + "]"
    if site["path"] is None:
        title = f"canonical pattern: {pattern['title']}"
    else:
        title = f"{site['path']}:{site['line']}: {site['name']}"
    lines = [f"{title} -- shape {shape}, {site['dtype']}, {trainable}"]
    updates = "; ".join(_describe(u) for u in pattern["updates_per_step"])
    source = {"default": " (default: none seen in the code)", "canonical": ""}.get(
        pattern["updates_from"], "")
    lines.append(f"  per step: {updates}{source}")
    ref = (pattern["reference"]["synchronization"], pattern["reference"]["aggregation"])
    cur = (site["current"]["synchronization"], site["current"]["aggregation"])
    written = "as commonly written" if site["path"] is None else "in the code"
    lines.append(f"  reference: {fmt(ref)}; {written}: {fmt(cur)}")
    for note in pattern.get("notes", []):
        lines.append(f"  note: {note}")
    rows = [("synchronization", "aggregation", "", "step ms", "reductions", "transfers",
             "values", "error")]
    for m in site["measurements"]:
        key = (m["synchronization"], m["aggregation"])
        mark = ",".join(x for x, on in (("ref", key == ref), ("code", key == cur)) if on)
        rows.append((m["synchronization"], m["aggregation"], mark, _ms(m),
                     _num(m["reductions_per_step"]), _num(m["transfers_per_step"]),
                     _values(m), _error(m)))
    lines.extend(_table(rows))
    rec = site["recommendation"]
    if rec.get("synchronization"):
        lines.append(f"  recommendation: {fmt((rec['synchronization'], rec['aggregation']))}"
                     f" -- {rec['reason']}")
    else:
        lines.append(f"  recommendation: none -- {rec['reason']}")
    findings = rec.get("static_findings") or []
    if not findings:
        lines.append("  static findings: none")
    for f in findings:  # the JSON keeps the findings the measurement does not speak to
        if f["verdict"] == NOT_MEASURED:
            continue
        where = f"line {f['line']} of its example" if site["path"] is None else f"line {f['line']}"
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

    def choice(self, sync: str, agg: str) -> None:
        if self.enabled and self.tty:
            filled = int(30 * self.done / self.total)
            bar = "#" * filled + "-" * (30 - filled)
            text = f"\r[{bar}] {self.done}/{self.total} {self.site[:40]}: {sync} + {agg}"
            pad = max(0, self._width - len(text))
            self._width = len(text)
            self.stream.write(text + " " * pad)
            self.stream.flush()
        self.done += 1

    def finish(self) -> None:
        if self.enabled and self.tty:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()


# --- `--run`: the user's program --------------------------------------------------------------

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


def _per(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:g}"


def render_run_text(report: Dict[str, Any]) -> str:
    program = report["program"]
    name = program.get("script") or f"-m {program.get('module')}"
    if program.get("script"):
        name = shown_path(name)
    devices = ", ".join(_short_device(d) for d in report["devices"])
    out = [
        f"syncadvisor profile: {name} under {report['strategy']}, {report['replicas']} replicas, "
        f"TensorFlow {report['tensorflow']}",
        f"devices: {devices} ({report['device_note']})",
        f"each run: {report['warmup']} warm-up steps, then {_measured(report)}; seed "
        f"{report['seed']}; costs are the whole program's per step",
    ]
    if report.get("noise_ms") is not None:
        out.append(f"step-time noise: two runs of the program as written differ by "
                   f"{report['noise_ms']:.3f} ms in median step")
    out.append("")
    for site in report["sites"]:
        out.append(f"{site['path']}:{site['line']}: {site['name']}: {site['verdict']['text']}")
    if not report["sites"]:
        out.append("no site that matters was created by the program as written")
    out.append("")
    out.append(report["summary"]["text"])
    for site in report["sites"]:
        out.append("")
        out.extend(_run_site_text(site))
    if report.get("not_reached"):
        out.append("")
        out.append("not created inside a strategy.scope() by the program as written (not "
                   "measured: the profiler sees only variables made in a scope):")
        for s in report["not_reached"]:
            out.append(f"  {s['path']}:{s['line']}: {s['name']}")
    return "\n".join(out) + "\n"


def _measured(report: Dict[str, Any]) -> str:
    measured = report.get("measured_steps")
    if measured is None or measured >= report["steps"]:
        return f"{report['steps']} measured"
    return (f"{measured} measured (asked for {report['steps']}: the program ended after "
            f"{report.get('program_steps')} steps; the fewer the steps, the less the counts "
            f"and times say)")


def _agree(value: Optional[bool], local: bool = False) -> str:
    if local:
        return "local"
    return "-" if value is None else ("agree" if value else "DIFFER")


def _run_site_text(site: Dict[str, Any]) -> List[str]:
    pattern = site["pattern"]
    trainable = "trainable" if pattern["trainable"] else "not trainable"
    written = (site["current"]["synchronization"], site["current"]["aggregation"])
    lines = [f"{site['path']}:{site['line']}: {site['name']} ({trainable}; "
             f"{site['api'] or 'variable'})"]
    rows = [("choice", "", "all-reduces", "bytes", "step ms", "copies", "values", "error")]
    for m in site["measurements"]:
        mark = ",".join(x for x, on in (("code", m.get("as_written")),
                                        ("ref", m.get("reference"))) if on)
        calls = calls_per_step(m) if m.get("reductions_per_step") is not None else None
        nbytes = "-" if m.get("bytes_per_step") is None and m.get("error") else \
            human_bytes(m.get("bytes_per_step"))
        rows.append((spelled((m["synchronization"], m["aggregation"]), written), mark,
                     _per(calls), nbytes, _ms(m),
                     "-" if m.get("error") else _agree(m.get("copies_agree"),
                                                       m["synchronization"] == SYNC_ON_READ),
                     "-" if m.get("error") else _agree(m.get("values_agree")),
                     _error(m)))
    lines.extend(_table(rows))
    for f in site["recommendation"].get("static_findings") or []:
        if f["verdict"] != NOT_MEASURED:
            lines.append(f"  {f['verdict']}: {f['code']} (line {f['line']}): {f['why']}")
    return lines
