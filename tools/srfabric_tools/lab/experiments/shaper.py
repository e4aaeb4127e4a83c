"""Shaper VNFs (container-chaining study, Fig. 11): chains of namespaces each running an HTB qdisc."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from srfabric_tools.lab.core import Context, Experiment, Settings
from srfabric_tools.lab.iperf import Traffic
from srfabric_tools.lab.plot import lines, pyplot, save
from srfabric_tools.lab.topologies import chain_gbps, namespace_chain
from srfabric_tools.lab.vnfs import htb_commands

Row = dict[str, Any]
UDP_SIZE = 1472
FLOWS = 4


def lengths(settings: Settings) -> list[int]:
    return [2] if settings.quick else [2, 10]


def count(settings: Settings) -> int:
    return 2 * len(lengths(settings))


def run(ctx: Context) -> None:
    for shaped in (False, True):
        for n in lengths(ctx.settings):
            chain = namespace_chain(ctx.lab, n)
            if shaped:
                for ns in chain.forwarders:
                    for args in htb_commands("right"):
                        ctx.lab.run(args, ns=ns)
            traffic = Traffic("udp", FLOWS, ctx.settings.seconds, length=UDP_SIZE)
            ctx.repeat({"vnf": "htb" if shaped else "routing only", "namespaces": n, "flows": FLOWS},
                       partial(chain_gbps, ctx.lab, chain, traffic))
            ctx.lab.close()


def plot(rows: list[Row], extra: dict[str, Any], path: Path) -> None:
    plt = pyplot()
    figure, ax = plt.subplots(figsize=(6, 4))
    lines(ax, rows, "namespaces", lambda r: f"{r['vnf']} ({r['flows']} UDP flows)")
    ax.set(title="Fig. 11: UDP over a chain of HTB shaper VNFs", xlabel="namespaces in the chain (n)",
           ylabel="Gbit/s")
    save(figure, path, "paper: close to the 100-rule firewall chain; the cost is mostly the namespaces, not the shaper")


def compare(rows: list[Row], extra: dict[str, Any]) -> list[str]:
    out = []
    for n in sorted({r["namespaces"] for r in rows}):
        plain = [r for r in rows if r["namespaces"] == n and r["vnf"] == "routing only"]
        htb = [r for r in rows if r["namespaces"] == n and r["vnf"] == "htb"]
        if plain and htb:
            out.append(f"n={n}: HTB {htb[0]['median']:.2f} Gb/s vs routing only {plain[0]['median']:.2f} "
                       f"({htb[0]['median'] / plain[0]['median']:.0%})")
    return out


EXPERIMENT = Experiment(
    "shaper", "chains of tc HTB shaper VNFs (1 Tb/s limit, large buffer)",
    "Fig. 11: like the 100-rule firewall chain; the namespaces cost more than the shaping", count, run, plot, compare)
