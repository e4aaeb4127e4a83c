"""``srfabric bench deploy``: the OpenStack SFC study's Fig. 5 on srfabric.

A port chain of N = 1..10 service functions is created through the REST API in
the paper's four steps (flow classifier, port pairs, port pair groups, port
chain), each timed at the client, on a Mininet fabric of Open vSwitch switches;
a create returns only once the switches confirmed with barriers. Each length is
repeated, the lengths taking turns, and each chain is removed before the next. The rate at which 1,000
chains can be created follows. Figures are measured, never estimated.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.progress import Progress

from srfabric.cli.client import SfcClient
from srfabric.model.topo import TopoSpec
from srfabric_tools.bench.output import machine, provenance, run_folder, write_csv, write_json
from srfabric_tools.testbed.api_lab import ApiLab, ServeProcess, line_spec

STEPS = ("flow_classifier", "port_pair", "port_pair_group", "port_chain")
GOAL_MS = 20.0
PAPER = {"total_s_n1": 2.0, "per_function_s": 0.5}  # Fig. 5: a few seconds, about +0.5 s per function
SR_AWARE = {"correlation": "mpls"}  # the functions return the header: the committed runs measured no proxy


def bench_spec(functions: int = 10) -> TopoSpec:
    """h1 - s1 - s2 - s3 - h2 with the functions spread over the three switches (ports stay within 1..15)."""
    return line_spec(functions, ("s1", "s2", "s3"), dpid_base=0x200)


def deploy_once(client: SfcClient, lab: ApiLab, functions: int, port: int) -> dict[str, float]:
    """One chain through v1..vN in the paper's four steps; seconds per step (all requests of a step summed)."""
    client.timings.clear()
    fc = client.create("flow_classifiers", {"protocol": "udp", "destination_port_range_min": port,
                                            "destination_port_range_max": port,
                                            "logical_source_port": lab.ports["h1"],
                                            "logical_destination_port": lab.ports["h2"]}, "flow_classifier")
    pairs = [client.create("port_pairs", {"ingress": lab.ports[f"v{i}-in"], "egress": lab.ports[f"v{i}-out"],
                                          "service_function_parameters": SR_AWARE}, "port_pair")
             for i in range(1, functions + 1)]
    groups = [client.create("port_pair_groups", {"port_pairs": [pair["id"]]}, "port_pair_group") for pair in pairs]
    chain = client.create("port_chains", {"port_pair_groups": [g["id"] for g in groups],
                                          "flow_classifiers": [fc["id"]]}, "port_chain")
    steps = {step: sum(seconds for name, seconds in client.timings if name == step) for step in STEPS}
    client.delete("port_chains", chain["id"])
    for group, pair in zip(groups, pairs, strict=True):
        client.delete("port_pair_groups", group["id"])
        client.delete("port_pairs", pair["id"])
    client.delete("flow_classifiers", fc["id"])
    return steps


def chain_rate(client: SfcClient, lab: ApiLab, count: int) -> dict[str, float]:
    """Create ``count`` chains (a classifier and a chain each, over ordered lists of shared groups)."""
    import itertools

    pairs = [client.create("port_pairs", {"ingress": lab.ports[f"v{i}-in"], "egress": lab.ports[f"v{i}-out"],
                                          "service_function_parameters": SR_AWARE})
             for i in range(1, 11)]
    groups = [client.create("port_pair_groups", {"port_pairs": [p["id"]]})["id"] for p in pairs]
    orders = itertools.chain(itertools.permutations(groups, 2), itertools.permutations(groups, 3))
    begin = time.perf_counter()
    for index, order in zip(range(count), orders, strict=False):
        fc = client.create("flow_classifiers", {"protocol": "udp", "destination_port_range_min": 40000 + index,
                                                "destination_port_range_max": 40000 + index,
                                                "logical_source_port": lab.ports["h1"],
                                                "logical_destination_port": lab.ports["h2"]})
        client.create("port_chains", {"port_pair_groups": list(order), "flow_classifiers": [fc["id"]]})
    seconds = time.perf_counter() - begin
    return {"chains": count, "seconds": round(seconds, 3), "chains_per_s": round(count / seconds, 1)}


def rotated(lengths: list[int], repetition: int) -> list[int]:
    """The lengths in the order one repetition deploys them: each repetition starts one further on.

    Lengths take turns instead of running one after the other, so that a slow
    spell of this shared machine falls on every length alike; the rotation puts
    each length at each place in the order once every ``len(lengths)`` repetitions.

    >>> [rotated([1, 5, 10], r) for r in range(3)]
    [[1, 5, 10], [5, 10, 1], [10, 1, 5]]
    """
    start = repetition % len(lengths)
    return lengths[start:] + lengths[:start]


