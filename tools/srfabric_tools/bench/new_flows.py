"""New flows between many hosts of an emulated fabric, from one process: each flow is one UDP datagram
with a source port of its own, from a random host to another, at its planned time.

``python -m srfabric_tools.bench.new_flows PLAN.json`` runs in the root namespace. It
enters each host's network namespace once (``setns``) to open a packet socket on
the host's interface and a UDP socket on the flows' port (which nobody reads: the
destination drops what overflows instead of answering with ICMP errors, which
would be new flows of their own), then sends every planned frame from its source
host's socket at ``start_ns + offset_ns`` (CLOCK_REALTIME). Frames are built here,
so no host needs to resolve addresses and one process serves a fabric of any size.

The plan (``flow_plan``) is made by the caller, who keeps it to join the timings.
"""

from __future__ import annotations

import ctypes
import json
import os
import random
import socket
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from srfabric.errors import ModelError
from srfabric.xdp.frames import udp_frame

CLONE_NEWNET = 0x40000000
FIRST_SOURCE_PORT = 20000


@dataclass(frozen=True)
class PlannedFlow:
    offset_ns: int  # after the plan's start
    source: str
    destination: str
    sport: int
    src_mac: int = 0  # 0: the source host's own; else a MAC of the flow's own (a new host to a learning switch)


@dataclass(frozen=True)
class Endpoint:
    netns: str  # path of the host's network namespace, e.g. /run/netns/NAME
    ifname: str
    mac: int
    ip: str


def flow_plan(hosts: list[str], count: int, rate: float, seed: int, first_sport: int = FIRST_SOURCE_PORT,
              macs_from: int = 0) -> list[PlannedFlow]:
    """``count`` flows at ``rate`` per second, each from a random host to a random other one; source ports
    count up per source host from ``first_sport``, so (source, source port) names a flow. With ``macs_from``
    the flows' source MACs count up from it, one each, so that every flow is new to a MAC-learning switch too.

    >>> [(f.offset_ns, f.source != f.destination, f.sport) for f in flow_plan(["a", "b"], 3, 1000.0, 1)]
    [(0, True, 20000), (1000000, True, 20000), (2000000, True, 20001)]
    >>> [hex(f.src_mac) for f in flow_plan(["a", "b"], 2, 1000.0, 1, macs_from=0x020000000001)]
    ['0x20000000001', '0x20000000002']
    """
    if len(hosts) < 2:
        raise ModelError("hosts", f"new flows need at least 2 hosts, got {len(hosts)}")
    if rate <= 0:
        raise ModelError("rate", f"the rate of new flows must be positive, got {rate}")
    pick = random.Random(seed)
    next_port = dict.fromkeys(hosts, first_sport)
    flows = []
    for index in range(count):
        source, destination = pick.sample(hosts, 2)
        if next_port[source] > 65535:
            raise ModelError("count", f"host {source} ran out of source ports after {65535 - first_sport + 1}")
        flows.append(PlannedFlow(int(index * 1e9 / rate), source, destination, next_port[source],
                                 macs_from + index if macs_from else 0))
        next_port[source] += 1
    return flows


def flow_frame(src: Endpoint, dst: Endpoint, sport: int, dport: int, src_mac: int = 0) -> bytes:
    """One new flow's frame, Ethernet/IPv4/UDP, from ``src`` (from ``src_mac`` if given) to ``dst``."""
    return udp_frame(dst.mac, src_mac or src.mac, src.ip, dst.ip, sport, dport)


def write_plan(path: Path, hosts: dict[str, Endpoint], flows: list[PlannedFlow], dport: int, start_ns: int) -> None:
    path.write_text(json.dumps({"start_ns": start_ns, "dport": dport,
                                "hosts": {name: asdict(host) for name, host in hosts.items()},
                                "flows": [asdict(flow) for flow in flows]}))


def _enter(netns: str) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(netns, os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns {netns}")
    finally:
        os.close(fd)


def _open_sockets(hosts: dict[str, Endpoint], dport: int) -> tuple[dict[str, socket.socket], list[socket.socket]]:
    """A packet socket per host to send from and a UDP socket per host that takes the flows in."""
    home = os.open("/proc/self/ns/net", os.O_RDONLY)
    senders, sinks = {}, []
    try:
        for name, host in hosts.items():
            _enter(host.netns)
            sender = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
            sender.bind((host.ifname, 0))
            senders[name] = sender
            sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            sink.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sink.bind(("0.0.0.0", dport))
            sinks.append(sink)
    finally:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.setns(home, CLONE_NEWNET)
        os.close(home)
    return senders, sinks


def run_plan(plan: dict[str, Any]) -> int:
    """Send every planned flow on time; returns how many were sent."""
    hosts = {name: Endpoint(**fields) for name, fields in plan["hosts"].items()}
    flows = [PlannedFlow(**fields) for fields in plan["flows"]]
    dport = int(plan["dport"])
    senders, sinks = _open_sockets(hosts, dport)
    frames = [(flow.offset_ns, senders[flow.source], flow_frame(hosts[flow.source], hosts[flow.destination],
                                                                 flow.sport, dport, flow.src_mac))
              for flow in flows]
    start = int(plan["start_ns"])
    for offset, sender, frame in frames:
        delay = (start + offset - time.time_ns()) / 1e9
        if delay > 0:
            time.sleep(delay)
        sender.send(frame)
    time.sleep(0.5)  # the last flows are still on their way to their sinks
    for sock in [*senders.values(), *sinks]:
        sock.close()
    return len(frames)


if __name__ == "__main__":
    print(run_plan(json.loads(Path(sys.argv[1]).read_text())))
