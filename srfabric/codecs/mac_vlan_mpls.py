"""The ``mac-vlan-mpls`` codec of "SDN-Based Source Routing for Service Chaining" (section 3).

Ports are 8-bit slots in one bit vector laid over the destination MAC (48
bits), the VLAN ID (12 bits) and the MPLS label of each label stack entry (20
bits each, outermost first). Slot 1 is the most significant byte of the
destination MAC. The outer MPLS TTL is the pointer: a switch reads the slot
numbered by the TTL and decrements it, so the first hop's port sits in slot
``n`` and the last hop's port in slot 1. One label gives 80 bits, 10 ports;
each further label adds 20 bits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from srfabric.codecs.macaddr import mac_to_str
from srfabric.errors import DecodingError, EncodingError

SLOT_BITS = 8
MAC_BITS = 48
VID_BITS = 12
LABEL_BITS = 20
MAX_PORT = 255
MAX_LABELS = 8
BASE_BITS = MAC_BITS + VID_BITS


def capacity_for(labels: int) -> int:
    """Ports that fit with ``labels`` MPLS labels.

    >>> capacity_for(1), capacity_for(2)
    (10, 12)
    """
    return (BASE_BITS + LABEL_BITS * labels) // SLOT_BITS


@dataclass(frozen=True)
class MplsHeader:
    """Destination MAC, VLAN ID, MPLS labels (outermost first) and the outer TTL."""

    eth_dst: int
    vlan_vid: int
    labels: tuple[int, ...]
    ttl: int

    def vector(self) -> tuple[int, int]:
        """The bit vector and its width in bits."""
        value = (self.eth_dst << VID_BITS) | self.vlan_vid
        for label in self.labels:
            value = (value << LABEL_BITS) | label
        return value, BASE_BITS + LABEL_BITS * len(self.labels)

    def wire(self) -> dict[str, str]:
        """The header as transmitted, in hex: destination MAC, 802.1Q TCI, label stack."""
        entries = []
        for index, label in enumerate(self.labels):
            bottom = 1 if index == len(self.labels) - 1 else 0
            ttl = self.ttl if index == 0 else 0
            entries.append(f"{(label << 12) | (bottom << 8) | ttl:08x}")
        return {
            "eth_dst": mac_to_str(self.eth_dst),
            "vlan_tci": f"{self.vlan_vid:04x}",
            "mpls": "".join(entries),
        }


def slot_location(slot: int) -> list[tuple[str, int, int]]:
    """Where slot ``slot`` (1-based, single-label form) lies: (field, lowest bit, width) pieces.

    Pieces are listed from the most significant part of the port to the least.

    >>> slot_location(1)
    [('eth_dst', 40, 8)]
    >>> slot_location(8)
    [('vlan_vid', 0, 4), ('mpls_label', 16, 4)]
    """
    width = BASE_BITS + LABEL_BITS
    high = width - SLOT_BITS * (slot - 1)  # exclusive upper bit of the slot
    low = high - SLOT_BITS
    fields = [
        ("eth_dst", LABEL_BITS + VID_BITS, MAC_BITS),
        ("vlan_vid", LABEL_BITS, VID_BITS),
        ("mpls_label", 0, LABEL_BITS),
    ]
    pieces = []
    for name, start, size in fields:
        lo, hi = max(low, start), min(high, start + size)
        if lo < hi:
            pieces.append((name, lo - start, hi - lo))
    return pieces


class MacVlanMplsCodec:
    """Encode up to 10 ports of 1..255 into dst MAC + VLAN ID + MPLS label (more with more labels).

    Examples
    --------
    >>> codec = MacVlanMplsCodec()
    >>> header = codec.encode([3, 2, 4])
    >>> header.wire()
    {'eth_dst': '04:02:03:00:00:00', 'vlan_tci': '0000', 'mpls': '00000103'}
    >>> codec.decode(header)[0]
    3
    """

    name = "mac-vlan-mpls"
    capacity = capacity_for(1)
    max_port = MAX_PORT

    def encode(self, ports: Sequence[int]) -> MplsHeader:
        labels = 1
        while capacity_for(labels) < len(ports):
            labels += 1
        if labels > MAX_LABELS:
            raise EncodingError(
                "ports",
                f"{len(ports)} hops exceed the mac-vlan-mpls limit of {capacity_for(MAX_LABELS)}"
                f" ({MAX_LABELS} MPLS labels)",
            )
        width = BASE_BITS + LABEL_BITS * labels
        count = len(ports)
        value = 0
        for hop, port in enumerate(ports, start=1):
            if not isinstance(port, int) or not 1 <= port <= MAX_PORT:
                raise EncodingError(
                    f"ports[{hop - 1}]",
                    f"port {port!r} is outside 1..{MAX_PORT} (8-bit slot, 0 is padding)",
                )
            slot = count - hop + 1
            value |= port << (width - SLOT_BITS * slot)
        label_values = []
        for index in range(labels):
            label_values.append((value >> (LABEL_BITS * (labels - 1 - index))) & 0xFFFFF)
        rest = value >> (LABEL_BITS * labels)
        return MplsHeader(
            eth_dst=rest >> VID_BITS,
            vlan_vid=rest & 0xFFF,
            labels=tuple(label_values),
            ttl=count,
        )

    def decode(self, header: MplsHeader) -> tuple[int, MplsHeader]:
        if not header.labels:
            raise DecodingError("mpls", "no MPLS label: not a mac-vlan-mpls header")
        if header.ttl == 0:
            raise DecodingError("mpls_ttl", "TTL is 0: the path is exhausted")
        value, width = header.vector()
        if header.ttl > width // SLOT_BITS:
            raise DecodingError("mpls_ttl", f"TTL {header.ttl} points past the {width // SLOT_BITS} slots present")
        port = (value >> (width - SLOT_BITS * header.ttl)) & 0xFF
        if port == 0:
            raise DecodingError("mpls_ttl", f"slot {header.ttl} holds port 0 (padding)")
        return port, MplsHeader(header.eth_dst, header.vlan_vid, header.labels, header.ttl - 1)

    def remaining(self, header: MplsHeader) -> int:
        return header.ttl
