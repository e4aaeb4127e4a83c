"""The emulated fabric for a controller that decides switch by switch (os-ken's ``simple_switch_13``): its
packet-outs are followed hop by hop, so it is charged what such a controller costs per new flow on a real fabric.

The rule, for a fair comparison with srfabric, which installs the whole path before its one packet-out: a flow
is set up when a packet-out leaves on its destination host's own port. A packet-out to a port towards another
switch arrives there as a packet-in on the far port (as LLDP does already). A flood goes out only along a
spanning tree rooted at the lowest-numbered switch, except the port it came in on (what 802.1D leaves open in a
fat-tree, whose loops would otherwise storm), and a frame is dropped after ``MAX_HOPS``. Hosts announce
themselves with a gratuitous ARP, which floods along that tree, so every switch learns every host before the
load. Frames a controller floods or sends to a host port that is not its destination set nothing up.
"""

from __future__ import annotations

import collections
import struct

from os_ken.ofproto import ofproto_v1_3 as ofp

from srfabric.model.topo import TopoSpec
from srfabric.rules.openflow.wire import PACKET_OUT_HEAD
from srfabric_tools.bench.of_emulator import EmulatedFabric, EmulatedSwitch, flow_key, packet_in, packet_out_frame

MAX_HOPS = 10
ACTION = struct.Struct("!HH")  # type, length


def output_ports(msg: memoryview | bytes) -> tuple[int, list[int]]:
    """A packet-out's in-port and the ports of its output actions, in order.

    >>> from srfabric.rules.openflow.wire import packet_out_packed
    >>> from srfabric.rules.entries import Output
    >>> output_ports(packet_out_packed(3, (Output(1), Output(2)), b"frame").buf)
    (3, [1, 2])
    """
    _, _, _, _, _, in_port, actions_len = PACKET_OUT_HEAD.unpack_from(msg)
    ports, offset, end = [], PACKET_OUT_HEAD.size, PACKET_OUT_HEAD.size + actions_len
    while offset + ACTION.size <= end:
        kind, length = ACTION.unpack_from(msg, offset)
        if length < ACTION.size:
            break  # a malformed action list ends the walk
        if kind == ofp.OFPAT_OUTPUT:
            ports.append(struct.unpack_from("!I", msg, offset + 4)[0])
        offset += length
    return in_port, ports


def spanning_tree(spec: TopoSpec) -> dict[str, set[int]]:
    """Each switch's ports a flood may use: its links in a breadth-first tree from the lowest-numbered switch,
    and its host ports."""
    links: dict[str, list[tuple[int, str]]] = collections.defaultdict(list)
    for link in spec.links:
        links[link.a].append((link.a_port, link.b))
        links[link.b].append((link.b_port, link.a))
    far_port = {(link.a, link.b): link.b_port for link in spec.links} | {
        (link.b, link.a): link.a_port for link in spec.links}
    root = min(spec.switches, key=lambda name: spec.switches[name].dpid)
    tree: dict[str, set[int]] = {name: set() for name in spec.switches}
    seen, queue = {root}, collections.deque([root])
    while queue:
        name = queue.popleft()
        for port, far in sorted(links[name]):
            if far not in seen:
                seen.add(far)
                queue.append(far)
                tree[name].add(port)
                tree[far].add(far_port[(name, far)])
    for host in spec.hosts.values():
        tree[host.switch].add(host.port)
    return tree


class FollowingFabric(EmulatedFabric):
    """``EmulatedFabric`` that carries packet-outs on (see the module); counts hops and floods."""

    def __init__(self, spec: TopoSpec, seed: int = 1) -> None:
        super().__init__(spec, seed)
        self.tree = spanning_tree(spec)
        self.host_at = {(host.switch, host.port): host.mac for host in spec.hosts.values()}
        self.hops = self.floods = 0

    def packet_out(self, switch: EmulatedSwitch, msg: memoryview, now: int) -> None:
        frame = packet_out_frame(msg)
        if frame[12:14] == b"\x88\xcc":  # LLDP, as before
            super().packet_out(switch, msg, now)
            return
        in_port, ports = output_ports(msg)
        outs: list[int] = []
        for port in ports:
            if port in (ofp.OFPP_FLOOD, ofp.OFPP_ALL):
                self.floods += 1
                outs += [p for p in sorted(self.tree[switch.name]) if p != in_port]
            else:
                outs.append(port)
        hops = frame_hops(frame)
        for port in outs:
            mac = self.host_at.get((switch.name, port))
            if mac is not None:
                key = flow_key(frame)
                if key is not None and int.from_bytes(frame[0:6], "big") == mac:
                    sent = self.tally.sent.pop(key, None)
                    if sent is not None:
                        self.tally.setup_ns.append(now - sent)
                continue
            far = self.peer.get((switch.dpid, port))
            if far is not None and hops < MAX_HOPS and far[0] in self.switches:
                self.hops += 1
                self.switches[far[0]].write(packet_in(far[1], with_hops(frame, hops + 1)))


def frame_hops(frame: bytes) -> int:
    """How many switches a frame has crossed, kept in the IPv4 identification field (0 for others).

    >>> frame_hops(with_hops(bytes(12) + b"\\x08\\x00\\x45" + bytes(40), 3))
    3
    """
    return int.from_bytes(frame[18:20], "big") if frame[12:14] == b"\x08\x00" and len(frame) >= 20 else 0


def with_hops(frame: bytes, hops: int) -> bytes:
    """``frame`` with its hop count set (IPv4 only: an ARP is flooded along the tree, which has no loop)."""
    if frame[12:14] != b"\x08\x00" or len(frame) < 20:
        return frame
    return frame[:18] + hops.to_bytes(2, "big") + frame[20:]
