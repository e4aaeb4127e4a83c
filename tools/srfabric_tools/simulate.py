"""Execute flow entries on a modelled packet: a fake switch and a fabric walk.

Tests use this to check forwarding behaviour (where a packet goes, which
functions it crosses, what arrives) instead of comparing flow text. It follows
Open vSwitch's semantics for the fields srfabric uses: ``eth_type`` is the
type after VLAN tags, IP fields are hidden under MPLS, and apply-actions run
in order with every output sending the packet as it is at that point.
"""

from __future__ import annotations

import copy
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import assert_never

from srfabric.errors import SrfabricError
from srfabric.model.fabric import Fabric
from srfabric.rules.arp_answers import IN_PORT
from srfabric.rules.entries import (
    Action,
    Bucket,
    FlowEntry,
    Group,
    GroupEntry,
    LoadBits,
    Meter,
    MoveBits,
    Output,
    OutputBits,
    PopMpls,
    PopVlan,
    PushMpls,
    PushVlan,
    SetField,
    SetMplsTtl,
    SetQueue,
    ToController,
)
from srfabric.rules.pipeline import ARP_ETHERTYPE, MPLS_ETHERTYPE

ARP_FIELDS = {"arp_op": 16, "arp_spa": 32, "arp_tpa": 32, "arp_sha": 48, "arp_tha": 48}
WIDTHS = {"eth_src": 48, "eth_dst": 48, "vlan_tci": 16, "vlan_vid": 13, "mpls_label": 20, "reg0": 32}


@dataclass
class Packet:
    """The header fields of one frame; ``vlans`` and ``mpls`` list the outermost first."""

    eth_src: int
    eth_dst: int
    eth_type: int = 0x0800
    ipv4_src: int = 0
    ipv4_dst: int = 0
    ip_proto: int = 0
    tp_src: int = 0
    tp_dst: int = 0
    vlans: list[int] = field(default_factory=list)
    mpls: list[list[int]] = field(default_factory=list)
    regs: dict[str, int] = field(default_factory=dict)
    ip_dscp: int = 0
    ipv6_src: int = 0  # with eth_type 0x86DD: an IPv6 frame (its ip_proto and ports are the fields above)
    ipv6_dst: int = 0
    queue: int | None = None  # set_queue's choice: the switch's metadata, not carried over a link
    arp: dict[str, int] = field(default_factory=dict)  # with eth_type 0x0806: its ``ARP_FIELDS``

    def clone(self) -> Packet:
        """A copy whose tags, labels and registers are its own (what ``copy.deepcopy`` gives, far cheaper)."""
        copied = copy.copy(self)
        copied.vlans, copied.mpls, copied.regs = list(self.vlans), [list(m) for m in self.mpls], dict(self.regs)
        copied.arp = dict(self.arp)
        return copied

    def read(self, name: str, in_port: int) -> int | None:
        """A field's value, or None where the packet does not have it."""
        if name == "in_port":
            return in_port
        if name in ("eth_src", "eth_dst"):
            return int(getattr(self, name))
        if name == "eth_type":
            return MPLS_ETHERTYPE if self.mpls else self.eth_type
        if name == "vlan_vid":
            return ((self.vlans[0] & 0xFFF) | 0x1000) if self.vlans else 0
        if name == "vlan_tci":
            return (self.vlans[0] | 0x1000) if self.vlans else 0
        if name == "vlan_pcp":
            return self.vlans[0] >> 13 if self.vlans else None
        if name in ("mpls_label", "mpls_ttl", "mpls_tc"):
            if not self.mpls:
                return None
            return self.mpls[0][("mpls_label", "mpls_ttl", "mpls_tc").index(name)]
        if name == "reg0":
            return self.regs.get("reg0", 0)
        if name in ARP_FIELDS:
            return self.arp.get(name, 0) if self.eth_type == ARP_ETHERTYPE and not self.mpls else None
        if self.mpls or self.eth_type not in (0x0800, 0x86DD):
            return None
        if name in (("ipv4_src", "ipv4_dst", "ip_dscp") if self.eth_type == 0x0800 else ("ipv6_src", "ipv6_dst")):
            return int(getattr(self, name))
        if name == "ip_proto":
            return self.ip_proto
        protos = {"tcp": 6, "udp": 17}
        proto, _, which = name.partition("_")
        if proto in protos and self.ip_proto == protos[proto]:
            return self.tp_src if which == "src" else self.tp_dst
        return None

    def write(self, name: str, value: int) -> None:
        if name in ("eth_src", "eth_dst"):
            setattr(self, name, value & ((1 << 48) - 1))
        elif name in ("vlan_vid", "vlan_tci"):
            if not self.vlans:
                raise SrfabricError(name, "set on a frame without a VLAN tag")
            self.vlans[0] = (self.vlans[0] & ~0xFFF) | (value & 0xFFF)  # the priority bits stay
        elif name == "vlan_pcp":
            if not self.vlans:
                raise SrfabricError(name, "set on a frame without a VLAN tag")
            self.vlans[0] = (self.vlans[0] & 0xFFF) | ((value & 7) << 13)
        elif name == "ip_dscp":
            if self.mpls or self.eth_type != 0x0800:
                raise SrfabricError(name, "set on a frame that is not plain IPv4")
            self.ip_dscp = value & 0x3F
        elif name in ("mpls_label", "mpls_tc"):
            if not self.mpls:
                raise SrfabricError(name, "set on a frame without MPLS")
            if name == "mpls_label":
                self.mpls[0][0] = value & 0xFFFFF
            else:
                self.mpls[0][2] = value & 7
        elif name == "reg0":
            self.regs["reg0"] = value
        elif name in ARP_FIELDS and self.eth_type == ARP_ETHERTYPE and not self.mpls:
            self.arp[name] = value & ((1 << ARP_FIELDS[name]) - 1)
        else:
            raise SrfabricError(name, "the fake switch cannot write this field")


