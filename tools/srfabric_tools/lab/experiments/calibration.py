"""Calibration (container-chaining study, Fig. 1-3): iperf3 over one veth pair."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from srfabric_tools.lab.core import Context, Experiment, Settings
from srfabric_tools.lab.iperf import Traffic, measure
from srfabric_tools.lab.plot import lines, pyplot, save
from srfabric_tools.lab.topologies import namespace_chain

Row = dict[str, Any]


def grid(settings: Settings) -> tuple[list[int], list[int], list[int]]:
    """TCP flow counts, UDP datagram sizes and UDP flow counts."""
    if settings.quick:
        return [1, 2], [64, 8192], [1]
    # 8 flows (the paper's top point, on 8 cores) adds nothing past 4 on 2 cores; left out to keep `lab all` in an hour.
    return [1, 2, 4], [64, 1472, 32768], [4]


def count(settings: Settings) -> int:
    tcp, sizes, udp_flows = grid(settings)
    return 2 * len(tcp) + len(sizes) * len(udp_flows)


def run(ctx: Context) -> None:
    tcp_flows, sizes, udp_flows = grid(ctx.settings)
    chain = namespace_chain(ctx.lab, 1)
    seconds = ctx.settings.seconds

    def once(traffic: Traffic, gbps_only: bool) -> dict[str, float]:
        got = measure(ctx.lab, chain.client, chain.server, chain.server_ip, traffic)
        if gbps_only:
            return {"gbps": got.bits_per_second / 1e9}
        return {"gbps": got.bits_per_second / 1e9, "mpps": got.packets_per_second / 1e6}

    for zerocopy in (False, True):
        for flows in tcp_flows:
            traffic = Traffic("tcp", flows, seconds, zerocopy=zerocopy)
            ctx.repeat({"protocol": "tcp", "zerocopy": zerocopy, "flows": flows, "size": 0},
                       partial(once, traffic, True))
    for flows in udp_flows:
        for size in sizes:
            traffic = Traffic("udp", flows, seconds, length=size)
            ctx.repeat({"protocol": "udp", "zerocopy": False, "flows": flows, "size": size},
                       partial(once, traffic, False))


def plot(rows: list[Row], extra: dict[str, Any], path: Path) -> None:
    plt = pyplot()
    figure, axes = plt.subplots(1, 3, figsize=(14, 4))
    tcp = [r for r in rows if r["protocol"] == "tcp"]
    lines(axes[0], tcp, "flows", lambda r: "zerocopy (-Z)" if r["zerocopy"] else "plain")
    axes[0].set(title="Fig. 1: TCP over veth", xlabel="parallel flows", ylabel="Gbit/s")
    udp = [r for r in rows if r["protocol"] == "udp"]
    lines(axes[1], udp, "size", lambda r: f"{r['flows']} flows", keep=lambda r: r["metric"] == "gbps")
    axes[1].set(title="Fig. 2: UDP over veth", xlabel="datagram size (bytes)", ylabel="Gbit/s", xscale="log")
    lines(axes[2], udp, "size", lambda r: f"{r['flows']} flows", keep=lambda r: r["metric"] == "mpps")
    axes[2].set(title="Fig. 3: UDP over veth", xlabel="datagram size (bytes)", ylabel="Mpackets/s", xscale="log")
    save(figure, path, "paper (8 cores, kernel 4.4): TCP 63.9 Gb/s, TCP -Z 154.8 Gb/s, UDP 32 KB x 6 flows 105 Gb/s")


def compare(rows: list[Row], extra: dict[str, Any]) -> list[str]:
    def best(keep: Any) -> Row | None:
        hits = [r for r in rows if keep(r)]
        return max(hits, key=lambda r: r["median"]) if hits else None

    plain = best(lambda r: r["protocol"] == "tcp" and not r["zerocopy"])
    zero = best(lambda r: r["protocol"] == "tcp" and r["zerocopy"])
    udp = best(lambda r: r["protocol"] == "udp" and r["metric"] == "gbps")
    lines_out = []
    if plain and zero:
        lines_out.append(f"TCP best {plain['median']:.1f} Gb/s ({plain['flows']} flows), with -Z "
                         f"{zero['median']:.1f} Gb/s ({zero['flows']} flows); paper 63.9 and 154.8 Gb/s (8 flows)")
    if udp:
        lines_out.append(f"UDP best {udp['median']:.1f} Gb/s with {udp['size']} B datagrams and {udp['flows']} flows; "
                         "paper 105 Gb/s with 32 KB and 6 flows")
    return lines_out


EXPERIMENT = Experiment(
    "calibration", "iperf3 over one veth pair: TCP with/without zerocopy, UDP by datagram size",
    "Fig. 1-3: TCP peaks at 63.9 Gb/s (154.8 with zerocopy, +25-170 %); UDP grows with datagram size to "
    "105 Gb/s at 32 KB", count, run, plot, compare)
