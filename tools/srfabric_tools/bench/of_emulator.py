"""Emulated OpenFlow 1.3 switches for the controller-capacity benchmark, in the spirit of ``cbench``: every
switch of a topology is a real TCP connection to the controller, driven from one asyncio loop.

A switch answers the handshake (features, port descriptions, empty flow and
group tables), echoes and barriers, and takes flow-mods without acting on them.
An LLDP packet-out on a link port comes back as a packet-in on the peer's port,
so the controller discovers the links as it would on a real fabric; each host
announces itself once with a gratuitous ARP. New flows are packet-ins of UDP
frames on their source host's port, sent open-loop at a set rate, a batch per
switch every tick; a flow is set up when its packet-out (the first packet sent
on) comes back, and its setup time is that packet-out's arrival minus its
packet-in's write, on this process's clock.

Messages are packed and read with ``struct`` only: the generator must cost far
less per flow than the controller it measures (its CPU time is reported beside).
"""

from __future__ import annotations

import asyncio
import random
import socket
import struct
import time
from dataclasses import dataclass, field
from typing import Any

from os_ken.ofproto import ofproto_v1_3 as ofp

from srfabric.controller.packets import ArpPacket, parse_lldp
from srfabric.errors import DecodingError
from srfabric.model.topo import TopoSpec
from srfabric.rules.openflow.wire import HEADER, PACKET_OUT_HEAD
from srfabric.xdp.frames import udp_frame

FLOW_PORT = 5009
PORT = struct.Struct("!I4x6s2x16sIIIIIIII")
# buffer id, total length, reason, table, cookie; then an OXM match holding in_port only (12 bytes, padded to
# 16) and 2 bytes of padding before the frame.
PACKET_IN_FIXED = struct.Struct("!IHBBQHHIII2x")
FRAME_AT = HEADER.size + PACKET_IN_FIXED.size  # where an untagged packet-in's frame starts
UDP_SPORT_AT = 34  # in an untagged IPv4/UDP frame
FIRST_FRESH_MAC = 0x06_00_00_00_00_01  # locally administered, apart from the hosts' own
# OFPMP_DESC's body: manufacturer, hardware, software, serial number, datapath (fixed-size, NUL-padded).
DESCRIPTION = b"".join(text.ljust(size, b"\0") for text, size in (
    (b"srfabric", 256), (b"emulated switch", 256), (b"0", 256), (b"0", 32), (b"emulated", 256)))


def message(kind: int, xid: int, body: bytes = b"") -> bytes:
    """One OpenFlow 1.3 message.

    >>> message(ofp.OFPT_BARRIER_REPLY, 7).hex()
    '0415000800000007'
    """
    return HEADER.pack(ofp.OFP_VERSION, kind, HEADER.size + len(body), xid) + body


def packet_in(in_port: int, frame: bytes, xid: int = 0) -> bytes:
    """An OFPT_PACKET_IN of ``frame`` from ``in_port`` (table miss, no buffer), as the controller reads it.

    >>> from srfabric.rules.openflow.wire import parse_packet_in
    >>> parsed = parse_packet_in(packet_in(3, b"frame"))
    >>> parsed.in_port, parsed.data
    (3, b'frame')
    """
    fixed = PACKET_IN_FIXED.pack(ofp.OFP_NO_BUFFER, len(frame), 0, 0, 0, 1, 12, 0x80000004, in_port, 0)
    return message(ofp.OFPT_PACKET_IN, xid, fixed + frame)


def packet_out_frame(msg: bytes | memoryview) -> bytes:
    """The frame a packet-out carries (after its actions).

    >>> from srfabric.rules.openflow.wire import packet_out_packed
    >>> packet_out_frame(packet_out_packed(1, (), b"abc").buf)
    b'abc'
    """
    *_, actions_len = PACKET_OUT_HEAD.unpack_from(msg)
    return bytes(msg[PACKET_OUT_HEAD.size + actions_len:])


def flow_key(frame: bytes) -> tuple[bytes, int] | None:
    """(source address bytes, source port) of an IPv4/UDP frame to the flows' port; None for anything else.

    >>> flow_key(udp_frame(2, 1, "10.0.0.1", "10.0.0.2", 20000, FLOW_PORT))
    (b'\\n\\x00\\x00\\x01', 20000)
    """
    if len(frame) < 38 or frame[12:14] != b"\x08\x00" or frame[23] != 17:
        return None
    if int.from_bytes(frame[36:38], "big") != FLOW_PORT:
        return None
    return bytes(frame[26:30]), int.from_bytes(frame[34:36], "big")


@dataclass
class Tally:
    """What one load step saw."""

    sent: dict[tuple[bytes, int], int] = field(default_factory=dict)  # flow -> packet-in written (ns)
    setup_ns: list[int] = field(default_factory=list)
    messages_in: int = 0
    flow_mods: int = 0
    barriers: int = 0


