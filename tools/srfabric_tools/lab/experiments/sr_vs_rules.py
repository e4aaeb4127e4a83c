"""Source routing vs hop-by-hop rules: the same chains, topology and traffic, steered both ways."""

from __future__ import annotations

import re
from functools import partial
from pathlib import Path
from typing import Any

from srfabric.errors import SrfabricError
from srfabric.model.chain import Chain, FlowClassifier
from srfabric.rules.compile import compile_fabric, compile_state
from srfabric.rules.entries import Kind
from srfabric_tools.lab.core import Context, Experiment, Point, Settings
from srfabric_tools.lab.fabric import LabFabric
from srfabric_tools.lab.fabric_topos import chain_between, line
from srfabric_tools.lab.iperf import Traffic
from srfabric_tools.lab.plot import lines, pyplot, save
from srfabric_tools.lab.topologies import NamespaceChain, chain_gbps

Row = dict[str, Any]
STEERINGS = ("source-routing", "hop-by-hop")
RTT = re.compile(r"= [\d.]+/([\d.]+)/")


def lengths(settings: Settings) -> list[int]:
    return [1, 3] if settings.quick else [1, 2, 5, 10]


def count(settings: Settings) -> int:
    return 2 * len(lengths(settings))


def ping_ms(ctx: Context, client: str, address: str, pings: int) -> float:
    out = ctx.lab.run(["ping", "-q", "-c", str(pings), "-i", "0.01", "-W", "1", address], ns=client, check=False)
    found = RTT.search(out)
    if not found:
        raise SrfabricError("ping", f"no round-trip summary from ping: {out.strip()[-200:]!r}")
    return float(found.group(1))


def state_vs_chains(counts: tuple[int, ...] = (1, 10, 100)) -> list[dict[str, Any]]:
    """Compiled entries per switch for many 10-function chains (distinct TCP ports), both steerings; no network."""
    spec = line(5, 10)
    fabric = spec.to_fabric()
    functions = tuple(f"v{i}" for i in range(1, 11))
    rows = []
    for count in counts:
        chains = [Chain(f"c{i}", FlowClassifier(protocol="tcp", destination_port_range=(10000 + i, 10000 + i)),
                        functions, "S", "D", i + 1) for i in range(count)]
        for steering in STEERINGS:
            # Source routing's default routes write their headers through groups (one per other edge): state too.
            if steering == "source-routing":
                state = compile_state(fabric, chains, "mac-nibble")
                tables, groups = state.entries, state.groups
            else:
                tables, groups = compile_fabric(fabric, chains, "mac-nibble", steering=steering), {}
            per_switch = {sw.name: len(tables[sw.dpid]) for sw in spec.switches.values()}
            with_chain = sum(1 for entries in tables.values() if any(e.kind == Kind.CHAIN for e in entries))
            rows.append({"steering": steering, "chains": count, "entries_max": max(per_switch.values()),
                         "entries_total": sum(per_switch.values()), "switches_with_chain_state": with_chain,
                         "groups_total": sum(len(held) for held in groups.values())})
    return rows


def sample(ctx: Context, ends: NamespaceChain, traffic: Traffic, pings: int) -> dict[str, float]:
    """Throughput first, then the round trip on an idle chain."""
    return chain_gbps(ctx.lab, ends, traffic) | {"rtt_ms": ping_ms(ctx, ends.client, ends.server_ip, pings)}


def run(ctx: Context) -> None:
    spec = line(5, 10)
    ctx.extra["state_vs_chains"] = state_vs_chains((1, 10) if ctx.settings.quick else (1, 10, 100, 300))
    ctx.extra["topology"] = "5 OVS switches (userspace) in a line, S on sw1, D on sw5, v1..v10 two per switch"
    pings = 20 if ctx.settings.quick else 100
    for steering in STEERINGS:
        with LabFabric(ctx.lab, spec, steering=steering) as fabric:
            ends = fabric.endpoints("S", "D")
            traffic = Traffic("tcp", 1, ctx.settings.seconds)
            for n in lengths(ctx.settings):
                functions = tuple(f"v{i}" for i in range(1, n + 1))
                fabric.set_chains([chain_between(spec, f"chain{n}", functions, n)])
                params: dict[str, Any] = {"steering": steering, "functions": n}
                ctx.repeat(params, partial(sample, ctx, ends, traffic, pings))
                entries = fabric.entries_per_switch()
                ctx.points.append(Point(params, "entries_max", [float(max(entries.values()))]))
                ctx.points.append(Point(params, "entries_total", [float(sum(entries.values()))]))
        ctx.lab.close()


def plot(rows: list[Row], extra: dict[str, Any], path: Path) -> None:
    plt = pyplot()
    figure, axes = plt.subplots(1, 4, figsize=(18, 4))
    for ax, metric, label in ((axes[0], "gbps", "TCP Gbit/s"), (axes[1], "rtt_ms", "ping round trip (ms)"),
                              (axes[2], "entries_max", "flow entries on the fullest switch")):
        lines(ax, [r for r in rows if r["metric"] == metric], "functions", lambda r: r["steering"])
        ax.set(xlabel="functions in the chain", ylabel=label)
    axes[0].set_title("throughput")
    axes[1].set_title("latency")
    axes[2].set_title("forwarding state, one chain (read from the switches)")
    state = extra.get("state_vs_chains", [])
    for steering in STEERINGS:
        mine = [r for r in state if r["steering"] == steering]
        axes[3].plot([r["chains"] for r in mine], [r["entries_max"] for r in mine], marker="o", label=steering)
    axes[3].set(xscale="log", yscale="log", xlabel="ten-function chains", ylabel="entries on the fullest switch",
                title="forwarding state vs chains (compiled)")
    axes[3].legend(fontsize=7)
    axes[3].grid(alpha=0.3)
    save(figure, path, "same line of 5 switches, same chains and traffic; none of the papers made this comparison")


def compare(rows: list[Row], extra: dict[str, Any]) -> list[str]:
    out = []
    for n in sorted({r["functions"] for r in rows}):
        cells = {(r["steering"], r["metric"]): r["median"] for r in rows if r["functions"] == n}
        if all((s, "gbps") in cells for s in STEERINGS):
            out.append(f"{n} functions: source routing {cells['source-routing', 'gbps']:.2f} Gb/s, "
                       f"{cells['source-routing', 'rtt_ms']:.3f} ms, {cells['source-routing', 'entries_max']:.0f} "
                       f"entries max; hop-by-hop {cells['hop-by-hop', 'gbps']:.2f} Gb/s, "
                       f"{cells['hop-by-hop', 'rtt_ms']:.3f} ms, {cells['hop-by-hop', 'entries_max']:.0f} entries max")
    for row in extra.get("state_vs_chains", []):
        if row["chains"] == max(r["chains"] for r in extra["state_vs_chains"]):
            out.append(f"{row['chains']} ten-function chains compiled, {row['steering']}: {row['entries_max']} entries "
                       f"on the fullest switch, chain state on {row['switches_with_chain_state']} of 5 switches")
    return out


EXPERIMENT = Experiment(
    "sr-vs-rules", "one chain of 1..10 VNFs steered by source routing vs by hop-by-hop rules on every switch",
    "not in the papers: the SFC-in-DC paper counted forwarding state (Fig. 3) but measured no traffic against "
    "rule-based steering", count, run, plot, compare)
