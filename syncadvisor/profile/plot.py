"""`--plot FILE.png`: a bar chart of the median step time per choice, one panel per site."""
from __future__ import annotations

from typing import Any, Dict

from ..model import tfapi


def matplotlib_available() -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec("matplotlib") is not None
    except (ImportError, ValueError):
        return False


def write_plot(report: Dict[str, Any], path: str) -> None:
    if report.get("mode") == "run":
        write_run_plot(report, path)
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sites = report["sites"]
    rows = max(1, len(sites))
    fig, axes = plt.subplots(rows, 1, figsize=(11, 2.9 * rows), squeeze=False)
    colors = {True: "#4c9a2a", False: "#d98c1f", None: "#8a8a8a"}
    for ax, site in zip(axes[:, 0], sites):
        ms = site["measurements"]
        labels = [m["synchronization"] + "\n"
                  + m["aggregation"].replace(tfapi.AGG_ONLY_FIRST_REPLICA, "FIRST_REPL")
                  for m in ms]
        heights, lows, highs, colours = [], [], [], []
        for m in ms:
            t = m.get("step_time_ms")
            if t:
                heights.append(t["median"])
                lows.append(max(0.0, t["median"] - t["p10"]))
                highs.append(max(0.0, t["p90"] - t["median"]))
            else:
                heights.append(0.0)
                lows.append(0.0)
                highs.append(0.0)
            colours.append(colors[m.get("values_agree")] if not m.get("error") else "#b0b0b0")
        x = list(range(len(ms)))
        ax.bar(x, heights, yerr=[lows, highs], color=colours, capsize=2)
        top = max(heights + [1e-3])
        for xi, m in zip(x, ms):
            if m.get("error") and not m.get("step_time_ms"):
                ax.text(xi, top * 0.05, "error", rotation=90, ha="center", va="bottom",
                        fontsize=7, color="#a00000")
            elif m.get("reductions_per_step") is not None:
                ax.text(xi, m["step_time_ms"]["median"] if m.get("step_time_ms") else 0,
                        f"{m['reductions_per_step']}r", ha="center", va="bottom", fontsize=7)
        ax.set_xticks(x)
        ax.set_xticklabels(labels, fontsize=6)
        ax.set_ylabel("median step (ms)")
        title = (f"canonical: {site['pattern']['title']}" if site["path"] is None
                 else f"{site['path']}:{site['line']} {site['name']}")
        rec = site["recommendation"]
        if rec.get("synchronization"):
            title += f"  ->  {rec['synchronization']} + {rec['aggregation']}"
        ax.set_title(title, fontsize=9)
    if not sites:
        axes[0, 0].text(0.5, 0.5, "no variable sites", ha="center", va="center")
        axes[0, 0].set_axis_off()
    fig.suptitle(f"syncadvisor profile: {report['strategy']}, {report['replicas']} replicas, "
                 f"TensorFlow {report['tensorflow']} (green: values agree, orange: differ, "
                 f"grey: error; Nr = reductions per step)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_run_plot(report: Dict[str, Any], path: str) -> None:
    """`profile --run --plot`: per site, the bytes each choice moves per step (the bars), the
    recommended choice marked, errors written on their rows, and the median step time with
    its p10-p90 spread as a secondary mark on the top axis. One row per choice, grouped by
    site, so ten sites stay readable."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .report import shown_path
    from .verdict import STAGES, calls_per_step, human_bytes, spelled

    rows = []  # (label, measurement, recommended, first row of its site)
    for site in report["sites"]:
        written = (site["current"]["synchronization"], site["current"]["aggregation"])
        verdict = site.get("verdict") or {}
        chosen = (verdict.get("synchronization"), verdict.get("aggregation"))
        for index, m in enumerate(site["measurements"]):
            key = (m["synchronization"], m["aggregation"])
            label = spelled(key, written) + ("  (code)" if m.get("as_written") else "")
            rows.append((label, m, key == chosen, index == 0, site))
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
            ax.text(0, y - 0.55, f"{site['path']}:{site['line']} {site['name']}",
                    fontsize=8, fontweight="bold", va="center", ha="left",
                    transform=ax.get_yaxis_transform())
            y += 0.5
        error = m.get("error")
        bad = m.get("copies_agree") is False or m.get("values_agree") is False
        colour = "#b0b0b0" if error else ("#d98c1f" if bad else "#4c9a2a")
        width = 0 if error else (m.get("bytes_per_step") or 0)
        ax.barh(y, width, color=colour, height=0.7,
                edgecolor="black" if best else colour, linewidth=1.6 if best else 0.5)
        note = ""
        if error:
            stage = STAGES.get(m.get("error_stage") or "", "")
            first_line = error.splitlines()[0]
            note = f"raises {first_line[:70]} {stage}".rstrip()
        else:
            note = (f"{human_bytes(m.get('bytes_per_step'))}, {calls_per_step(m):g} "
                    f"all-reduce(s)")
            if m.get("copies_agree") is False:
                note += ", copies diverge"
            elif m.get("values_agree") is False:
                note += ", values differ"
        if best:
            note = "recommended: " + note
        ax.text(width + top_bytes * 0.01, y, note, va="center", fontsize=7,
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
    fig.suptitle(f"syncadvisor profile --run {name}: {report.get('strategy')}, "
                 f"{report.get('replicas')} replicas (green: values agree; orange: copies "
                 f"diverge or values differ; grey: raises)", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
