"""IPv6 Neighbour Discovery (RFC 4861), the part the controller reads and writes: solicitations and
advertisements with their link-layer address options. Pure: bytes in, bytes out."""

from __future__ import annotations

import ipaddress
import struct
from dataclasses import dataclass

from srfabric.errors import DecodingError

ETH = struct.Struct("!6s6sH")
IPV6 = struct.Struct("!IHBB16s16s")
ND = struct.Struct("!BBHI16s")  # type, code, checksum, reserved (NS) or flags (NA), target
SOLICIT, ADVERT = 135, 136
SOURCE_LL, TARGET_LL = 1, 2  # option types: source and target link-layer address
SOLICITED, OVERRIDE = 0x40000000, 0x20000000
ALL_NODES = "ff02::1"


@dataclass(frozen=True)
class NdPacket:
    """A neighbour solicitation (``kind`` 135) or advertisement (136) and the frame it came in."""

    kind: int
    src: str
    dst: str
    target: str
    lladdr: int | None  # the source (NS) or target (NA) link-layer address option
    eth_src: int
    eth_dst: int
    flags: int = 0

    def advert_for(self, mac: int) -> bytes:
        """The advertisement a host owning ``target`` with ``mac`` sends in answer to this solicitation.

        >>> ns = NdPacket(SOLICIT, "fd00::1", "ff02::1:ff00:2", "fd00::2", 0x1, 0x1, 0x333300000002)
        >>> na = parse_nd(ns.advert_for(0x2))
        >>> (na.kind, na.src, na.dst, na.target, na.lladdr, na.eth_dst, bool(na.flags & SOLICITED))
        (136, 'fd00::2', 'fd00::1', 'fd00::2', 2, 1, True)
        """
        unspecified = self.src == "::"
        dst = ALL_NODES if unspecified else self.src
        # To the asker's own MAC (its option), not the frame's source: a switch may have rewritten that.
        eth_dst = 0x333300000001 if unspecified else self.lladdr if self.lladdr is not None else self.eth_src
        flags = OVERRIDE | (0 if unspecified else SOLICITED)
        return nd_frame(ADVERT, self.target, dst, self.target, mac, mac, eth_dst, flags)


def _checksum(src: bytes, dst: bytes, message: bytes) -> int:
    data = src + dst + struct.pack("!IxxxB", len(message), 58) + message
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def nd_frame(kind: int, src: str, dst: str, target: str, lladdr: int, eth_src: int, eth_dst: int,
             flags: int = 0) -> bytes:
    """An Ethernet frame carrying a solicitation or an advertisement with its link-layer address option."""
    source, destination = ipaddress.IPv6Address(src).packed, ipaddress.IPv6Address(dst).packed
    option = struct.pack("!BB6s", SOURCE_LL if kind == SOLICIT else TARGET_LL, 1, lladdr.to_bytes(6, "big"))
    body = ND.pack(kind, 0, 0, flags, ipaddress.IPv6Address(target).packed) + option
    body = body[:2] + struct.pack("!H", _checksum(source, destination, body)) + body[4:]
    header = IPV6.pack(6 << 28, len(body), 58, 255, source, destination)
    return ETH.pack(eth_dst.to_bytes(6, "big"), eth_src.to_bytes(6, "big"), 0x86DD) + header + body


def parse_nd(frame: bytes) -> NdPacket:
    """A solicitation or an advertisement (no extension headers, hop limit 255 as RFC 4861 demands).

    >>> parse_nd(bytes(14))
    Traceback (most recent call last):
    srfabric.errors.DecodingError: nd: frame of 14 bytes is shorter than 78
    """
    least = ETH.size + IPV6.size + ND.size
    if len(frame) < least:
        raise DecodingError("nd", f"frame of {len(frame)} bytes is shorter than {least}")
    eth_dst, eth_src, ethertype = ETH.unpack_from(frame)
    if ethertype != 0x86DD:
        raise DecodingError("nd", f"ethertype {ethertype:#06x} is not IPv6")
    first, length, next_header, hops, src, dst = IPV6.unpack_from(frame, ETH.size)
    if first >> 28 != 6 or next_header != 58 or hops != 255:
        raise DecodingError("nd", "not ICMPv6 with hop limit 255 right after the IPv6 header")
    end = min(len(frame), ETH.size + IPV6.size + length)
    kind, code, _, flags, target = ND.unpack_from(frame, ETH.size + IPV6.size)
    if kind not in (SOLICIT, ADVERT) or code != 0:
        raise DecodingError("nd", f"ICMPv6 type {kind} code {code} is not a solicitation or an advertisement")
    lladdr = None
    offset = ETH.size + IPV6.size + ND.size
    while offset + 2 <= end:
        option, units = frame[offset], frame[offset + 1]
        if units == 0 or offset + 8 * units > end:
            raise DecodingError("nd", "an option's length is 0 or runs past the end")
        if option == (SOURCE_LL if kind == SOLICIT else TARGET_LL) and units == 1:
            lladdr = int.from_bytes(frame[offset + 2 : offset + 8], "big")
        offset += 8 * units
    return NdPacket(kind, str(ipaddress.IPv6Address(src)), str(ipaddress.IPv6Address(dst)),
                    str(ipaddress.IPv6Address(target)), lladdr, int.from_bytes(eth_src, "big"),
                    int.from_bytes(eth_dst, "big"), flags)
