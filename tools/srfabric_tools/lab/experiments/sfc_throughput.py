"""SFC throughput (OpenStack SFC study, Table I-II, Fig. 7) on srfabric's source-routed fabric.

Four compute nodes (groups of namespaces, each with its own OVS switch) reach a
data-network switch through VXLAN tunnels; TCP from S to D crosses the chains
C0..C6 and a single function placed on S's node, D's node or another node.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from srfabric_tools.lab.core import Context, Experiment, Settings
from srfabric_tools.lab.fabric import LabFabric
from srfabric_tools.lab.fabric_topos import TABLE_I, TABLE_II, chain_between, compute_nodes
from srfabric_tools.lab.iperf import Traffic
from srfabric_tools.lab.plot import pyplot, save
from srfabric_tools.lab.topologies import chain_gbps

Row = dict[str, Any]
FLOWS = 1
PAPER_TABLE_II = {"same as S": 7.01, "same as D": 3.39, "other node": 1.99}


def grid(settings: Settings) -> tuple[list[str], list[str]]:
    if settings.quick:
        return ["C0", "C1", "C3"], ["other node"]
    return list(TABLE_I), [p for p in TABLE_II if p != "same as S"]  # C1 is the "same as S" case


def count(settings: Settings) -> int:
    chains, placements = grid(settings)
    return len(chains) + len(placements)


def run(ctx: Context) -> None:
    chains, placements = grid(ctx.settings)
    spec = compute_nodes()
    ctx.extra["topology"] = ("4 compute nodes (n1: S, v1; n2: D, v6; n3: v2, v3; n4: v4, v5), each an OVS switch "
                             "(userspace) with VXLAN tunnels to a data-network switch; codec mac-nibble")
    with LabFabric(ctx.lab, spec, tunnels=True) as fabric:
        ends = fabric.endpoints("S", "D")
        traffic = Traffic("tcp", FLOWS, ctx.settings.seconds)
        jobs = [(name, TABLE_I[name], "table I") for name in chains]
        jobs += [(f"1 VNF {p}", (TABLE_II[p],), "table II") for p in placements]
        for index, (name, functions, table) in enumerate(jobs, start=1):
            setup = fabric.set_chains([chain_between(spec, name, functions, index)] if functions else [])
            ctx.repeat({"table": table, "chain": name, "functions": len(functions), "path": " ".join(functions) or "-",
                        "setup_ms": round(setup * 1000, 1)}, partial(chain_gbps, ctx.lab, ends, traffic))


def plot(rows: list[Row], extra: dict[str, Any], path: Path) -> None:
    plt = pyplot()
    figure, axes = plt.subplots(1, 2, figsize=(12, 4))
    first = sorted((r for r in rows if r["table"] == "table I"), key=lambda r: r["functions"])
    axes[0].bar([r["chain"] for r in first], [r["median"] for r in first], yerr=[r["ci95"] for r in first], capsize=3)
    axes[0].set(title="Table I chains (paper Fig. 7): TCP S -> D", ylabel="Gbit/s")
    placed = placement_rows(rows)
    labels = list(placed)
    axes[1].bar([x - 0.2 for x in range(len(labels))], [placed[k] for k in labels], width=0.4, label="srfabric (here)")
    axes[1].bar([x + 0.2 for x in range(len(labels))], [PAPER_TABLE_II[k] for k in labels], width=0.4,
                label="OpenStack (paper, 10 GbE)")
    axes[1].set_xticks(range(len(labels)), labels)
    axes[1].set(title="Table II: one VNF, by placement", ylabel="Gbit/s")
    axes[1].legend(fontsize=7)
    for ax in axes:
        ax.grid(alpha=0.3, axis="y")
    save(figure, path, "paper: C0 above 8 Gb/s, every function and every node crossing costs; "
                       "Table II 7.01 / 3.39 / 1.99 Gb/s")


def placement_rows(rows: list[Row]) -> dict[str, float]:
    placed = {}
    for placement in TABLE_II:
        name = "C1" if placement == "same as S" else f"1 VNF {placement}"
        hit = [r for r in rows if r["chain"] == name]
        if hit:
            placed[placement] = hit[0]["median"]
    return placed


def compare(rows: list[Row], extra: dict[str, Any]) -> list[str]:
    first = sorted((r for r in rows if r["table"] == "table I"), key=lambda r: r["functions"])
    out = []
    if first:
        out.append("Table I: " + ", ".join(f"{r['chain']} {r['median']:.2f}" for r in first) + " Gb/s "
                   "(paper: C0 above 8 Gb/s, falling with every function and node crossing)")
    placed = placement_rows(rows)
    if placed:
        out.append("Table II: " + ", ".join(f"{k} {v:.2f} (paper {PAPER_TABLE_II[k]})" for k, v in placed.items())
                   + " Gb/s")
    return out


EXPERIMENT = Experiment(
    "sfc-throughput", "TCP over the OpenStack study's chains C0..C6 and placements, on the source-routed fabric",
    "Table I / Fig. 7: C0 above 8 Gb/s, each function and each crossing between compute nodes costs throughput; "
    "Table II: one VNF on S's node 7.01, on D's node 3.39, on another node 1.99 Gb/s", count, run, plot, compare)