def _bits(value: int, ofs: int, nbits: int) -> int:
    return (value >> ofs) & ((1 << nbits) - 1)


def entry_matches(entry: FlowEntry, packet: Packet, in_port: int) -> bool:
    for name, value, mask in entry.match:
        have = packet.read(name, in_port)
        if have is None:
            return False
        if mask is None:
            if have != value:
                return False
        elif have & mask != value & mask:
            return False
    return True


@dataclass
class SwitchResult:
    outputs: list[tuple[int, Packet]]
    to_controller: bool
    hit: list[FlowEntry]
    metered: list[int] = field(default_factory=list)  # the meters the frame went through, in order


class FakeSwitch:
    """One switch's tables, executed on ``Packet`` objects."""

    def __init__(self, entries: list[FlowEntry], groups: list[GroupEntry] | None = None) -> None:
        self.tables: dict[int, list[FlowEntry]] = {}
        for entry in entries:
            self.tables.setdefault(entry.table, []).append(entry)
        self.groups = {group.group_id: group for group in groups or []}

    def lookup(self, table: int, packet: Packet, in_port: int) -> FlowEntry | None:
        best: FlowEntry | None = None
        for entry in self.tables.get(table, []):
            if entry_matches(entry, packet, in_port):
                if best is not None and entry.priority == best.priority:
                    raise SrfabricError("table", f"two entries of priority {entry.priority} match in table {table}")
                if best is None or entry.priority > best.priority:
                    best = entry
        return best

    def process(self, packet: Packet, in_port: int) -> SwitchResult:
        packet = packet.clone()
        packet.queue = None
        result = SwitchResult([], False, [])
        table: int | None = 0
        while table is not None:
            entry = self.lookup(table, packet, in_port)
            if entry is None:
                break
            result.hit.append(entry)
            for action in entry.actions:
                self._apply(action, packet, in_port, result)
            table = entry.goto
        return result

    def _apply(self, action: Action, packet: Packet, in_port: int, result: SwitchResult) -> None:
        match action:
            case Output(port):
                result.outputs.append((in_port if port == IN_PORT else port, packet.clone()))
            case OutputBits(field, ofs, nbits):
                value = packet.read(field, in_port)
                assert value is not None, field
                result.outputs.append((_bits(value, ofs, nbits), packet.clone()))
            case LoadBits(field, ofs, nbits, loaded):
                value = packet.read(field, in_port) or 0
                mask = ((1 << nbits) - 1) << ofs
                packet.write(field, (value & ~mask) | (loaded << ofs))
            case MoveBits(src_field, src_ofs, dst_field, dst_ofs, nbits):
                src = _bits(packet.read(src_field, in_port) or 0, src_ofs, nbits)
                dst = packet.read(dst_field, in_port) or 0
                mask = ((1 << nbits) - 1) << dst_ofs
                packet.write(dst_field, (dst & ~mask) | (src << dst_ofs))
            case SetField(field, value):
                packet.write(field, value)
            case PushVlan():
                packet.vlans.insert(0, 0)
            case PopVlan():
                packet.vlans.pop(0)
            case PushMpls():
                packet.mpls.insert(0, [0, 64, 0])  # label, TTL, traffic class
            case PopMpls(ethertype):
                packet.mpls.pop(0)
                if not packet.mpls:
                    packet.eth_type = ethertype
            case SetMplsTtl(ttl):
                packet.mpls[0][1] = ttl
            case ToController():
                result.to_controller = True
            case SetQueue(queue_id):
                packet.queue = queue_id
            case Group(group_id):
                self._group(group_id, packet, in_port, result)
            case Meter(meter_id):
                result.metered.append(meter_id)  # no clock here to police by: the meter is noted, the frame passes
            case _:
                assert_never(action)


    def _group(self, group_id: int, packet: Packet, in_port: int, result: SwitchResult) -> None:
        group = self.groups.get(group_id)
        if group is None:
            raise SrfabricError("group", f"group {group_id} is not installed")
        buckets = [select_bucket(group, packet)] if group.type == "select" else list(group.buckets)
        for bucket in buckets:
            copied = packet.clone()  # every bucket acts on its own copy
            for action in bucket.actions:
                self._apply(action, copied, in_port, result)


