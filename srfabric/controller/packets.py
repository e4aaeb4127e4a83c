"""Pure codecs for the few frames the controller itself reads and writes: ARP and LLDP."""

from __future__ import annotations

import hmac
import ipaddress
import socket
import struct
from dataclasses import dataclass

from srfabric.errors import DecodingError
from srfabric.model.flow import FiveTuple

ETH = struct.Struct("!6s6sH")
ARP = struct.Struct("!HHBBH6s4s6s4s")
LLDP_MULTICAST = bytes.fromhex("0180c200000e")
BROADCAST = b"\xff" * 6
ARP_REQUEST, ARP_REPLY = 1, 2


def _mac_bytes(value: int) -> bytes:
    return value.to_bytes(6, "big")


@dataclass(frozen=True)
class ArpPacket:
    op: int
    sender_mac: int
    sender_ip: str
    target_mac: int
    target_ip: str
    eth_src: int
    eth_dst: int

    def to_bytes(self) -> bytes:
        eth = ETH.pack(_mac_bytes(self.eth_dst), _mac_bytes(self.eth_src), 0x0806)
        arp = ARP.pack(1, 0x0800, 6, 4, self.op, _mac_bytes(self.sender_mac),
                       ipaddress.IPv4Address(self.sender_ip).packed, _mac_bytes(self.target_mac),
                       ipaddress.IPv4Address(self.target_ip).packed)
        return eth + arp

    def reply(self, answer_mac: int) -> ArpPacket:
        """The reply a host owning ``target_ip`` with ``answer_mac`` would send.

        >>> req = ArpPacket(1, 0x1, "10.0.0.1", 0, "10.0.0.2", 0x1, 0xFFFFFFFFFFFF)
        >>> parse_arp(req.reply(0x2).to_bytes()).sender_mac
        2
        """
        return ArpPacket(ARP_REPLY, answer_mac, self.target_ip, self.sender_mac, self.sender_ip,
                         answer_mac, self.sender_mac)


def parse_arp(frame: bytes) -> ArpPacket:
    if len(frame) < ETH.size + ARP.size:
        raise DecodingError("arp", f"frame of {len(frame)} bytes is shorter than {ETH.size + ARP.size}")
    dst, src, ethertype = ETH.unpack_from(frame)
    if ethertype != 0x0806:
        raise DecodingError("arp", f"ethertype {ethertype:#06x} is not ARP")
    hw, proto, hlen, plen, op, sha, spa, tha, tpa = ARP.unpack_from(frame, ETH.size)
    if (hw, proto, hlen, plen) != (1, 0x0800, 6, 4):
        raise DecodingError("arp", "only Ethernet/IPv4 ARP is handled")
    return ArpPacket(op, int.from_bytes(sha, "big"), str(ipaddress.IPv4Address(spa)), int.from_bytes(tha, "big"),
                     str(ipaddress.IPv4Address(tpa)), int.from_bytes(src, "big"), int.from_bytes(dst, "big"))


def _tlv(kind: int, value: bytes) -> bytes:
    return struct.pack("!H", (kind << 9) | len(value)) + value


# srfabric's organisationally specific LLDP TLV (type 127): an identifier of its own, a subtype, the controller's
# clock when it sent the frame (8 bytes), and an HMAC-SHA256 (first 16 bytes) of chassis, port and that time under
# the controller's key: a switch, even one with a valid certificate, cannot make the controller believe in a link
# by sending LLDP it made itself, and a frame it captured is refused once stale or seen before (``links.py``).
SIGNATURE_TLV = b"\x02SR\x02"
SIGNATURE_BYTES = 16
SENT = struct.Struct("!Q")
SIGNATURE_AT = len(SIGNATURE_TLV) + SENT.size  # in the TLV's value: identifier and subtype, time, signature
SIGNED_BYTES = SIGNATURE_AT + SIGNATURE_BYTES
SIGNED_HEAD = struct.pack("!H", (127 << 9) | SIGNED_BYTES)


def lldp_signature(key: bytes, dpid: int, port: int, sent_ns: int) -> bytes:
    return hmac.digest(key, f"{dpid:016x}:{port}:{sent_ns}".encode(), "sha256")[:SIGNATURE_BYTES]


