"""`--plot FILE.png`: per site, the bytes each choice moves per step, and step times beside."""
from __future__ import annotations

from typing import Any, Dict



def matplotlib_available() -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec("matplotlib") is not None
    except (ImportError, ValueError):
        return False


NOTE_WIDTH = 80  # characters of a row's note: the error's text, cut between words


def row_note(m: Dict[str, Any], recommended: bool) -> str:
    """What a choice's row says beside its bar: its traffic and what is wrong with it, or
    its error (cut between words, never inside one)."""
    from .verdict import STAGES, calls_per_step, clip, human_bytes

    error = m.get("error")
    if error:
        stage = STAGES.get(m.get("error_stage") or "", "")
        note = clip(f"raises {error.splitlines()[0]}", NOTE_WIDTH - len(stage) - 1)
        note = f"{note} {stage}".rstrip()
    else:
        note = f"{human_bytes(m.get('bytes_per_step'))}, {calls_per_step(m):g} all-reduce(s)"
        if m.get("copies_agree") is False:
            note += ", copies diverge"
        elif m.get("values_agree") is False:
            note += ", values differ"
    return ("recommended: " + note) if recommended else note


def write_plot(report: Dict[str, Any], path: str) -> None:
    """Per site, the bytes each choice moves per step (the bars), the recommended choice
    outlined, what is wrong with a choice written on its row, and the median step time with
    its p10-p90 spread in a narrow panel beside. One row per choice, grouped by site, so
    ten sites stay readable. Both modes draw the same chart."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .report import shown_path

    rows = []  # (label, measurement, recommended, first row of its site, site)
    for site in report["sites"]:
        verdict = site.get("verdict") or {}
        for index, m in enumerate(site["measurements"]):
            label = m["choice"] + ("  (code)" if m.get("as_written") else "")
            rows.append((label, m, bool(verdict.get("choice")) and
                         m["choice"] == verdict.get("choice"), index == 0, site))
    height = 1.2 + 0.32 * max(1, len(rows)) + 0.35 * len(report["sites"])
    fig, (ax, timer) = plt.subplots(1, 2, figsize=(12, height), sharey=True,
                                    gridspec_kw={"width_ratios": [3, 1]})
    if not rows:
        ax.text(0.5, 0.5, "no site measured", ha="center", va="center")
        ax.set_axis_off()
    y_positions, labels = [], []
    y = 0.0
    top_bytes = max([m.get("bytes_per_step") or 0 for _, m, _, _, _ in rows] + [1])
    for label, m, best, first, site in rows:
        if first:
            if y:
                y += 0.6
                for axis in (ax, timer):
                    axis.axhline(y - 0.8, color="#cccccc", linewidth=0.8)
            heading = (f"canonical {site['pattern']['title']}" if site["path"] is None
                       else f"{site['path']}:{site['line']} {site['name']}")
            ax.text(0, y - 0.55, heading, fontsize=8, fontweight="bold", va="center",
                    ha="left", transform=ax.get_yaxis_transform())
            y += 0.5
        error = m.get("error")
        bad = m.get("copies_agree") is False or m.get("values_agree") is False
        colour = "#b0b0b0" if error else ("#d98c1f" if bad else "#4c9a2a")
        width = 0 if error else (m.get("bytes_per_step") or 0)
        ax.barh(y, width, color=colour, height=0.7,
                edgecolor="black" if best else colour, linewidth=1.6 if best else 0.5)
        ax.text(width + top_bytes * 0.01, y, row_note(m, best), va="center", fontsize=7,
                color="#a00000" if error or bad else "black",
                fontweight="bold" if best else "normal")
        t = m.get("step_time_ms")
        if t:
            timer.errorbar([t["median"]], [y], xerr=[[t["median"] - t["p10"]],
                                                      [t["p90"] - t["median"]]],
                           fmt="o", color="#3a5fcd", markersize=3, elinewidth=0.8,
                           capsize=2)
        y_positions.append(y)
        labels.append(label)
        y += 1.0
    ax.set_yticks(y_positions)
    ax.set_yticklabels(labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, top_bytes * 1.6)
    ax.set_xlabel("bytes reduced or broadcast per step (bars; black edge: recommended)",
                  fontsize=8)
    timer.set_xlabel("step time, ms: median and p10-p90\n(secondary: noisy on shared CPUs)",
                     fontsize=8)
    timer.tick_params(axis="x", labelsize=7)
    timer.grid(axis="x", color="#eeeeee")
    ax.tick_params(axis="x", labelsize=7)
    program = report.get("program", {})
    name = program.get("script") or program.get("module") or ""
    if program.get("script"):
        name = shown_path(name)
    what = f"--run {name}" if report.get("mode") == "run" else "(patterns replayed)"
    fig.suptitle(f"syncadvisor profile {what}: {report.get('strategy')}, "
                 f"{report.get('replicas')} replicas (green: values agree; orange: copies "
                 f"diverge or values differ; grey: raises)", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