def select_bucket(group: GroupEntry, packet: Packet) -> Bucket:
    """The bucket a select group gives this packet's flow: a 5-tuple hash spread over the weights."""
    key = f"{packet.ipv4_src}/{packet.ipv4_dst}/{packet.ip_proto}/{packet.tp_src}/{packet.tp_dst}".encode()
    total = sum(bucket.weight for bucket in group.buckets)
    point = zlib.crc32(key) % total
    for bucket in group.buckets:
        point -= bucket.weight
        if point < 0:
            return bucket
    raise SrfabricError("group", f"group {group.group_id} has no bucket with weight")


@dataclass
class Walk:
    """Where a packet went: functions crossed in order, deliveries and the switches it visited."""

    functions: list[str] = field(default_factory=list)
    delivered: list[tuple[str, Packet]] = field(default_factory=list)
    switches: list[int] = field(default_factory=list)
    dropped_at: list[int] = field(default_factory=list)
    to_controller: list[int] = field(default_factory=list)
    egress: list[tuple[int, int, int | None]] = field(default_factory=list)  # (switch, port, queue) per output
    metered: list[tuple[int, int]] = field(default_factory=list)  # (switch, meter) per meter crossed


def walk(
    fabric: Fabric, tables: dict[int, list[FlowEntry]], packet: Packet, dpid: int, in_port: int, max_hops: int = 64,
    groups: dict[int, list[GroupEntry]] | None = None,
    behaviour: Mapping[str, Callable[[Packet], Packet]] | None = None,
) -> Walk:
    """Inject ``packet`` at (dpid, in_port) and follow it through switches, links and functions.

    Service functions forward a frame unchanged from their ingress to their egress port, or as ``behaviour``
    (by function name) makes of it: a router's new MAC addresses, a NAT's source address.
    """
    switches = {d: FakeSwitch(entries, (groups or {}).get(d)) for d, entries in tables.items()}
    result = Walk()
    pending = [(packet, dpid, in_port)]
    steps = 0
    while pending:
        steps += 1
        if steps > max_hops:
            raise SrfabricError("walk", f"packet still moving after {max_hops} switches (loop?)")
        current, here, port = pending.pop(0)
        result.switches.append(here)
        outcome = switches[here].process(current, port)
        result.metered += [(here, meter) for meter in outcome.metered]
        if outcome.to_controller:
            result.to_controller.append(here)
        if not outcome.outputs and not outcome.to_controller:
            result.dropped_at.append(here)
        for out_port, sent in outcome.outputs:
            result.egress.append((here, out_port, sent.queue))
            far = fabric.far_end((here, out_port))
            if far is None:
                result.dropped_at.append(here)
                continue
            if far.host is not None:
                result.delivered.append((far.host, sent))
                continue
            if far.function is not None:
                result.functions.append(far.function)
                if behaviour and far.function in behaviour:
                    sent = behaviour[far.function](sent.clone())
            assert far.arrival is not None  # only a host ends a frame's way
            pending.append((sent, *far.arrival))
    return result
