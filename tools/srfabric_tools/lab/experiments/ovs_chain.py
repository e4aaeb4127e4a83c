"""OVS chains (container-chaining study, Fig. 5): TCP across n bridges joined by veth or by patch ports."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from srfabric_tools.lab.core import Context, Experiment, Settings
from srfabric_tools.lab.iperf import Traffic
from srfabric_tools.lab.netlab import OVS_DATAPATH
from srfabric_tools.lab.plot import lines, pyplot, save
from srfabric_tools.lab.topologies import chain_gbps, ovs_chain

Row = dict[str, Any]
FLOWS = 8


def lengths(settings: Settings) -> list[int]:
    return [1, 3] if settings.quick else [1, 5, 10, 20]


def count(settings: Settings) -> int:
    return 2 * len(lengths(settings))


def run(ctx: Context) -> None:
    ctx.extra["datapath"] = f"Open vSwitch userspace datapath ({OVS_DATAPATH}); the paper used the kernel module"
    for join in ("veth", "patch"):
        for n in lengths(ctx.settings):
            chain = ovs_chain(ctx.lab, n, join)
            traffic = Traffic("tcp", FLOWS, ctx.settings.seconds)
            ctx.repeat({"join": join, "bridges": n, "flows": FLOWS},
                       partial(chain_gbps, ctx.lab, chain, traffic))
            ctx.lab.close()


def plot(rows: list[Row], extra: dict[str, Any], path: Path) -> None:
    plt = pyplot()
    figure, ax = plt.subplots(figsize=(6, 4))
    lines(ax, rows, "bridges", lambda r: f"{r['join']} ({r['flows']} TCP flows)")
    ax.set(title="Fig. 5: TCP over a chain of OVS bridges (userspace datapath)", xlabel="bridges in the chain",
           ylabel="Gbit/s")
    save(figure, path, "paper (kernel datapath): patch ports flat in chain length, veth falls with every bridge")


def compare(rows: list[Row], extra: dict[str, Any]) -> list[str]:
    out = [extra.get("datapath", "")]
    for join in ("veth", "patch"):
        hits = sorted((r for r in rows if r["join"] == join), key=lambda r: r["bridges"])
        if len(hits) >= 2:
            first, last = hits[0], hits[-1]
            out.append(f"{join}: {first['median']:.2f} Gb/s at {first['bridges']} bridge(s), {last['median']:.2f} "
                       f"at {last['bridges']} ({last['median'] / first['median']:.0%} kept)")
    return out


EXPERIMENT = Experiment(
    "ovs-chain", "TCP over a chain of OVS bridges joined by veth pairs vs patch ports",
    "Fig. 5 (kernel datapath, 8 TCP flows): patch-port chains keep their throughput whatever the length, "
    "veth-joined chains lose throughput with every bridge", count, run, plot, compare)