def run_deploy(quick: bool, out: str) -> tuple[dict[str, Any], Path]:
    lengths = [1, 5, 10] if quick else list(range(1, 11))
    repetitions = 3 if quick else 10
    rate_chains = 100 if quick else 1000
    folder = run_folder(out, "deploy")
    rows: list[dict[str, Any]] = []
    database = Path(tempfile.mkdtemp(prefix="srfabric-bench-")) / "bench.db"
    with ServeProcess(f"sqlite:///{database}") as serve, ApiLab(bench_spec(), serve) as lab, \
            serve.client() as client, Progress(auto_refresh=False) as progress:
        # Drawn by hand between repetitions: an auto-refresh thread would take the GIL in the middle of timed requests.
        task = progress.add_task("deploying chains", total=len(lengths) * repetitions + 1)
        deploy_once(client, lab, 1, 39999)  # warm-up, not recorded
        for repetition in range(repetitions):
            for functions in rotated(lengths, repetition):
                steps = deploy_once(client, lab, functions, 30000 + repetition)
                rows.append({"functions": functions, "repetition": repetition,
                             **{f"{s}_ms": round(v * 1000, 3) for s, v in steps.items()},
                             "total_ms": round(sum(steps.values()) * 1000, 3)})
                progress.advance(task)
                progress.refresh()
        rate = chain_rate(client, lab, rate_chains)
        progress.advance(task)
        progress.refresh()
    for path in database.parent.iterdir():
        path.unlink()
    database.parent.rmdir()
    summary = summarise(rows, rate, quick)
    write_csv(folder / "deploy.csv", rows)
    write_json(folder / "summary.json", summary)
    plot_deploy(summary, folder / "deploy.png")
    return summary, folder


def summarise(rows: list[dict[str, Any]], rate: dict[str, float], quick: bool) -> dict[str, Any]:
    by_length = []
    for functions in sorted({r["functions"] for r in rows}):
        mine = [r for r in rows if r["functions"] == functions]
        by_length.append({"functions": functions, "runs": len(mine),
                          **{f"{s}_ms": round(statistics.median(r[f"{s}_ms"] for r in mine), 3) for s in STEPS},
                          "total_ms": round(statistics.median(r["total_ms"] for r in mine), 3),
                          "total_p90_ms": round(sorted(r["total_ms"] for r in mine)[int(0.9 * (len(mine) - 1))], 3)})
    longest = by_length[-1]
    return {**provenance(machine(), "srfabric bench deploy"), "quick": quick, "by_length": by_length, "rate": rate,
            "paper": PAPER,
            "goals": {"ten_function_chain": {"functions": longest["functions"], "median_ms": longest["total_ms"],
                                             "bar_ms": GOAL_MS, "met": longest["functions"] == 10
                                             and longest["total_ms"] < GOAL_MS}}}


def plot_deploy(summary: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = summary["by_length"]
    x = [r["functions"] for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4))
    bottom = [0.0] * len(rows)
    for step in STEPS:
        heights = [r[f"{step}_ms"] for r in rows]
        ax.bar(x, heights, bottom=bottom, label=step.replace("_", " "))
        bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
    ax.axhline(summary["goals"]["ten_function_chain"]["bar_ms"], color="red", linestyle="--", label="goal (N=10)")
    ax.set_xlabel("service functions in the chain (N)")
    ax.set_ylabel("median time to deploy through the REST API (ms)")
    ax.set_title(f"Chain deployment on srfabric (barrier-confirmed); {summary['rate']['chains_per_s']} chains/s "
                 f"for {summary['rate']['chains']}", fontsize=9)
    ax.set_xticks(x)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def print_deploy(summary: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(title="Chain deployment through the REST API, median ms per step (paper: seconds)")
    for column in ("N", "runs", *STEPS, "total", "p90"):
        table.add_column(column)
    for r in summary["by_length"]:
        table.add_row(str(r["functions"]), str(r["runs"]), *(f"{r[f'{s}_ms']:.2f}" for s in STEPS),
                      f"{r['total_ms']:.2f}", f"{r['total_p90_ms']:.2f}")
    console.print(table)
    rate = summary["rate"]
    console.print(f"{rate['chains']} chains created in {rate['seconds']} s: {rate['chains_per_s']} chains/s")
    goal = summary["goals"]["ten_function_chain"]
    console.print(f"goal: N={goal['functions']} median {goal['median_ms']} ms < {goal['bar_ms']} ms: "
                  f"{'met' if goal['met'] else 'NOT met'}")