def lldp_frame(dpid: int, port: int, src_mac: int = 0x020000000001, key: bytes = b"", sent_ns: int = 0) -> bytes:
    """An LLDP frame naming the sending switch (chassis ID) and port (port ID), signed with ``key`` when given,
    with the time it is sent.

    >>> parse_lldp(lldp_frame(0x101, 3, key=b"k", sent_ns=7), key=b"k")
    (257, 3, 7)
    >>> parse_lldp(lldp_frame(0x101, 3), key=b"k")
    Traceback (most recent call last):
    srfabric.errors.DecodingError: lldp: not signed with this controller's key
    """
    chassis = _tlv(1, b"\x07" + f"dpid:{dpid:016x}".encode())
    port_id = _tlv(2, b"\x07" + str(port).encode())
    ttl = _tlv(3, struct.pack("!H", 120))
    signed = _tlv(127, SIGNATURE_TLV + SENT.pack(sent_ns) + lldp_signature(key, dpid, port, sent_ns)) if key else b""
    return ETH.pack(LLDP_MULTICAST, _mac_bytes(src_mac), 0x88CC) + chassis + port_id + ttl + signed + _tlv(0, b"")


def parse_lldp(frame: bytes, key: bytes | None = None) -> tuple[int, int, int]:
    """(dpid, port, the time it was sent, 0 if unsigned) from an LLDP frame that ``lldp_frame`` wrote; with
    ``key``, only if it signed it with it (a changed time breaks the signature too).

    >>> signed = lldp_frame(1, 2, key=b"k", sent_ns=5)
    >>> parse_lldp(signed.replace(SENT.pack(5), SENT.pack(6)), key=b"k")
    Traceback (most recent call last):
    srfabric.errors.DecodingError: lldp: not signed with this controller's key
    """
    if len(frame) < ETH.size:
        raise DecodingError("lldp", "frame too short")
    _, _, ethertype = ETH.unpack_from(frame)
    if ethertype != 0x88CC:
        raise DecodingError("lldp", f"ethertype {ethertype:#06x} is not LLDP")
    read = read_own_lldp(frame) or read_lldp_tlvs(frame)
    if key is not None and not hmac.compare_digest(read[3], lldp_signature(key, *read[:3])):
        raise DecodingError("lldp", "not signed with this controller's key")
    return read[:3]


# The frame ``lldp_frame`` writes, as far as its port ID: chassis TLV (dpid:<16 hex digits>), then port TLV.
_CHASSIS_TLV = _tlv(1, b"\x07dpid:" + b"0" * 16)
OWN_CHASSIS = _CHASSIS_TLV[:8]
OWN_PORT_AT = ETH.size + len(_CHASSIS_TLV)


def read_own_lldp(frame: bytes) -> tuple[int, int, int, bytes] | None:
    """``read_lldp_tlvs`` for the layout srfabric sends (one read at fixed places; a round at k=16 is 4,096
    frames), or None for any other: then every TLV is walked."""
    if frame[ETH.size:ETH.size + 8] != OWN_CHASSIS:
        return None
    (head,) = struct.unpack_from("!H", frame, OWN_PORT_AT) if len(frame) >= OWN_PORT_AT + 2 else (0,)
    length = head & 0x1FF
    port_id = frame[OWN_PORT_AT + 3:OWN_PORT_AT + 2 + length]
    ttl_at = OWN_PORT_AT + 2 + length
    signed_at = ttl_at + 4
    tail = frame[signed_at + 2:signed_at + 2 + SIGNED_BYTES]
    if head >> 9 != 2 or frame[OWN_PORT_AT + 2:OWN_PORT_AT + 3] != b"\x07" or not port_id.isdigit() \
            or frame[ttl_at:ttl_at + 2] != b"\x06\x02" or frame[signed_at:signed_at + 2] != SIGNED_HEAD \
            or not tail.startswith(SIGNATURE_TLV) or len(tail) != SIGNED_BYTES \
            or frame[signed_at + 2 + len(tail):signed_at + 4 + len(tail)] != b"\x00\x00":  # the end TLV
        return None
    try:
        dpid = int(frame[ETH.size + 8:ETH.size + 24], 16)
    except ValueError:
        return None
    (sent_ns,) = SENT.unpack_from(tail, len(SIGNATURE_TLV))
    return dpid, int(port_id), sent_ns, tail[SIGNATURE_AT:]