class EmulatedSwitch(asyncio.Protocol):
    def __init__(self, fabric: EmulatedFabric, name: str) -> None:
        self.fabric, self.name = fabric, name
        self.dpid = fabric.spec.switches[name].dpid
        self.transport: Any = None  # asyncio's or uvloop's TCP transport
        self.buffer = bytearray()
        self.ready = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        transport.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.write(message(ofp.OFPT_HELLO, 1))

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None

    def write(self, data: bytes) -> None:
        if self.transport is not None:
            self.transport.write(data)

    def data_received(self, data: bytes) -> None:
        now = time.perf_counter_ns()
        buffer = self.buffer
        buffer += data
        offset, size = 0, len(buffer)
        view = memoryview(buffer)
        try:
            while size - offset >= HEADER.size:
                _, kind, length, xid = HEADER.unpack_from(buffer, offset)
                if size - offset < length:
                    break
                self._handle(kind, xid, view[offset:offset + length], now)
                offset += length
        finally:
            view.release()
        del buffer[:offset]

    def _handle(self, kind: int, xid: int, msg: memoryview, now: int) -> None:
        tally = self.fabric.tally
        tally.messages_in += 1
        if kind == ofp.OFPT_PACKET_OUT:
            self.fabric.packet_out(self, msg, now)
        elif kind == ofp.OFPT_FLOW_MOD:
            tally.flow_mods += 1
        elif kind == ofp.OFPT_BARRIER_REQUEST:
            tally.barriers += 1
            self.write(message(ofp.OFPT_BARRIER_REPLY, xid))
        elif kind == ofp.OFPT_ECHO_REQUEST:
            self.write(message(ofp.OFPT_ECHO_REPLY, xid, bytes(msg[HEADER.size:])))
        elif kind == ofp.OFPT_FEATURES_REQUEST:
            self.write(message(ofp.OFPT_FEATURES_REPLY, xid, struct.pack("!QIBB2xII", self.dpid, 0, 254, 0, 0x4F, 0)))
        elif kind == ofp.OFPT_MULTIPART_REQUEST:
            (part,) = struct.unpack_from("!H", msg, HEADER.size)
            body = (b"".join(self.fabric.port_desc(self.name)) if part == ofp.OFPMP_PORT_DESC
                    else DESCRIPTION if part == ofp.OFPMP_DESC else b"")
            self.write(message(ofp.OFPT_MULTIPART_REPLY, xid, struct.pack("!HH4x", part, 0) + body))
            if part == ofp.OFPMP_PORT_DESC and not self.ready.done():
                self.ready.set_result(None)


