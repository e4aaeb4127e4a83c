"""Coupling Source Routing with TSN, Fig. 9: the latency taprio adds on a virtual switch, by gate schedule.

A talker and a listener namespace meet at one Open vSwitch bridge with the
kernel datapath; the bridge puts the probe in queue 6 (skb priority 7), and
the egress port towards the listener runs taprio with a 1 ms cycle: priority 7
open for X µs, then best effort for Y µs (the paper's X:Y), or no taprio at
all. The probe is 100-byte UDP at 2,000 packets/s, each frame at a random
point of its 500 µs period, as from a sender that knows no schedule. For
arrivals spread evenly over the cycle the gate adds Y² / (2 × 1000) µs on
average (modelled: ``theory_wait_us``). The paper generated its probe with
D-ITG: each point is measured with both, side by side, our talker and
listener, then D-ITG's ITGSend/ITGRecv (same size and rate, exponential
inter-departure times: arrivals at random points of the cycle; one-way delays
from its receiver log, first frames left out likewise). Needs taprio and
openvswitch.ko: run it as ``srfabric kernel-lab run --ovs -- srfabric lab tsn-fig9``.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

from srfabric.errors import ModelError
from srfabric.tsn.gates.gcl import BE_CLASS, TT_CLASS, GateEntry, PortGcl
from srfabric.tsn.gates.render import to_taprio
from srfabric_tools.lab import ditg
from srfabric_tools.lab.core import Context, Experiment, Settings
from srfabric_tools.lab.plot import pyplot, save
from srfabric_tools.netconf_lab.one_port import NetconfPort
from srfabric_tools.testbed.stations.endpoints import summary

Row = dict[str, Any]
CYCLE_US = 1000
RATE_PPS = 2000
SIZE = 100
PORT = 5009
DITG_PORT = 5010
DITG_SIGNAL_PORT = 9000  # ITGRecv's control channel
WARMUP = 50  # frames sent first and not counted: a flow's first frames take OVS's slow path and cold caches


def schedules(settings: Settings) -> list[int | None]:
    """Priority-7 open times in µs (None: no taprio)."""
    return [None, 200, 500, 800] if settings.quick else [None, 100, 200, 300, 400, 500, 600, 700, 800, 900]


def count(settings: Settings) -> int:
    return len(schedules(settings))


def theory_wait_us(open_us: int | None) -> float:
    """Mean gate wait for arrivals spread evenly over the cycle: closed for Y of C, Y/2 on average.

    >>> theory_wait_us(200), theory_wait_us(None)
    (320.0, 0.0)
    """
    if open_us is None:
        return 0.0
    closed = CYCLE_US - open_us
    return closed * closed / (2 * CYCLE_US)


def loaded(module: str) -> bool:
    """Whether the kernel has ``module`` (loaded now if it is a module)."""
    subprocess.run(["modprobe", "-q", module], capture_output=True, check=False)
    return Path(f"/sys/module/{module}").exists()


def taprio_kernel(experiment: str = "tsn-fig9") -> None:
    """Refuse, by name, a kernel without taprio or openvswitch.ko."""
    for module in ("sch_taprio", "openvswitch"):
        if not loaded(module):
            raise ModelError("kernel", f"this kernel has no {module}; run it in the kernel lab: "
                                       f"srfabric kernel-lab run --ovs -- srfabric lab {experiment}")


def virtual_switch(lab: Any) -> tuple[str, str, str]:
    """Talker and listener namespaces at one kernel-datapath bridge that puts the talker's frames in queue 6
    (priority 7) and returns the listener's (best effort, ungated); returns the two namespaces and the bridge's
    port towards the listener (8 queues)."""
    talker, listener = lab.add_ns("tk"), lab.add_ns("ls")
    bridge = lab.ovs_bridge("br", datapath="system")
    lab.veth(talker, "eth0", None, lab.name("p1"), queues=8)
    lab.veth(listener, "eth0", None, lab.name("p2"), queues=8)
    lab.addr(talker, "eth0", "10.9.0.1/24")
    lab.addr(listener, "eth0", "10.9.0.2/24")
    lab.run(["ip", "-n", talker, "neigh", "add", "10.9.0.2", "lladdr", _mac(lab, listener), "dev", "eth0"])
    lab.run(["ip", "-n", listener, "neigh", "add", "10.9.0.1", "lladdr", _mac(lab, talker), "dev", "eth0"])
    lab.ovs_port(bridge, lab.name("p1"), 1)
    lab.ovs_port(bridge, lab.name("p2"), 2)
    lab.run(["ovs-ofctl", "del-flows", bridge])
    lab.run(["ovs-ofctl", "add-flow", bridge, "in_port=1,actions=set_queue:6,output:2"])
    lab.run(["ovs-ofctl", "add-flow", bridge, "in_port=2,actions=output:1"])  # D-ITG's signalling answers
    return talker, listener, lab.name("p2")


def open_gates(lab: Any, port: str, open_ns: int, cycle_ns: int) -> None:
    """taprio on ``port``: priority 7 (class 1) open for the first ``open_ns`` of each cycle, best effort after."""
    gcl = PortGcl("", "", port, cycle_ns, 0, [GateEntry(1 << TT_CLASS, open_ns),
                                              GateEntry(1 << BE_CLASS, cycle_ns - open_ns)])
    lab.run(shlex.split(to_taprio(gcl)))


def run(ctx: Context, gates: str = "taprio") -> None:
    taprio_kernel()
    lab = ctx.lab
    talker, listener, egress = virtual_switch(lab)
    if gates == "netconf":
        with NetconfPort(egress, Path(tempfile.mkdtemp(prefix="srfabric-fig9-"))) as port:
            measure(ctx, talker, listener, port.push)
            ctx.extra["pushes"] = port.pushes
    else:
        measure(ctx, talker, listener, partial(local_gates, lab, egress))


def local_gates(lab: Any, egress: str, open_us: int | None) -> None:
    if open_us is None:
        lab.run(["tc", "qdisc", "del", "dev", egress, "root"], check=False)
    else:
        open_gates(lab, egress, open_us * 1000, CYCLE_US * 1000)


def measure(ctx: Context, talker: str, listener: str, gate: Any) -> None:
    frames = max(20, int(ctx.settings.seconds * RATE_PPS))
    for open_us in schedules(ctx.settings):
        gate(open_us)

        def sample(open_us: int | None = open_us) -> dict[str, float]:
            got = probe(ctx, talker, listener, frames)
            other = probe_ditg(ctx, talker, listener, frames)
            return {"mean_us": got["mean_ns"] / 1000, "p50_us": got["p50_ns"] / 1000,
                    "p99_us": got["p99_ns"] / 1000, "lost": got["lost"],
                    "ditg_mean_us": other["mean_ns"] / 1000, "ditg_p50_us": other["p50_ns"] / 1000,
                    "ditg_p99_us": other["p99_ns"] / 1000, "ditg_frames": other["frames"]}

        label = "none" if open_us is None else f"{open_us}:{CYCLE_US - open_us}"
        ctx.repeat({"schedule": label, "open_us": open_us or 0, "taprio": open_us is not None,
                    "theory_wait_us": theory_wait_us(open_us)}, sample)


def _mac(lab: Any, ns: str) -> str:
    shown = lab.run(["ip", "-j", "link", "show", "eth0"], ns=ns)
    return str(json.loads(shown)[0]["address"]) if shown else "00:00:00:00:00:02"


def probe(ctx: Context, talker: str, listener: str, frames: int) -> dict[str, Any]:
    """One run of the probe: listener first, then the talker; the listener's summary."""
    endpoints = [sys.executable, "-m", "srfabric_tools.testbed.stations.endpoints"]
    receiving = ctx.lab.spawn([*endpoints, "listen", "--port", str(PORT), "--count", str(frames),
                               "--timeout", "5", "--skip", str(WARMUP)], ns=listener)
    assert receiving.stdout is not None
    if receiving.stdout.readline().strip() != b"listening":
        raise ModelError("listener", "did not start")
    ctx.lab.run([*endpoints, "talk", "--dst", "10.9.0.2", "--port", str(PORT), "--count", str(frames + WARMUP),
                 "--period-ns", str(1_000_000_000 // RATE_PPS), "--size", str(SIZE), "--spread"], ns=talker)
    out, _ = receiving.communicate(timeout=120)
    ctx.lab.processes.remove(receiving)
    result = dict(json.loads(out.decode().strip().splitlines()[-1]))
    if not result.get("frames"):
        raise ModelError("probe", f"no frame arrived: {result}")
    return result


def probe_ditg(ctx: Context, talker: str, listener: str, frames: int) -> dict[str, Any]:
    """The same probe from D-ITG: ITGRecv in the listener, ITGSend in the talker for as long as our talker
    sends ``frames``; per-packet delays from ITGDec's text log, the first ``WARMUP`` left out."""
    with tempfile.TemporaryDirectory(prefix="srfabric-ditg-") as name:  # the logs go once decoded
        folder = Path(name)
        receiver_log, sender_log, text = folder / "recv.log", folder / "send.log", folder / "recv.txt"
        receiving = ctx.lab.spawn(ditg.RECEIVER, ns=listener)
        try:
            _wait_listening(ctx, listener, DITG_SIGNAL_PORT)
            duration_ms = max(1, (frames + WARMUP) * 1000 // RATE_PPS)
            ctx.lab.run(ditg.send_command("10.9.0.2", DITG_PORT, SIZE, RATE_PPS, duration_ms, str(receiver_log),
                                          str(sender_log)), ns=talker)
        finally:
            ctx.lab.stop(receiving)
        ctx.lab.run(ditg.decode_command(str(receiver_log), str(text)))
        delays = [delay for seq, delay in ditg.delays_ns(text.read_text()) if seq > WARMUP]
    if not delays:
        raise ModelError("d-itg", f"no packet after the first {WARMUP} in ITGRecv's log")
    return summary(delays, sent=len(delays))


def _wait_listening(ctx: Context, ns: str, port: int, patience_s: float = 30.0) -> None:
    """Until something accepts TCP connections on ``port`` in namespace ``ns`` (ITGRecv's start)."""
    deadline = time.monotonic() + patience_s
    while time.monotonic() < deadline:
        shown = ctx.lab.run(["ss", "-Hltn", f"sport = :{port}"], ns=ns, check=False)
        if shown and str(port) in shown:
            return
        time.sleep(0.2)
    raise ModelError("d-itg", f"ITGRecv did not listen on port {port} within {patience_s:.0f} s")


def plot(rows: list[Row], extra: dict[str, Any], path: Path) -> None:
    plt = pyplot()
    figure, ax = plt.subplots(figsize=(7, 4.5))
    for metric, style in (("mean_us", "o-"), ("p99_us", "s--"), ("ditg_mean_us", "^-")):
        points = sorted((r["open_us"], r["median"]) for r in rows if r["metric"] == metric and r["taprio"])
        label = "D-ITG mean" if metric.startswith("ditg") else metric.replace("_us", "")
        ax.plot([x / 10 for x, _ in points], [y for _, y in points], style, label=label)
    base = next((r["median"] for r in rows if r["metric"] == "mean_us" and not r["taprio"]), 0.0)
    theory = sorted((r["open_us"], base + r["theory_wait_us"]) for r in rows
                    if r["metric"] == "mean_us" and r["taprio"])
    ax.plot([x / 10 for x, _ in theory], [y for _, y in theory], ":", color="grey",
            label="modelled: no taprio + Y²/2C")
    ax.axhline(base, color="black", linewidth=0.8, label=f"no taprio ({base:.0f} µs)")
    ax.set(xlabel="share of the 1 ms cycle open to priority 7 (%)", ylabel="latency (µs)", yscale="log",
           title="Fig. 9: priority-7 latency through a taprio port of a virtual switch")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    save(figure, path, "paper: latency falls monotonically as the priority-7 share grows; virtual above physical")


def compare(rows: list[Row], extra: dict[str, Any]) -> list[str]:
    means = sorted((r["open_us"], r["median"], r["theory_wait_us"]) for r in rows
                   if r["metric"] == "mean_us" and r["taprio"])
    base = next((r["median"] for r in rows if r["metric"] == "mean_us" and not r["taprio"]), None)
    out = []
    if means:
        falling = all(b[1] <= a[1] for a, b in zip(means, means[1:], strict=False))
        out.append("mean latency by priority-7 open time: " + ", ".join(f"{o} µs {m:.0f} µs" for o, m, _ in means)
                   + f"; falls as the share grows: {'yes' if falling else 'no'} (the paper's trend)")
        if base is not None:
            out.append("measured gate wait against modelled Y²/2C: " + ", ".join(
                f"{o} µs {m - base:.0f}/{t:.0f}" for o, m, t in means))
    if base is not None:
        out.append(f"no taprio: {base:.0f} µs mean")
    ditg_means = sorted((r["open_us"], r["median"]) for r in rows if r["metric"] == "ditg_mean_us")
    if ditg_means:
        out.append("D-ITG's probe, mean µs by open time (0: no taprio): " + ", ".join(
            f"{o} µs {m:.0f}" for o, m in ditg_means))
    return out


EXPERIMENT = Experiment(
    name="tsn-fig9",
    title="Coupling Source Routing with TSN, Fig. 9: taprio's latency on a virtual switch by X:Y",
    paper="mean latency of priority-7 traffic falls monotonically as X grows; no taprio is lowest",
    count=count,
    measure=run,
    plot=plot,
    compare=compare,
)

NETCONF = EXPERIMENT.variant(
    "tsn-fig9-netconf",
    "Fig. 9 with the gates over NETCONF: each X:Y pushed to the switch's bridge (netconfd, taprio) from the "
    "controller's namespace",
    "as Fig. 9; the gate latencies within the local-taprio runs' run-to-run spread",
    partial(run, gates="netconf"),
)
