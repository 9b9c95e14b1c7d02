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