def read_lldp_tlvs(frame: bytes) -> tuple[int, int, int, bytes]:
    """(dpid, port, sent time, signature) from any LLDP frame, TLV by TLV."""
    offset, dpid, port, signature, sent_ns = ETH.size, None, None, b"", 0
    while offset + 2 <= len(frame):
        (head,) = struct.unpack_from("!H", frame, offset)
        kind, length = head >> 9, head & 0x1FF
        value = frame[offset + 2 : offset + 2 + length]
        if len(value) < length:
            raise DecodingError("lldp", "TLV runs past the end of the frame")
        offset += 2 + length
        if kind == 0:
            break
        if kind == 1 and value[1:6] == b"dpid:":
            try:
                dpid = int(value[6:], 16)
            except ValueError:
                raise DecodingError("lldp", "chassis ID is not dpid:<hex>") from None
        elif kind == 2 and value[:1] == b"\x07" and value[1:].isdigit():
            port = int(value[1:])
        elif kind == 127 and value[:len(SIGNATURE_TLV)] == SIGNATURE_TLV and \
                len(value) == SIGNED_BYTES:
            (sent_ns,) = SENT.unpack_from(value, len(SIGNATURE_TLV))
            signature = value[SIGNATURE_AT:]
    if dpid is None or port is None:
        raise DecodingError("lldp", "no srfabric chassis/port ID")
    return dpid, port, sent_ns, signature


IPV4 = struct.Struct("!BBHHHBBH4s4s")
PORTS = struct.Struct("!HH")
VLAN_TPIDS = (0x8100, 0x88A8)
MPLS_TYPES = (0x8847, 0x8848)


def _ipv4_offset(frame: bytes) -> int:
    """Where the IPv4 header starts, past VLAN tags and an MPLS stack (an encapsulated copy)."""
    if len(frame) < ETH.size:
        raise DecodingError("frame", f"{len(frame)} bytes is shorter than an Ethernet header ({ETH.size})")
    (ethertype,) = struct.unpack_from("!H", frame, 12)
    offset = ETH.size
    while ethertype in VLAN_TPIDS and offset + 4 <= len(frame):
        (ethertype,) = struct.unpack_from("!H", frame, offset + 2)
        offset += 4
    if ethertype in MPLS_TYPES:
        for _ in range(16):
            if offset + 4 > len(frame):
                raise DecodingError("frame", "MPLS stack runs past the end of the frame")
            bottom = frame[offset + 2] & 1
            offset += 4
            if bottom:
                return offset
        raise DecodingError("frame", "MPLS stack deeper than 16 labels")
    if ethertype != 0x0800:
        raise DecodingError("frame", f"ethertype {ethertype:#06x} is not IPv4")
    return offset


def parse_five_tuple(frame: bytes) -> FiveTuple:
    """The IPv4 5-tuple of a frame, plain or carrying a VLAN/MPLS source-routing header.

    >>> udp = bytes(12) + b"\\x08\\x00" + bytes.fromhex("4500001c000000004011") + bytes(2) \\
    ...     + bytes([10, 0, 0, 1, 10, 0, 0, 2]) + (5000).to_bytes(2, "big") + (53).to_bytes(2, "big") + bytes(4)
    >>> parse_five_tuple(udp)
    FiveTuple(src='10.0.0.1', dst='10.0.0.2', proto=17, sport=5000, dport=53)
    """
    offset = _ipv4_offset(frame)
    if offset + IPV4.size > len(frame):
        raise DecodingError("frame", f"IPv4 header at byte {offset} runs past the end ({len(frame)} bytes)")
    version_ihl, _, _, _, _, _, proto, _, src, dst = IPV4.unpack_from(frame, offset)
    if version_ihl >> 4 != 4 or version_ihl & 0xF < 5:
        raise DecodingError("frame", f"IPv4 version/IHL byte {version_ihl:#04x} is invalid")
    sport = dport = 0
    ports_at = offset + (version_ihl & 0xF) * 4
    if proto in (6, 17) and ports_at + PORTS.size <= len(frame):
        sport, dport = PORTS.unpack_from(frame, ports_at)
    # inet_ntoa writes the same dotted quad as ipaddress without building an object: this runs once per new flow.
    return FiveTuple(socket.inet_ntoa(src), socket.inet_ntoa(dst), proto, sport, dport)
