"""``srfabric bench tsnkit``'s figure."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def plot(summary: dict[str, Any], path: Path, ours: tuple[str, ...]) -> None:
    """Streams scheduled and median solve time per instance size, one line per method (``ours``: srfabric's)."""
    from srfabric_tools.lab.plot import pyplot

    plt = pyplot()
    figure, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    sizes = list(summary["by_size"])
    methods = list(dict.fromkeys(m for v in summary["by_size"].values() for m in v))
    for method in methods:
        points = [(i, summary["by_size"][size][method]) for i, size in enumerate(sizes)
                  if method in summary["by_size"][size]]
        style = "o-" if method in ours else "^--"
        left.plot([i for i, _ in points], [v["scheduled_share"] * 100 for _, v in points], style, label=method)
        right.plot([i for i, _ in points], [v["median_solve_s"] for _, v in points], style, label=method)
    for ax, title, label in ((left, "streams scheduled", "% of the instance's streams (mean)"),
                             (right, "solve time", "median seconds")):
        ax.set_xticks(range(len(sizes)), sizes)
        ax.set(title=title, ylabel=label, xlabel="switches - streams")
        ax.grid(alpha=0.3)
    right.set_yscale("log")
    left.legend(fontsize=7, ncol=2)
    figure.suptitle("srfabric against tsnkit on tsnkit's generated instances (tsnkit: all or nothing per instance)")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
