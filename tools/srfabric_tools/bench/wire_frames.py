"""Frames as the emulated switches with tables see them: bytes read into the header fields a flow entry matches
and acts on (``simulate.Packet``), and written back after the entry's actions, so a frame that misses a table
reaches the controller as the bytes a real switch would send.

Ethernet, any number of VLAN tags and MPLS labels, then IPv4 with UDP or TCP ports; anything past the fields is
carried as it came (the payload). Other ethertypes keep their whole body as payload.
"""

from __future__ import annotations

import struct

from srfabric.errors import DecodingError
from srfabric_tools.simulate import Packet

VLAN, MPLS, IPV4 = 0x8100, 0x8847, 0x0800
L4_PORTS = (6, 17)  # TCP, UDP


def decode(frame: bytes) -> tuple[Packet, bytes]:
    """A frame's fields and the bytes after them.

    >>> from srfabric.xdp.frames import udp_frame
    >>> packet, rest = decode(udp_frame(2, 1, "10.0.0.1", "10.0.0.2", 20000, 5009))
    >>> packet.eth_dst, packet.ip_proto, packet.tp_src, packet.tp_dst
    (2, 17, 20000, 5009)
    >>> encode(packet, rest) == udp_frame(2, 1, "10.0.0.1", "10.0.0.2", 20000, 5009)
    True
    """
    if len(frame) < 14:
        raise DecodingError("frame", f"{len(frame)} bytes, under an Ethernet header's 14")
    packet = Packet(int.from_bytes(frame[6:12], "big"), int.from_bytes(frame[0:6], "big"), 0)
    at = 12
    (kind,) = struct.unpack_from("!H", frame, at)
    at += 2
    while kind == VLAN and len(frame) >= at + 4:
        tci, kind = struct.unpack_from("!HH", frame, at)
        packet.vlans.append(tci)
        at += 4
    while kind == MPLS and len(frame) >= at + 4:
        (word,) = struct.unpack_from("!I", frame, at)
        packet.mpls.append([word >> 12, word & 0xFF, (word >> 9) & 7])
        at += 4
        if word & 0x100:  # bottom of stack: IPv4 follows (the only payload srfabric labels)
            kind = IPV4
            break
    packet.eth_type = kind
    if kind != IPV4 or len(frame) < at + 20:
        return packet, bytes(frame[at:])
    return packet, _ipv4(frame, at, packet)


def _ipv4(frame: bytes, at: int, packet: Packet) -> bytes:
    header = (frame[at] & 0x0F) * 4
    packet.ip_dscp = frame[at + 1] >> 2
    packet.ip_proto = frame[at + 9]
    packet.ipv4_src = int.from_bytes(frame[at + 12:at + 16], "big")
    packet.ipv4_dst = int.from_bytes(frame[at + 16:at + 20], "big")
    if packet.ip_proto in L4_PORTS and len(frame) >= at + header + 4:
        packet.tp_src, packet.tp_dst = struct.unpack_from("!HH", frame, at + header)
    return bytes(frame[at:])  # from the IPv4 header on: ``encode`` writes the fields back into it


def encode(packet: Packet, rest: bytes) -> bytes:
    """The bytes of ``packet`` with ``rest`` after its layer-2 headers (as :func:`decode` split them), the IPv4
    fields an action may have set written into it (the header checksum is left as it came)."""
    out = bytearray(packet.eth_dst.to_bytes(6, "big") + packet.eth_src.to_bytes(6, "big"))
    for tci in packet.vlans:
        out += struct.pack("!HH", VLAN, tci)
    out += struct.pack("!H", MPLS if packet.mpls else packet.eth_type)
    for number, (label, ttl, tc) in enumerate(packet.mpls):
        bottom = 0x100 if number == len(packet.mpls) - 1 else 0
        out += struct.pack("!I", (label & 0xFFFFF) << 12 | (tc & 7) << 9 | bottom | (ttl & 0xFF))
    if packet.eth_type != IPV4 or len(rest) < 20:
        return bytes(out) + rest
    ip = bytearray(rest)
    ip[1] = (packet.ip_dscp << 2) | (ip[1] & 3)
    ip[12:16] = packet.ipv4_src.to_bytes(4, "big")
    ip[16:20] = packet.ipv4_dst.to_bytes(4, "big")
    header = (ip[0] & 0x0F) * 4
    if packet.ip_proto in L4_PORTS and len(ip) >= header + 4:
        struct.pack_into("!HH", ip, header, packet.tp_src, packet.tp_dst)
    return bytes(out + ip)
