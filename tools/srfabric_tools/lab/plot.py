"""Line plots of lab points: one line per series, medians with 95 % confidence bars."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

Row = dict[str, Any]


def pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    with warnings.catch_warnings():
        # Debian's own mpl_toolkits is visible through the venv's system site packages; 3D is not used.
        warnings.filterwarnings("ignore", message="Unable to import Axes3D")
        import matplotlib.pyplot as plt
    return plt


def lines(ax: Any, rows: list[Row], x: str, series: Callable[[Row], str], scale: float = 1.0,
          keep: Callable[[Row], bool] = lambda row: True) -> None:
    """Draw ``median`` against ``x`` for each series label."""
    groups: dict[str, list[Row]] = {}
    for row in rows:
        if keep(row):
            groups.setdefault(series(row), []).append(row)
    for label, members in groups.items():
        members.sort(key=lambda r: r[x])
        ax.errorbar([r[x] for r in members], [r["median"] * scale for r in members],
                    yerr=[r["ci95"] * scale for r in members], marker="o", markersize=3, capsize=2, label=label)
    if groups:
        ax.legend(fontsize=7)
    ax.grid(alpha=0.3)


def save(figure: Any, path: Path, caption: str) -> None:
    figure.text(0.01, 0.005, caption, fontsize=7, color="0.3")
    figure.tight_layout(rect=(0, 0.03, 1, 1))
    figure.savefig(path, dpi=110)
    pyplot().close(figure)
