"""Namespace chains (container-chaining study, Fig. 7-8): routing namespaces joined by veth or through OVS."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from srfabric_tools.lab.core import Context, Experiment, Settings
from srfabric_tools.lab.iperf import Traffic
from srfabric_tools.lab.plot import lines, pyplot, save
from srfabric_tools.lab.stats import fit_power_law
from srfabric_tools.lab.topologies import chain_gbps, namespace_chain

Row = dict[str, Any]
TCP_FLOWS = 4
UDP_FLOWS = 4
UDP_SIZE = 1472  # one datagram per 1500-byte frame, so every hop routes whole packets


def grid(settings: Settings) -> tuple[list[int], list[int]]:
    """Chain lengths for TCP and for UDP."""
    if settings.quick:
        return [1, 3], [1]
    return [1, 2, 5, 10, 20], [1, 20]


def count(settings: Settings) -> int:
    tcp, udp = grid(settings)
    return 2 * (len(tcp) + len(udp))


def run(ctx: Context) -> None:
    tcp_lengths, udp_lengths = grid(ctx.settings)
    for link in ("veth", "ovs"):
        for n in sorted(set(tcp_lengths) | set(udp_lengths)):
            chain = namespace_chain(ctx.lab, n, via_ovs=link == "ovs")
            runs = [("tcp", Traffic("tcp", TCP_FLOWS, ctx.settings.seconds))] if n in tcp_lengths else []
            if n in udp_lengths:
                runs.append(("udp", Traffic("udp", UDP_FLOWS, ctx.settings.seconds, length=UDP_SIZE)))
            for protocol, traffic in runs:
                ctx.repeat({"link": link, "protocol": protocol, "namespaces": n, "flows": traffic.flows},
                           partial(chain_gbps, ctx.lab, chain, traffic))
            ctx.lab.close()
    fits = {}
    for link in ("veth", "ovs"):
        tcp = sorted((r for r in (p.row() for p in ctx.points) if r["link"] == link and r["protocol"] == "tcp"),
                     key=lambda r: r["namespaces"])
        if len(tcp) >= 2:
            fit = fit_power_law([r["namespaces"] for r in tcp], [r["median"] for r in tcp])
            fits[link] = {"loss_per_hop": round(fit.loss, 4), "t_in_gbps": round(fit.t_in, 3), "r2": round(fit.r2, 3)}
    ctx.extra["fit"] = {"veth": fits.get("veth"), "ovs": fits.get("ovs")}


def plot(rows: list[Row], extra: dict[str, Any], path: Path) -> None:
    plt = pyplot()
    figure, axes = plt.subplots(1, 2, figsize=(12, 4))
    fit = extra.get("fit", {})
    for ax, protocol, title in ((axes[0], "tcp", "Fig. 7: TCP"), (axes[1], "udp", "Fig. 8: UDP")):
        lines(ax, [r for r in rows if r["protocol"] == protocol], "namespaces",
              lambda r: f"{r['link']} ({r['flows']} flows)")
        if protocol == "tcp":
            for link, params in fit.items():
                if params:
                    xs = sorted({r["namespaces"] for r in rows if r["protocol"] == "tcp"})
                    ax.plot(xs, [params["t_in_gbps"] * (1 - params["loss_per_hop"]) ** x for x in xs], ":",
                            label=f"fit {link}: l = {params['loss_per_hop']:.1%}")
            ax.legend(fontsize=7)
        ax.set(title=f"{title} over a chain of namespaces", xlabel="namespaces in the chain (n)", ylabel="Gbit/s")
    save(figure, path, "paper: t_out = (1 - l)^n t_in, l about 11 % per namespace (veth, 8 TCP flows), "
                       "flattening to about 2 % near n = 20; OVS per hop loses more")


def compare(rows: list[Row], extra: dict[str, Any]) -> list[str]:
    out = []
    for link, params in extra.get("fit", {}).items():
        if params:
            out.append(f"TCP over {link}: fitted loss per namespace l = {params['loss_per_hop']:.1%} "
                       f"(R^2 {params['r2']:.2f}); paper about 11 % (veth), more with OVS")
    return out


EXPERIMENT = Experiment(
    "ns-chain", "TCP and UDP through chains of routing namespaces, veth vs an OVS bridge per hop",
    "Fig. 7-8: throughput falls like (1 - l)^n with l about 11 % per namespace over veth, flattening for long "
    "chains; an OVS bridge per hop costs more than a veth", count, run, plot, compare)
