"""Reactive flow setup on real Open vSwitch, the analogue of the paper's Fig. 6, Fig. 7 and Table 2.

The fabric is three switches in a line with S on the first and D on the last.
S starts new UDP flows (one datagram each); the controller, in reactive mode,
sets each one up on its first packet. Kernel timestamps on the first switch's
ingress port (S's link) and egress port (the link onwards) give the setup time
as the paper defines it: the first packet's arrival at the SRE switch until it
leaves. The controller's own clock splits off the header computation and its
processing; an echo round trip on the same channel gives the RTT; the rest is
the switch. The controller also counts the bytes each setup put on the channel.
"""

from __future__ import annotations

import socket
import statistics
import struct
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from srfabric.bench.cpu_latency import cpu_latency_held
from srfabric.controller.controller import FlowSetup
from srfabric.controller.packets import parse_five_tuple
from srfabric.errors import DecodingError, SrfabricError
from srfabric.lab.fabric import LabFabric
from srfabric.lab.fabric_topos import line
from srfabric.lab.netlab import NetLab
from srfabric.southbound.channel import SwitchConnection

ETH_P_ALL = 0x0003
SO_TIMESTAMPNS = 35
PACKET_OUTGOING = 4
FLOW_PORT = 5009
WARM_PORT = 5008
TIMESPEC = struct.Struct("qq")


class PortTap:
    """Every frame an interface receives or sends, with the kernel's timestamp (CLOCK_REALTIME, ns)."""

    def __init__(self, ifname: str) -> None:
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        self.sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        self.sock.bind((ifname, 0))
        self.sock.setblocking(False)

    def drain(self) -> list[tuple[int, int, bytes]]:
        """(packet type, timestamp ns, frame) of everything queued so far."""
        frames: list[tuple[int, int, bytes]] = []
        while True:
            try:
                data, ancillary, _, address = self.sock.recvmsg(65535, socket.CMSG_SPACE(TIMESPEC.size))
            except BlockingIOError:
                return frames
            stamp = 0
            for level, kind, value in ancillary:
                if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                    seconds, nanos = TIMESPEC.unpack(value[:TIMESPEC.size])
                    stamp = seconds * 1_000_000_000 + nanos
            frames.append((address[2], stamp, data))

    def close(self) -> None:
        self.sock.close()


def first_seen(frames: list[tuple[int, int, bytes]], outgoing: bool, dst: str, port: int) -> dict[int, int]:
    """Source port -> the first timestamp of a UDP frame to ``dst``:``port`` going the given way.

    >>> ip = bytes.fromhex("4500001c00000000401100000a0000010a000002")
    >>> udp = bytes(12) + b"\\x08\\x00" + ip + (4000).to_bytes(2, "big") + (5009).to_bytes(2, "big") + bytes(4)
    >>> first_seen([(0, 20, udp), (0, 10, udp), (4, 5, udp), (0, 1, b"junk")], False, "10.0.0.2", 5009)
    {4000: 10}
    """
    seen: dict[int, int] = {}
    for kind, stamp, frame in frames:
        if (kind == PACKET_OUTGOING) != outgoing:
            continue
        try:
            flow = parse_five_tuple(frame)
        except DecodingError:
            continue
        if flow.proto == 17 and flow.dst == dst and flow.dport == port:
            seen[flow.sport] = min(stamp, seen.get(flow.sport, stamp))
    return seen


@dataclass(frozen=True)
class FlowTiming:
    """One flow's setup: the total from the switch's ports, the parts from the controller's clock."""

    steering: str
    sport: int
    total_us: float
    header_us: float
    controller_us: float
    bytes_up: int
    bytes_down: int
    packet_out_bytes: int
    switches: int

    def row(self) -> dict[str, Any]:
        return {"steering": self.steering, "sport": self.sport, "total_us": round(self.total_us, 1),
                "header_us": round(self.header_us, 1), "controller_us": round(self.controller_us, 1),
                "bytes_up": self.bytes_up, "bytes_down": self.bytes_down,
                "packet_out_bytes": self.packet_out_bytes, "switches": self.switches}


@dataclass
class SetupRun:
    steering: str
    rate: float
    timings: list[FlowTiming]
    rtt_us: list[float]
    sent: int
    cpu_latency_us: int | None = None  # the PM QoS limit held while measuring; None: idle states as they are

    @property
    def lost(self) -> int:
        return self.sent - len(self.timings)


def timings_of(steering: str, setups: list[FlowSetup], arrived: dict[int, int], left: dict[int, int]
               ) -> list[FlowTiming]:
    """Join the controller's records with the port timestamps, by source port."""
    timings = []
    for setup in setups:
        sport = setup.flow.sport
        if sport in arrived and sport in left:
            header = setup.header_ns / 1e3
            timings.append(FlowTiming(steering, sport, (left[sport] - arrived[sport]) / 1e3, header,
                                      (setup.sent_ns - setup.received_ns) / 1e3 - header, setup.bytes_up,
                                      setup.bytes_down, setup.packet_out_bytes, setup.switches))
    return timings