class EmulatedFabric:
    """Every switch of ``spec`` connected to the controller at ``port``. A subclass may make its own switches
    (``make_switch``) and send packet-ins as its controller's pipeline would (``packet_in_of``, with the UDP
    source port of a flow's frame at ``sport_at`` in the message). With ``fresh_macs`` every flow comes from a
    source MAC of its own (locally administered, counting up), so it is new to a learning switch too."""

    sport_at = FRAME_AT + UDP_SPORT_AT
    mac_at = FRAME_AT + 6  # the source MAC of a flow's frame in its packet-in
    fresh_macs = False
    next_mac = FIRST_FRESH_MAC

    def __init__(self, spec: TopoSpec, seed: int = 1) -> None:
        self.spec = spec
        self.switches: dict[str, EmulatedSwitch] = {}
        self.tally = Tally()
        self.peer: dict[tuple[int, int], tuple[str, int]] = {}
        for link in spec.links:
            a, b = spec.switches[link.a].dpid, spec.switches[link.b].dpid
            self.peer[(a, link.a_port)] = (link.b, link.b_port)
            self.peer[(b, link.b_port)] = (link.a, link.a_port)
        self.hosts = sorted(spec.hosts)
        self.pick = random.Random(seed)
        self.next_sport = dict.fromkeys(self.hosts, 1024)
        self._frames: dict[tuple[str, str], bytes] = {}

    def port_desc(self, name: str) -> list[bytes]:
        ports = {h.port for h in self.spec.hosts.values() if h.switch == name}
        ports |= {port for f in self.spec.functions.values() if f.switch == name for port in (f.ingress_port,
                                                                                            f.egress_port)}
        ports |= {link.a_port for link in self.spec.links if link.a == name}
        ports |= {link.b_port for link in self.spec.links if link.b == name}
        return [self.port(name, number, ofp.OFPPS_LIVE) for number in sorted(ports)]

    def port(self, name: str, number: int, state: int) -> bytes:
        """One port's ``ofp_port`` in ``state`` (live, or link down), its MAC made from the switch and the port."""
        mac = ((self.spec.switches[name].dpid << 8 | number) & 0xFFFFFFFFFFFF | 0x020000000000).to_bytes(6, "big")
        return PORT.pack(number, mac, f"{name}-eth{number}".encode(), 0, state, 0, 0, 0, 0, 10_000_000, 10_000_000)

    def make_switch(self, name: str) -> EmulatedSwitch:
        return EmulatedSwitch(self, name)

    def cut(self, name: str, port: int) -> None:
        """The link on ``name``'s ``port`` goes dark: nothing crosses it any more, and both its ends say so to the
        controller (a port status, link down), as Open vSwitch does when a veth's peer goes."""
        dpid = self.spec.switches[name].dpid
        far = self.peer.pop((dpid, port))
        self.peer.pop((self.spec.switches[far[0]].dpid, far[1]), None)
        for end, number in ((name, port), far):
            desc = self.port(end, number, ofp.OFPPS_LINK_DOWN)
            self.switches[end].write(message(ofp.OFPT_PORT_STATUS, 0, struct.pack("!B7x", ofp.OFPPR_MODIFY) + desc))

    def packet_in_of(self, in_port: int, frame: bytes) -> bytes:
        return packet_in(in_port, frame)

    async def connect(self, port: int, timeout: float = 60.0, refused_for: float = 30.0) -> None:
        """Connect every switch and wait for each handshake; a controller that prints its port before it
        listens refuses at first, so a refusal is tried again for ``refused_for`` seconds."""
        loop = asyncio.get_running_loop()
        deadline = time.monotonic() + refused_for
        while not self.switches:
            try:
                for name in self.spec.switches:
                    switch = self.make_switch(name)
                    await loop.create_connection(lambda switch=switch: switch, "127.0.0.1",  # type: ignore[misc]
                                                 port)
                    self.switches[name] = switch
            except OSError:
                self.close()
                self.switches.clear()
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.05)
        await asyncio.wait_for(asyncio.gather(*(s.ready for s in self.switches.values())), timeout)

    def announce_hosts(self, switch: str | None = None) -> None:
        """A gratuitous ARP from every host (of ``switch`` only, when given), so the controller learns where it
        is."""
        for name in self.hosts:
            host = self.spec.hosts[name]
            if switch is not None and host.switch != switch:
                continue
            arp = ArpPacket(1, host.mac, host.ip, 0, host.ip, host.mac, 0xFFFFFFFFFFFF)
            self.switches[host.switch].write(self.packet_in_of(host.port, arp.to_bytes()))

    def packet_out(self, switch: EmulatedSwitch, msg: memoryview, now: int) -> None:
        """A packet-out: an LLDP frame crosses its link; a flow's frame is its setup, done."""
        frame = packet_out_frame(msg)
        if frame[12:14] == b"\x88\xcc":  # LLDP: deliver it to the far end of the link, as a wire would
            try:
                dpid, port, _ = parse_lldp(frame)
            except DecodingError:
                return
            far = self.peer.get((dpid, port))
            if far is not None and far[0] in self.switches:  # a switch not yet connected hears the next round
                self.switches[far[0]].write(self.packet_in_of(far[1], frame))
            return
        key = flow_key(frame)
        if key is not None:
            sent = self.tally.sent.pop(key, None)
            if sent is not None:
                self.tally.setup_ns.append(now - sent)

    def _frame(self, source: str, destination: str) -> bytes:
        found = self._frames.get((source, destination))
        if found is None:
            host, far = self.spec.hosts[source], self.spec.hosts[destination]
            frame = udp_frame(far.mac, host.mac, host.ip, far.ip, 0, FLOW_PORT)
            found = self._frames[(source, destination)] = self.packet_in_of(host.port, frame)
        return found

    def new_flows(self, count: int) -> None:
        """Send ``count`` new flows between random pairs, one write per switch."""
        batches: dict[str, list[bytes]] = {}
        keys: list[tuple[bytes, int]] = []
        for _ in range(count):
            source, destination = self.pick.sample(self.hosts, 2)
            sport = self.next_sport[source]
            self.next_sport[source] = sport + 1 if sport < 65535 else 1024
            msg = bytearray(self._frame(source, destination))
            struct.pack_into("!H", msg, self.sport_at, sport)
            if self.fresh_macs:
                msg[self.mac_at:self.mac_at + 6] = self.next_mac.to_bytes(6, "big")
                self.next_mac += 1
            batches.setdefault(self.spec.hosts[source].switch, []).append(bytes(msg))
            keys.append((socket.inet_aton(self.spec.hosts[source].ip), sport))
        now = time.perf_counter_ns()
        for key in keys:
            self.tally.sent[key] = now
        for name, msgs in batches.items():
            self.switches[name].write(b"".join(msgs))

    async def load(self, rate: float, seconds: float, tick: float = 0.001) -> None:
        """New flows at ``rate`` per second for ``seconds``, a batch each ``tick``."""
        begin = time.perf_counter()
        sent = 0
        while True:
            elapsed = time.perf_counter() - begin
            due = min(int(rate * elapsed), int(rate * seconds)) - sent
            if due > 0:
                self.new_flows(due)
                sent += due
            if elapsed >= seconds:
                return
            await asyncio.sleep(tick)

    def close(self) -> None:
        for switch in self.switches.values():
            if switch.transport is not None:
                switch.transport.close()
