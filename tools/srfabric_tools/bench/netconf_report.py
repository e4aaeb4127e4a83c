"""``bench netconf``'s summary, figure and table: per run the median and p99 of a change, beside the no-op
confirmed commit and the bare round trip on the same servers; the goals judged on the runs' distribution (met
only if the run at the worse quartile meets them)."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

GOAL_MEDIAN_MS, GOAL_P99_MS = 300.0, 1000.0
TAPRIO = ("not run: the host kernel has no taprio, so each bridge validated and committed every change and kept "
          "its state leaves; the kernel lab's runs apply taprio")


def percentile(values: list[float], share: float) -> float:
    """The nearest-rank percentile (``share`` in 0..1).

    >>> percentile([1.0, 2.0, 3.0, 4.0], 0.99), percentile([1.0, 2.0, 3.0, 4.0], 0.5)
    (4.0, 2.0)
    """
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, -(-int(share * 1000) * len(ordered) // 1000) - 1))]


def spread(values: list[float]) -> dict[str, float]:
    """Median, quartiles, min and max of per-run figures."""
    return {"median": statistics.median(values), "q1": percentile(values, 0.25), "q3": percentile(values, 0.75),
            "min": min(values), "max": max(values)}


def per_run(result: dict[str, Any]) -> dict[str, float]:
    rows = result["rows"]
    column = {key: [row[key] for row in rows] for key in rows[0]}
    return {"median_ms": statistics.median(column["change_ms"]), "p99_ms": percentile(column["change_ms"], 0.99),
            "commit_ms": statistics.median(column["commit_ms"]), "confirm_ms": statistics.median(column["confirm_ms"]),
            "noop_commit_ms": statistics.median(column["noop_commit_ms"]),
            "round_trip_ms": statistics.median(column["round_trip_ms"]),
            "change_over_noop": statistics.median(column["change_ms"]) / statistics.median(column["noop_commit_ms"]),
            "capabilities_ms": result["capabilities_ms"], "readback_ms": result["readback_ms"],
            "not_switched": len(result["not_switched"])}


def summarise(results: list[dict[str, Any]], ports: dict[str, list[str]], topology: str,
              quick: bool) -> dict[str, Any]:
    runs = [per_run(result) for result in results]
    figures = {key: spread([run[key] for run in runs]) for key in runs[0]}
    worse_median, worse_p99 = figures["median_ms"]["q3"], figures["p99_ms"]["q3"]
    return {
        "quick": quick, "topology": topology, "bridges": len(ports), "gated_ports": sum(map(len, ports.values())),
        "runs": runs, "figures": figures, "taprio": TAPRIO,
        "calibrations": [result["calibration"] for result in results],
        "not_switched": [problem for result in results for problem in result["not_switched"]],
        "goals": {
            "change_median_under_300_ms": {"median_ms": round(figures["median_ms"]["median"], 2),
                                           "worse_quartile_ms": round(worse_median, 2), "goal_ms": GOAL_MEDIAN_MS,
                                           "met": worse_median < GOAL_MEDIAN_MS},
            "change_p99_under_1_s": {"median_ms": round(figures["p99_ms"]["median"], 2),
                                     "worse_quartile_ms": round(worse_p99, 2), "goal_ms": GOAL_P99_MS,
                                     "met": worse_p99 < GOAL_P99_MS},
            "every_bridge_switched": {"value": sum(run["not_switched"] for run in runs), "goal": 0,
                                      "met": all(run["not_switched"] == 0 for run in runs)},
        },
    }


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure, axes = pyplot.subplots(figsize=(7, 4))
    for key, label in (("change_ms", "change, committed and confirmed"), ("noop_commit_ms", "no-op confirmed commit"),
                       ("round_trip_ms", "one NETCONF round trip")):
        values = sorted(row[key] for row in rows)
        axes.plot(values, [(n + 1) / len(values) for n in range(len(values))], label=label)
    axes.axvline(GOAL_MEDIAN_MS, color="grey", linestyle=":", label="goal: median under 300 ms")
    axes.set_xscale("log")
    axes.set_xlabel("ms")
    axes.set_ylabel("share of changes")
    axes.legend(loc="lower right")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    pyplot.close(figure)


def print_netconf(summary: dict[str, Any]) -> None:
    figures = summary["figures"]
    print(f"{summary['bridges']} bridges ({summary['topology']}), {summary['gated_ports']} gated ports, "
          f"{len(summary['runs'])} runs; taprio {summary['taprio'].split(':')[0]}")
    for key in ("median_ms", "p99_ms", "commit_ms", "confirm_ms", "noop_commit_ms", "round_trip_ms",
                "change_over_noop", "readback_ms"):
        value = figures[key]
        print(f"  {key:18} median {value['median']:8.2f}  IQR {value['q1']:.2f}-{value['q3']:.2f}  "
              f"range {value['min']:.2f}-{value['max']:.2f}")
    for name, goal in summary["goals"].items():
        print(f"  goal {name}: {'met' if goal['met'] else 'NOT met'}")
