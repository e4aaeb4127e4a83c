"""``srfabric bench neutron``'s files (latency.csv, summary.json, neutron.png) and its printed tables."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from srfabric_tools.bench.output import run_folder, write_csv, write_json


def write_results(out: str, summary: dict[str, Any], latency: list[dict[str, float]],
                  measured_on: dict[str, Any]) -> Path:
    """A run folder with the latency rows, the summary (commit, date, machine and command included, and whether
    each goal is met) and the chart; ``measured_on`` is ``output.machine()`` as the run began."""
    folder = run_folder(out, "neutron")
    goals = goals_met(summary)
    summary.update(machine=measured_on, date=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                   command=" ".join(["srfabric", *sys.argv[1:]]) if sys.argv[1:2] == ["bench"]
                   else f"srfabric bench neutron{' --quick' if summary['quick'] else ''}", goals=goals)
    write_csv(folder / "latency.csv", latency)
    write_json(folder / "summary.json", summary)
    plot(latency, summary, folder / "neutron.png")
    return folder


def goals_met(summary: dict[str, Any]) -> dict[str, bool]:
    """The issue's three goals, judged from the summary."""
    latency, concurrency, outage = summary["latency"], summary["concurrency"], summary["outage"]
    return {"median_under_500_ms": latency["median_ms"] < latency["goal_median_ms"],
            "concurrent_all_once_in_order": concurrency["held"] == concurrency["chains"]
            and concurrency["journal_rows"] == concurrency["chains"] and concurrency["duplicated_rows"] == 0
            and concurrency["not_completed"] == 0 and bool(concurrency["in_journal_order"]),
            "outage_all_arrived": outage["arrived"] == outage["changes"] and bool(outage["udp_crosses_new_chain"])}


def plot(latency: list[dict[str, float]], summary: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = [int(row["run"]) for row in latency]
    neutron = [row["neutron_ms"] for row in latency]
    fabric = [row["fabric_ms"] for row in latency]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.bar(runs, neutron, label="Neutron's answer (API, policy, database, precommit check)")
    ax.bar(runs, fabric, bottom=neutron, label="journal hand-over and srfabric (to barrier-confirmed switches)")
    ax.axhline(summary["latency"]["goal_median_ms"], color="red", linestyle="--", label="goal (median)")
    ax.axhline(summary["latency"]["median_ms"], color="black", linestyle=":", label="median")
    ax.set_xlabel("chain (made one after another)")
    ax.set_ylabel("ms from the POST to Neutron")
    ax.set_title("Chains through OpenStack Neutron to the fabric", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def print_neutron(summary: dict[str, Any]) -> None:
    from rich.console import Console

    console = Console()
    latency, concurrency, outage, goals = (summary["latency"], summary["concurrency"], summary["outage"],
                                           summary["goals"])
    console.print(f"latency, {latency['runs']} chains: median {latency['median_ms']} ms (p90 {latency['p90_ms']} "
                  f"ms); Neutron's share {latency['neutron_median_ms']} ms, the journal and srfabric "
                  f"{latency['fabric_median_ms']} ms; goal < {latency['goal_median_ms']} ms: "
                  f"{'met' if goals['median_under_500_ms'] else 'NOT met'}")
    console.print(f"concurrency: {concurrency['chains']} chains, {concurrency['held']} in srfabric, "
                  f"{concurrency['duplicated_rows']} duplicated, {concurrency['not_completed']} not completed, "
                  f"in the journal's order: {concurrency['in_journal_order']}, all in {concurrency['all_in_s']} s: "
                  f"{'met' if goals['concurrent_all_once_in_order'] else 'NOT met'}")
    console.print(f"outage: {outage['changes']} changes in {outage['outage_s']} s without srfabric, "
                  f"{outage['arrived']} arrived {outage['arrived_s_after_return']} s after it returned, UDP "
                  f"crosses a new chain: {outage['udp_crosses_new_chain']}: "
                  f"{'met' if goals['outage_all_arrived'] else 'NOT met'}")
