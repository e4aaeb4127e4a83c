"""Reactive flow setup on real Open vSwitch, the analogue of the paper's Fig. 6, Fig. 7 and Table 2.

The fabric is a k=4 fat-tree with all 16 hosts (or any spec). New UDP flows (one
datagram each) start between random pairs of hosts; the controller, in reactive
mode, sets each one up on its first packet, searching the pair's path the first
time it meets the pair (its route cache is emptied after the warm-up). Kernel
timestamps on every port of the switches that hosts hang off give the setup time
as the paper defines it: the first packet's arrival at its SRE switch until it
leaves that switch. The controller's stamps (on the same clock, CLOCK_REALTIME)
split each flow into the way up (port to the packet-in read), the header
computation, the controller's other work, and the way down (the flow-mod and
packet-out written to the frame leaving); an echo round trip on an idle channel
gives the channel's bare share of the two ways. The controller also counts the
bytes each setup put on the channel.
"""

from __future__ import annotations

import socket
import statistics
import struct
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from srfabric.controller.config import FlowSetup
from srfabric.controller.controller import Controller
from srfabric.controller.packets import parse_five_tuple
from srfabric.errors import DecodingError, SrfabricError
from srfabric.model.topo import TopoSpec, fat_tree
from srfabric.southbound.channel import SwitchConnection, SwitchError
from srfabric_tools.bench.cpu_latency import cpu_latency_held
from srfabric_tools.bench.new_flows import Endpoint, PlannedFlow, flow_plan, write_plan
from srfabric_tools.lab.fabric import LabFabric
from srfabric_tools.lab.netlab import NetLab
from srfabric_tools.lab.stats import percentile

ETH_P_ALL = 0x0003
SO_TIMESTAMPNS = 35
PACKET_OUTGOING = 4
FLOW_PORT = 5009
WARM_PORT = 5008
TIMESPEC = struct.Struct("qq")
SENDER_START_NS = 1_500_000_000  # the sender's start-up: Python and one socket pair per host


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


FlowKey = tuple[str, int]  # (source address, source port): one new flow


def first_seen(frames: list[tuple[int, int, bytes]], outgoing: bool, port: int) -> dict[FlowKey, int]:
    """(source address, source port) -> the first timestamp of a UDP frame to ``port`` going the given way.

    >>> ip = bytes.fromhex("4500001c00000000401100000a0000010a000002")
    >>> udp = bytes(12) + b"\\x08\\x00" + ip + (4000).to_bytes(2, "big") + (5009).to_bytes(2, "big") + bytes(4)
    >>> first_seen([(0, 20, udp), (0, 10, udp), (4, 5, udp), (0, 1, b"junk")], False, 5009)
    {('10.0.0.1', 4000): 10}
    """
    seen: dict[FlowKey, int] = {}
    for kind, stamp, frame in frames:
        if (kind == PACKET_OUTGOING) != outgoing:
            continue
        try:
            flow = parse_five_tuple(frame)
        except DecodingError:
            continue
        if flow.proto == 17 and flow.dport == port:
            key = (flow.src, flow.sport)
            seen[key] = min(stamp, seen.get(key, stamp))
    return seen


