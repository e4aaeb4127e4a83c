"""The flow table's ARP entries applied to an ARP frame the XDP program passed up: the XDP switch answers a
request for a known host as Open vSwitch does with the same entries (``rules.arp_answers``). Pure.

Examples
--------
>>> from srfabric.model.fabric import Host
>>> from srfabric.rules.arp_answers import PROBE, answer_entry
>>> from srfabric.controller.packets import ArpPacket, parse_arp
>>> table = [answer_entry(Host("h2", 0x2, "10.0.0.2", 1, 2)), PROBE]
>>> asked = ArpPacket(1, 0x1, "10.0.0.1", 0, "10.0.0.2", 0x1, 0xFFFFFFFFFFFF).to_bytes()
>>> entry = arp_entry(table, 1, asked)
>>> reply = parse_arp(answered(entry, asked))
>>> (reply.op, reply.sender_mac, reply.sender_ip, reply.target_mac, reply.target_ip)
(2, 2, '10.0.0.2', 1, '10.0.0.1')
>>> probe = ArpPacket(1, 0x1, "0.0.0.0", 0, "10.0.0.2", 0x1, 0xFFFFFFFFFFFF).to_bytes()
>>> arp_entry(table, 1, probe) is PROBE and answered(PROBE, probe) is None
True
"""

from __future__ import annotations

from collections.abc import Iterable

from srfabric.rules.arp_answers import IN_PORT
from srfabric.rules.entries import FlowEntry, MoveBits, Output, SetField
from srfabric.rules.pipeline import ARP_ETHERTYPE, HOST_IN

# Where each field an ARP entry reads or writes sits in an untagged Ethernet/IPv4 ARP frame: offset, bytes.
FIELDS = {"eth_dst": (0, 6), "eth_src": (6, 6), "eth_type": (12, 2), "arp_op": (20, 2), "arp_sha": (22, 6),
          "arp_spa": (28, 4), "arp_tha": (32, 6), "arp_tpa": (38, 4)}
ARP_FRAME = 42


def _read(frame: bytes | bytearray, name: str) -> int:
    offset, size = FIELDS[name]
    return int.from_bytes(frame[offset:offset + size], "big")


def _matches(entry: FlowEntry, in_port: int, frame: bytes) -> bool:
    for name, value, mask in entry.match:
        if name == "in_port":
            have = in_port
        elif name in FIELDS:
            have = _read(frame, name)
        else:
            return False  # a field an ARP frame does not carry
        if (have if mask is None else have & mask) != value:
            return False
    return True


def arp_entry(table: Iterable[FlowEntry], in_port: int, frame: bytes) -> FlowEntry | None:
    """The entry of table HOST_IN that takes ``frame`` (an ARP frame from ``in_port``): the highest priority of
    those that match it; None for a frame too short to be ARP, or one no entry takes."""
    if len(frame) < ARP_FRAME or _read(frame, "eth_type") != ARP_ETHERTYPE:
        return None
    taking = [entry for entry in table if entry.table == HOST_IN and _matches(entry, in_port, frame)]
    return max(taking, key=lambda entry: entry.priority, default=None)


def answered(entry: FlowEntry, frame: bytes) -> bytes | None:
    """``frame`` as ``entry``'s actions leave it when they send it back out of its port; None when they do not
    (the controller alone has it)."""
    if Output(IN_PORT) not in entry.actions:
        return None
    out = bytearray(frame)
    for action in entry.actions:
        if isinstance(action, MoveBits) and action.src in FIELDS and action.dst in FIELDS:
            _write(out, action.dst, _read(out, action.src))
        elif isinstance(action, SetField) and action.field in FIELDS:
            _write(out, action.field, action.value)
    return bytes(out)


def _write(frame: bytearray, name: str, value: int) -> None:
    offset, size = FIELDS[name]
    frame[offset:offset + size] = (value & ((1 << 8 * size) - 1)).to_bytes(size, "big")
