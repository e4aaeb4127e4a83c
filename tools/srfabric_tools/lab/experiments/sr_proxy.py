"""What the SR proxy costs: one 3-function chain, its functions SR-aware (the header rides through them) or
SR-unaware (the switch strips the header before each and writes the rest of the path after it), side by side.

The first two modes run the same kernel forwarders (tc mirred), so the difference is the proxy alone: one more
entry hit at each function's switch on the way in (strip) and on the way out (a new header). The third runs
Linux routing namespaces as the functions (they forward by IP: new MACs, TTL minus one), which only the proxy
can chain.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from srfabric.model.fabric import ServiceFunction
from srfabric_tools.lab.core import Context, Experiment, Point, Settings
from srfabric_tools.lab.experiments.sr_vs_rules import sample
from srfabric_tools.lab.fabric import LabFabric
from srfabric_tools.lab.fabric_topos import chain_between, line
from srfabric_tools.lab.iperf import Traffic
from srfabric_tools.lab.plot import pyplot, save

Row = dict[str, Any]
MODES = ("SR-aware", "SR proxy", "SR proxy, routers")
FUNCTIONS = ("v1", "v2", "v3")


def count(settings: Settings) -> int:
    return len(MODES)


def declare(fabric: LabFabric, functions: list[ServiceFunction]) -> None:
    async def add() -> None:
        for function in functions:
            fabric.controller.add_function(function)

    fabric.runner.call(add())


def make_routers(fabric: LabFabric) -> list[ServiceFunction]:
    """Each function's namespace stops mirroring and routes instead: an address per side, every host on-link
    behind its egress side; the functions get their ingress MACs (frames enter addressed to them)."""
    lab, made = fabric.lab, []
    for index, name in enumerate(FUNCTIONS, start=1):
        ns = fabric.namespaces[name]
        for side in ("eth0", "eth1"):
            lab.run(["tc", "qdisc", "del", "dev", side, "clsact"], ns=ns)
            lab.run(["sysctl", "-qw", f"net.ipv4.conf.{side}.rp_filter=0"], ns=ns)
        lab.run(["sysctl", "-qw", "net.ipv4.ip_forward=1", "net.ipv4.conf.all.rp_filter=0"], ns=ns)
        lab.addr(ns, "eth0", f"10.9.{index}.1/32")
        lab.addr(ns, "eth1", f"10.9.{index}.2/32")
        lab.run(["ip", "route", "add", "10.0.0.0/8", "dev", "eth1"], ns=ns)
        mac = int(lab.run(["cat", "/sys/class/net/eth0/address"], ns=ns).strip().replace(":", ""), 16)
        made.append(replace(fabric.controller.fabric.functions[name], proxy=True, mac=mac))
    return made


def run(ctx: Context) -> None:
    spec = line(3, len(FUNCTIONS))
    ctx.extra["topology"] = ("3 OVS switches (userspace) in a line, S on sw1, D on sw3, v1, v2, v3 one per switch; "
                             "codec mac-nibble; TCP S -> D and ping through v1, v2, v3")
    pings = 20 if ctx.settings.quick else 100
    with LabFabric(ctx.lab, spec) as fabric:
        ends = fabric.endpoints("S", "D")
        traffic = Traffic("tcp", 1, ctx.settings.seconds)
        plain = [fabric.controller.fabric.functions[name] for name in FUNCTIONS]
        for index, mode in enumerate(MODES, start=1):
            if mode == "SR proxy":
                declare(fabric, [replace(f, proxy=True) for f in plain])
            elif mode == "SR proxy, routers":
                declare(fabric, make_routers(fabric))
            fabric.set_chains([chain_between(spec, f"chain{index}", FUNCTIONS, index)])
            params = {"mode": mode, "functions": len(FUNCTIONS)}
            ctx.repeat(params, partial(sample, ctx, ends, traffic, pings))
            entries = fabric.entries_per_switch()  # read from the switches: what the proxy costs in state
            ctx.points.append(Point(params, "entries_total", [float(sum(entries.values()))]))
    ctx.lab.close()


def plot(rows: list[Row], extra: dict[str, Any], path: Path) -> None:
    plt = pyplot()
    figure, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, metric, label in ((axes[0], "gbps", "TCP Gbit/s"), (axes[1], "rtt_ms", "ping round trip (ms)")):
        mine = [r for r in rows if r["metric"] == metric]
        ax.bar([r["mode"] for r in mine], [r["median"] for r in mine], yerr=[r["ci95"] for r in mine], capsize=3)
        ax.set(ylabel=label, title=f"3-function chain: {label}")
        ax.grid(alpha=0.3, axis="y")
    save(figure, path, "the same chain with its functions SR-aware, proxied, and proxied Linux routers")


def compare(rows: list[Row], extra: dict[str, Any]) -> list[str]:
    cells = {(r["mode"], r["metric"]): r["median"] for r in rows}
    out = [f"{mode}: {cells[mode, 'gbps']:.2f} Gb/s, {cells[mode, 'rtt_ms']:.3f} ms round trip, "
           f"{cells.get((mode, 'entries_total'), 0):.0f} entries on the three switches"
           for mode in MODES if (mode, "gbps") in cells and (mode, "rtt_ms") in cells]
    if all((mode, "gbps") in cells for mode in MODES[:2]):
        out.append(f"the proxy keeps {cells['SR proxy', 'gbps'] / cells['SR-aware', 'gbps']:.2f} of the SR-aware "
                   f"throughput and adds {cells['SR proxy', 'rtt_ms'] - cells['SR-aware', 'rtt_ms']:+.3f} ms "
                   "to the round trip")
    return out


EXPERIMENT = Experiment(
    "sr-proxy", "a 3-function chain with SR-aware functions vs the SR proxy (same forwarders), and proxied routers",
    "not in the papers: SRv6's End.AS proxy plays this part for SR-unaware functions; the OpenStack SFC study's "
    "functions were SR-unaware (networking-sfc's correlation None)", count, run, plot, compare)