@dataclass(frozen=True)
class FlowTiming:
    """One flow's setup: the total from the switch's ports, the parts from the controller's stamps on the
    same clock."""

    steering: str
    source: str
    sport: int
    total_us: float
    up_us: float  # first packet at the switch's port -> its packet-in read by the controller
    header_us: float
    controller_us: float  # the controller's other work (under hop-by-hop, also the barriers of later switches)
    down_us: float  # flow-mod and packet-out written -> the packet leaving the switch
    route_searched: bool  # the pair's path was not cached: the header time includes the path search
    bytes_up: int
    bytes_down: int
    packet_out_bytes: int
    switches: int

    def row(self) -> dict[str, Any]:
        return {"steering": self.steering, "source": self.source, "sport": self.sport,
                "total_us": round(self.total_us, 1), "up_us": round(self.up_us, 1),
                "header_us": round(self.header_us, 1), "controller_us": round(self.controller_us, 1),
                "down_us": round(self.down_us, 1), "route_searched": int(self.route_searched),
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
    topology: str = ""
    hosts: int = 0

    @property
    def lost(self) -> int:
        return self.sent - len(self.timings)


def timings_of(steering: str, setups: list[FlowSetup], arrived: dict[FlowKey, int],
               left: dict[FlowKey, int]) -> list[FlowTiming]:
    """Join the controller's records with the port timestamps, by (source address, source port)."""
    timings = []
    for setup in setups:
        key = (setup.flow.src, setup.flow.sport)
        if key in arrived and key in left:
            header = setup.header_ns / 1e3
            timings.append(FlowTiming(
                steering, key[0], key[1], (left[key] - arrived[key]) / 1e3, (setup.received_ns - arrived[key]) / 1e3,
                header, (setup.sent_ns - setup.received_ns) / 1e3 - header, (left[key] - setup.sent_ns) / 1e3,
                setup.route_searched, setup.bytes_up, setup.bytes_down, setup.packet_out_bytes, setup.switches))
    return timings


def send_flows(lab: NetLab, fabric: LabFabric, flows: list[PlannedFlow], port: int) -> None:
    """Send ``flows`` (planned from a moment shortly ahead) and wait until the last has gone."""
    hosts = {name: Endpoint(f"/run/netns/{fabric.namespaces[name]}", "eth0", host.mac, host.ip)
             for name, host in fabric.spec.hosts.items()}
    with tempfile.TemporaryDirectory(prefix="srfabric-flows-") as folder:
        plan = Path(folder) / "plan.json"
        write_plan(plan, hosts, flows, port, time.time_ns() + SENDER_START_NS)
        sender = lab.spawn([sys.executable, "-m", "srfabric_tools.bench.new_flows", str(plan)])
        try:
            sender.communicate(timeout=30 + (flows[-1].offset_ns if flows else 0) / 1e9)
        finally:
            lab.stop(sender)
    if sender.returncode:
        raise SrfabricError("sender", f"the flow sender exited {sender.returncode}")


async def sample_rtt(conn: SwitchConnection, samples: int) -> list[int]:
    """``samples`` OpenFlow echo round trips, back to back; fewer (none) if the switch, still working through
    a backlog, does not answer within a minute."""
    rtts: list[int] = []
    try:
        for _ in range(samples):
            rtts.append(await conn.echo_rtt_ns(timeout=60.0))
    except SwitchError:
        pass
    return rtts


def host_switch_ports(spec: TopoSpec) -> dict[str, list[int]]:
    """Every port of every switch that a host hangs off (the switches where new flows start and leave).

    >>> from srfabric.model.topo import fat_tree
    >>> ports = host_switch_ports(fat_tree(4))
    >>> len(ports), sorted(len(p) for p in ports.values())[0]
    (8, 4)
    """
    edges = {host.switch for host in spec.hosts.values()}
    ports: dict[str, set[int]] = {switch: set() for switch in edges}
    for host in spec.hosts.values():
        ports[host.switch].add(host.port)
    for link in spec.links:
        for switch, port in ((link.a, link.a_port), (link.b, link.b_port)):
            if switch in ports:
                ports[switch].add(port)
    return {switch: sorted(numbers) for switch, numbers in sorted(ports.items())}


def measure_setup(lab: NetLab, steering: str, codec: str, flows: int, rate: float, echoes: int,
                  say: Callable[[str], None], cpu_latency_us: int | None = None,
                  spec: TopoSpec | None = None, topology: str = "fat-tree k=4", seed: int = 1) -> SetupRun:
    """Set up ``flows`` new flows between random host pairs at ``rate`` per second on a fresh fabric (a k=4
    fat-tree unless ``spec``, named ``topology``); see the module's text.

    With ``cpu_latency_us`` the CPUs are held within that wake-up latency while the flows and echoes
    run (``cpu_latency.cpu_latency_held``)."""
    spec = spec or fat_tree(4)
    names = sorted(spec.hosts)
    say(f"setup {steering}: building the fabric ({len(spec.switches)} switches, {len(names)} hosts)")
    with LabFabric(lab, spec, codec, steering, reactive=True, clock=time.time_ns) as fabric:
        ports = host_switch_ports(spec)
        taps = {(switch, port): PortTap(fabric.port_name(switch, port))
                for switch, numbers in ports.items() for port in numbers}
        plan = flow_plan(names, flows, rate, seed)
        conn = fabric.controller.switches[spec.dpid(spec.hosts[names[0]].switch)]
        try:
            with cpu_latency_held(cpu_latency_us):
                # Warm up at the same rate: the first flows after a quiet spell find cold caches and sleeping CPUs.
                warm = max(50, flows // 4)
                send_flows(lab, fabric, flow_plan(names, warm, rate, seed + 1000), WARM_PORT)
                _wait_for_setups(fabric.controller, WARM_PORT, warm, say)
                fabric.runner.call(sample_rtt(conn, 1))  # whatever the switch still has queued goes first
                for tap in taps.values():
                    tap.drain()
                fabric.runner.call(_forget_routes(fabric))  # each pair's first measured flow searches its path
                # Echoes on the idle channel, back to back, while the CPUs are awake from the warm-up.
                rtt = [ns / 1e3 for ns in fabric.runner.call(sample_rtt(conn, echoes))]
                held = "" if cpu_latency_us is None else f", CPU latency held at {cpu_latency_us} us"
                say(f"setup {steering}: {flows} new flows between random pairs at {rate:g}/s{held}")
                send_flows(lab, fabric, plan, FLOW_PORT)
                _wait_for_setups(fabric.controller, FLOW_PORT, flows, say)
            time.sleep(0.3)
            frames = {where: tap.drain() for where, tap in taps.items()}
        finally:
            for tap in taps.values():
                tap.close()
        controller = fabric.controller
        setups = [s for s in list(controller.setups) if s.flow.dport == FLOW_PORT]
    arrived: dict[FlowKey, int] = {}
    left: dict[FlowKey, int] = {}
    at_switch = {spec.hosts[name].ip: (spec.hosts[name].switch, spec.hosts[name].port) for name in names}
    for (switch, port), seen in frames.items():
        for key, stamp in first_seen(seen, False, FLOW_PORT).items():
            if at_switch.get(key[0]) == (switch, port):
                arrived[key] = stamp
        for key, stamp in first_seen(seen, True, FLOW_PORT).items():
            if at_switch.get(key[0], ("",))[0] == switch:
                left[key] = min(stamp, left.get(key, stamp))
    ingress = {spec.hosts[name].ip: spec.dpid(spec.hosts[name].switch) for name in names}
    setups = [s for s in setups if ingress.get(s.flow.src) == s.dpid]
    return SetupRun(steering, rate, timings_of(steering, setups, arrived, left), rtt, flows, cpu_latency_us,
                    topology, len(names))


def _wait_for_setups(controller: Controller, port: int, flows: int, say: Callable[[str], None],
                     quiet_s: float = 2.0, limit_s: float = 60.0) -> None:
    """Wait until the controller has set up ``flows`` flows to ``port``, or set up none for ``quiet_s`` (the
    rest are lost), at most ``limit_s``: an overloaded switch may still be working through a backlog."""
    def done() -> int:
        return sum(1 for setup in list(controller.setups) if setup.flow.dport == port)

    begin = last_change = time.monotonic()
    count = done()
    while count < flows and time.monotonic() - last_change < quiet_s and time.monotonic() - begin < limit_s:
        time.sleep(0.2)
        now = done()
        if now != count:
            count, last_change = now, time.monotonic()
    if time.monotonic() - begin > 1.0:
        say(f"  the last setups came {time.monotonic() - begin:.1f} s after the last flow was sent ({count} of "
            f"{flows} set up)")


async def _forget_routes(fabric: LabFabric) -> None:
    fabric.controller.forget_routes()


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def setup_summary(run: SetupRun) -> dict[str, Any]:
    """Median and p99 of the setup time and the median of each part, in ms (Table 2's layout): the way up and
    the way down per flow from the controller's stamps, of which the echo round trip is the channel's share
    and the rest the switch's. The same for the flows whose path was searched (a pair met for the first
    time since the route cache was emptied)."""
    totals = [t.total_us for t in run.timings]
    searched = [t for t in run.timings if t.route_searched]
    cached = [t for t in run.timings if not t.route_searched]
    rtt = _median(run.rtt_us)
    ways = _median([t.up_us + t.down_us for t in run.timings])

    def ms(value: float) -> float:
        return round(value / 1e3, 4)

    return {
        "median": ms(_median(totals)),
        "p99": ms(percentile(totals, 0.99)),
        "up_ms": ms(_median([t.up_us for t in run.timings])),
        "header_ms": ms(_median([t.header_us for t in run.timings])),
        "controller_ms": ms(_median([t.controller_us for t in run.timings])),
        "down_ms": ms(_median([t.down_us for t in run.timings])),
        "rtt_ms": ms(rtt),
        "switch_ms": ms(ways - rtt),
        "searched_flows": len(searched),
        "searched_median": ms(_median([t.total_us for t in searched])),
        "searched_header_ms": ms(_median([t.header_us for t in searched])),
        "cached_median": ms(_median([t.total_us for t in cached])),
        "cached_header_ms": ms(_median([t.header_us for t in cached])),
        "flows": len(run.timings),
        "lost": run.lost,
        "rate_per_s": run.rate,
        "cpu_latency_us": run.cpu_latency_us,
        "topology": run.topology,
        "hosts": run.hosts,
    }


def bytes_summary(run: SetupRun) -> dict[str, Any]:
    """Control-channel bytes per new flow, and what one flow-mod and packet-out cost (from the flows that
    touched the most common number of switches, so that the parts add up)."""
    if not run.timings:
        return {}
    counts = [t.switches for t in run.timings]
    switches = max(set(counts), key=counts.count)
    typical = [t for t in run.timings if t.switches == switches]
    up = int(_median([t.bytes_up for t in typical]))
    down = int(_median([t.bytes_down for t in typical]))
    packet_out = int(_median([t.packet_out_bytes for t in typical]))
    barriers = 8 * (switches - 1)
    return {"up": up, "down": down, "switches": switches, "packet_out": packet_out,
            "packet_in": up - barriers, "flow_mod": (down - packet_out - barriers) // switches,
            "mean_bytes_per_flow": round(statistics.fmean(t.bytes_up + t.bytes_down for t in run.timings), 1)}