def _send(lab: NetLab, ns: str, dst: str, port: int, count: int, rate: float) -> None:
    """Run the flow sender in ``ns`` and wait for it."""
    sender = lab.spawn([sys.executable, "-m", "srfabric.bench.new_flows", dst, str(port), str(count), str(rate)], ns=ns)
    try:
        sender.communicate(timeout=30 + count / rate)
    finally:
        lab.stop(sender)
    if sender.returncode:
        raise SrfabricError("sender", f"the flow sender in {ns} exited {sender.returncode}")


async def sample_rtt(conn: SwitchConnection, samples: int) -> list[int]:
    """``samples`` OpenFlow echo round trips, back to back."""
    return [await conn.echo_rtt_ns() for _ in range(samples)]


def measure_setup(lab: NetLab, steering: str, codec: str, flows: int, rate: float, echoes: int,
                  say: Callable[[str], None], cpu_latency_us: int | None = None) -> SetupRun:
    """Set up ``flows`` new flows at ``rate`` per second on a fresh fabric; see the module's text.

    With ``cpu_latency_us`` the CPUs are held within that wake-up latency while the flows and echoes
    run (``cpu_latency.cpu_latency_held``)."""
    spec = line(3, 0)
    source, destination = spec.hosts["S"], spec.hosts["D"]
    onward = next(link for link in spec.links if "sw1" in (link.a, link.b))
    onward_port = onward.a_port if onward.a == "sw1" else onward.b_port
    say(f"setup {steering}: building the fabric")
    with LabFabric(lab, spec, codec, steering, reactive=True) as fabric:
        sink = lab.spawn([sys.executable, "-m", "srfabric.bench.new_flows", "--listen", str(FLOW_PORT)],
                         ns=fabric.namespaces["D"])
        taps = [PortTap(fabric.port_name("sw1", source.port)), PortTap(fabric.port_name("sw1", onward_port))]
        try:
            with cpu_latency_held(cpu_latency_us):
                # Warm up at the same rate: the first flows after a quiet spell find cold caches and sleeping CPUs.
                _send(lab, fabric.namespaces["S"], destination.ip, WARM_PORT, max(50, flows // 4), rate)
                for tap in taps:
                    tap.drain()
                held = "" if cpu_latency_us is None else f", CPU latency held at {cpu_latency_us} us"
                say(f"setup {steering}: {flows} new flows at {rate:g}/s{held}")
                _send(lab, fabric.namespaces["S"], destination.ip, FLOW_PORT, flows, rate)
                # Echoes back to back right after the flows, while the CPUs are still awake; during the
                # flows they would queue behind the switch's setup work, which is the switch's share.
                conn = fabric.controller.switches[spec.dpid("sw1")]
                rtt = [ns / 1e3 for ns in fabric.runner.call(sample_rtt(conn, echoes))]
            time.sleep(0.3)
            arrived = first_seen(taps[0].drain(), False, destination.ip, FLOW_PORT)
            left = first_seen(taps[1].drain(), True, destination.ip, FLOW_PORT)
        finally:
            for tap in taps:
                tap.close()
            lab.stop(sink)
        controller = fabric.controller
        ingress = spec.dpid(source.switch)
        setups = [s for s in list(controller.setups) if s.flow.dport == FLOW_PORT and s.dpid == ingress]
    return SetupRun(steering, rate, timings_of(steering, setups, arrived, left), rtt, flows, cpu_latency_us)


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] if ordered else float("nan")


def setup_summary(run: SetupRun) -> dict[str, Any]:
    """Median and p99 of the setup time, and the median of each part, in ms (Table 2's layout)."""
    totals = [t.total_us for t in run.timings]
    header = _median([t.header_us for t in run.timings])
    controller = _median([t.controller_us for t in run.timings])
    rtt = _median(run.rtt_us)
    median = _median(totals)
    return {
        "median": round(median / 1e3, 4),
        "p99": round(_p99(totals) / 1e3, 4),
        "header_ms": round(header / 1e3, 4),
        "controller_ms": round(controller / 1e3, 4),
        "rtt_ms": round(rtt / 1e3, 4),
        "switch_ms": round((median - header - controller - rtt) / 1e3, 4),
        "flows": len(run.timings),
        "lost": run.lost,
        "rate_per_s": run.rate,
        "cpu_latency_us": run.cpu_latency_us,
    }


def bytes_summary(run: SetupRun) -> dict[str, Any]:
    """Control-channel bytes per new flow, and what one flow-mod and packet-out cost."""
    if not run.timings:
        return {}
    up = int(_median([t.bytes_up for t in run.timings]))
    down = int(_median([t.bytes_down for t in run.timings]))
    switches = int(_median([t.switches for t in run.timings]))
    packet_out = int(_median([t.packet_out_bytes for t in run.timings]))
    barriers = 8 * (switches - 1)
    return {"up": up, "down": down, "switches": switches, "packet_out": packet_out,
            "packet_in": up - barriers, "flow_mod": (down - packet_out - barriers) // switches}
