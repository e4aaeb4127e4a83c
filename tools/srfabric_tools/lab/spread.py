"""A run against the run-to-run spread of other runs of the same experiment: for each point and metric, the
range of the other runs' single repetitions (``runs.csv``), and whether this run's median lies within it. Used to
hold the runs with the gates over NETCONF to the committed runs with local taprio.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "runs.csv").write_text("commit,open_us,metric,run,value\\nabc,0,mean_us,0,10\\nabc,0,mean_us,1,12\\n")
>>> _ = (folder / "points.csv").write_text("open_us,metric,median,mean,ci95,n\\n0,mean_us,11.5,11.5,0,2\\n")
>>> within_spread(folder, [folder], ("mean_us",))
[{'point': '0', 'metric': 'mean_us', 'value': 11.5, 'low': 10.0, 'high': 12.0, 'within': True}]
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from pathlib import Path
from typing import Any

SKIP = {"commit", "metric", "run", "value", "median", "mean", "ci95", "n"}


def _point(row: dict[str, str]) -> str:
    return ",".join(value for key, value in row.items() if key not in SKIP)


def within_spread(run: Path, others: Iterable[Path], metrics: Iterable[str]) -> list[dict[str, Any]]:
    """For each point and metric of ``run`` (its ``points.csv`` median) named in ``metrics``: the other runs'
    repetitions' range and whether the median lies within it."""
    wanted = set(metrics)
    ranges: dict[tuple[str, str], tuple[float, float]] = {}
    for other in others:
        with (other / "runs.csv").open() as rows:
            for row in csv.DictReader(rows):
                if row["metric"] in wanted:
                    key = (_point(row), row["metric"])
                    low, high = ranges.get(key, (float("inf"), float("-inf")))
                    ranges[key] = (min(low, float(row["value"])), max(high, float(row["value"])))
    out = []
    with (run / "points.csv").open() as rows:
        for row in csv.DictReader(rows):
            key = (_point(row), row["metric"])
            if row["metric"] in wanted and key in ranges:
                value, (low, high) = float(row["median"]), ranges[key]
                out.append({"point": key[0], "metric": row["metric"], "value": value, "low": low, "high": high,
                            "within": low <= value <= high})
    return out
