"""Frames for the XDP tests and benchmarks, built byte by byte (pure, no I/O).

Examples
--------
>>> frame = udp_frame(dst_mac=0x0A0000000002, src_mac=0x0A0000000001, src="10.0.0.1", dst="10.0.0.2")
>>> len(frame), frame[12:14].hex()
(60, '0800')
>>> mpls_frame({"eth_dst": "04:02:03:00:00:00", "vlan_tci": "0000", "mpls": "00000103"}, frame)[12:22].hex()
'81000000884700000103'
"""

from __future__ import annotations

import ipaddress
import struct

ETH_IPV4 = 0x0800
MIN_FRAME = 60  # Ethernet minimum without the FCS


def checksum(header: bytes) -> int:
    """The IPv4 header checksum (ones' complement sum of 16-bit words)."""
    total = sum(struct.unpack(f"!{len(header) // 2}H", header))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def udp_frame(
    dst_mac: int, src_mac: int, src: str, dst: str, sport: int = 4000, dport: int = 5001,
    size: int = MIN_FRAME, proto: int = 17,
) -> bytes:
    """An Ethernet + IPv4 + UDP (or ``proto``) frame of ``size`` bytes (at least 42)."""
    payload = max(0, size - 14 - 20 - 8)
    l4 = struct.pack("!HHHH", sport, dport, 8 + payload, 0) + bytes(payload)
    ip = struct.pack(
        "!BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), 0, 0x4000, 64, proto, 0,
        ipaddress.IPv4Address(src).packed, ipaddress.IPv4Address(dst).packed,
    )
    ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
    return dst_mac.to_bytes(6, "big") + src_mac.to_bytes(6, "big") + struct.pack("!H", ETH_IPV4) + ip + l4


def with_source_mac(frame: bytes, eth_src: int) -> bytes:
    return frame[:6] + eth_src.to_bytes(6, "big") + frame[12:]


def with_destination_mac(frame: bytes, eth_dst: int) -> bytes:
    return eth_dst.to_bytes(6, "big") + frame[6:]


def mpls_frame(wire: dict[str, str], inner: bytes) -> bytes:
    """``inner`` (Ethernet + IPv4) carrying a mac-vlan-mpls header given as ``MplsHeader.wire()``."""
    dst = bytes.fromhex(wire["eth_dst"].replace(":", ""))
    tag = bytes.fromhex("8100") + bytes.fromhex(wire["vlan_tci"]) + bytes.fromhex("8847")
    return dst + inner[6:12] + tag + bytes.fromhex(wire["mpls"]) + inner[14:]


def mac_of(text: str) -> int:
    return int(text.replace(":", ""), 16)
