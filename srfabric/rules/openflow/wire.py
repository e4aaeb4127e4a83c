"""Hand-packed OpenFlow 1.3 messages for the hot path: flow-mods with plain OXM matches and packet-ins.

os-ken builds and parses every message correctly, through a tree of Python objects
per message. Reactive flow setup sends
one of each per new flow, and a sync one flow-mod per changed entry, so these
are packed with ``struct``: the match is
written field by field from a table of OXM codes, the instructions are built
once per distinct action list by os-ken and reused. Anything outside the table
(Nicira fields such as ``mpls_ttl``) returns ``None`` and the caller falls back
to os-ken. Tests check the bytes against os-ken's.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from operator import itemgetter
from typing import Any

from os_ken.ofproto import ofproto_v1_3 as ofp

from srfabric.errors import DecodingError
from srfabric.rules.entries import Action, FlowEntry, Kind, Match
from srfabric.rules.openflow.ofbind import bind_action, flow_add, flow_delete, instructions, wire_cookie
from srfabric.rules.reactive import FlowStep

# OXM basic class (0x8000) field numbers and value widths in bytes, from OpenFlow 1.3.5 table 12.
OXM_FIELDS: dict[str, tuple[int, int]] = {
    "in_port": (0, 4), "eth_dst": (3, 6), "eth_src": (4, 6), "eth_type": (5, 2), "vlan_vid": (6, 2),
    "vlan_pcp": (7, 1), "ip_dscp": (8, 1),
    "ip_proto": (10, 1), "ipv4_src": (11, 4), "ipv4_dst": (12, 4), "tcp_src": (13, 2), "tcp_dst": (14, 2),
    "udp_src": (15, 2), "udp_dst": (16, 2), "arp_op": (21, 2), "arp_spa": (22, 4), "arp_tpa": (23, 4),
    "arp_sha": (24, 6), "arp_tha": (25, 6), "ipv6_src": (26, 16), "ipv6_dst": (27, 16), "icmpv6_type": (29, 1),
    "mpls_label": (34, 4), "mpls_tc": (35, 1), "mpls_bos": (36, 1),
}
OXM_CLASS = 0x8000
HEADER = struct.Struct("!BBHI")  # ofp_header: version, type, length, xid
FLOW_MOD_HEAD = struct.Struct("!BBHIQQBBHHHIIIH2x")
MATCH_HEAD = struct.Struct("!HH")
PACKET_OUT_HEAD = struct.Struct("!BBHIIIH6x")  # header, buffer_id, in_port, actions_len
PACKET_IN_HEAD = struct.Struct("!BBHIIHBBQ")


@dataclass(slots=True)
class PackedMessage:
    """Pre-packed bytes that a ``SwitchConnection`` sends like an os-ken message (xid patched in)."""

    buf: bytearray
    name: str = "OFPFlowMod"  # what an error report calls it

    def set_xid(self, xid: int) -> None:
        struct.pack_into("!I", self.buf, 4, xid)

    def serialize(self) -> None:
        pass  # packed already


WIDTH_FORMAT = {1: "B", 2: "H", 4: "I"}


@dataclass(frozen=True)
class MatchPlan:
    """How an unmasked match of given fields packs: ``template`` holds the match header and each field's OXM
    header, with a slot after each for its value, in OXM order; ``order`` takes the values into it."""

    order: Callable[[tuple[int, ...]], tuple[int, ...]]
    body: struct.Struct
    template: list[int]
    pad: bytes

    def pack(self, values: tuple[int, ...]) -> bytes:
        filled = self.template.copy()
        filled[3::2] = self.order(values)
        return self.body.pack(*filled) + self.pad


@lru_cache(maxsize=1024)
def _match_plan(names: tuple[str, ...]) -> MatchPlan | None:
    """The plan for an unmasked match of these fields; None when a field has no code or no struct width here."""
    if any(OXM_FIELDS.get(name, (0, 0))[1] not in WIDTH_FORMAT for name in names):
        return None
    codes = [OXM_FIELDS[name] for name in names]
    order = tuple(sorted(range(len(names)), key=lambda i: codes[i][0]))
    layout = "".join("I" + WIDTH_FORMAT[codes[i][1]] for i in order)
    length = MATCH_HEAD.size + sum(4 + codes[i][1] for i in order)
    template = [ofp.OFPMT_OXM, length]
    for i in order:
        template += (OXM_CLASS << 16 | codes[i][0] << 9 | codes[i][1], 0)
    take: Callable[[tuple[int, ...]], tuple[int, ...]] = (
        itemgetter(*order) if len(order) > 1 else lambda values: values)
    return MatchPlan(take, struct.Struct("!HH" + layout), template, bytes(-length % 8))


def pack_match(fields: Match) -> bytes | None:
    """An ``ofp_match`` (OXM, padded to 8 bytes), or None if a field has no OXM code here.

    >>> pack_match((("in_port", 3, None),)).hex()
    '0001000c800000040000000300000000'
    >>> fields = (("ipv4_dst", 167772162, None), ("eth_type", 2048, None))
    >>> pack_match(fields) == _pack_match_slowly(fields)  # one struct call, fields in OXM order
    True
    """
    if fields:
        names, values, masks = zip(*fields, strict=True)
        if masks.count(None) == len(masks):
            plan = _match_plan(names)
            if plan is not None:  # the common case (every reactive flow's match): one struct call
                return plan.pack(values)
    return _pack_match_slowly(fields)


def _pack_match_slowly(fields: Match) -> bytes | None:
    body = bytearray()
    for name, value, mask in sorted(fields, key=lambda f: OXM_FIELDS.get(f[0], (999, 0))[0]):
        code = OXM_FIELDS.get(name)
        if code is None:
            return None
        field, width = code
        if mask is None:
            body += struct.pack("!HBB", OXM_CLASS, field << 1, width) + value.to_bytes(width, "big")
        else:
            body += struct.pack("!HBB", OXM_CLASS, field << 1 | 1, 2 * width)
            body += (value & mask).to_bytes(width, "big") + mask.to_bytes(width, "big")
    length = MATCH_HEAD.size + len(body)
    return MATCH_HEAD.pack(ofp.OFPMT_OXM, length) + bytes(body) + bytes(-length % 8)


@lru_cache(maxsize=4096)
def _instructions(actions: tuple[Action, ...], goto: int | None) -> bytes:
    buf = bytearray()
    for instruction in instructions(actions, goto):
        instruction.serialize(buf, len(buf))
    return bytes(buf)


def _pack_flow_mod(entry: FlowEntry, command: int, cookie: int, instructions: bytes = b"") -> PackedMessage | None:
    """A flow-mod on ``entry``'s table, priority and match, or None when its match needs os-ken (Nicira fields)."""
    packed_match = pack_match(entry.match)
    if packed_match is None:
        return None
    length = FLOW_MOD_HEAD.size + len(packed_match) + len(instructions)
    # An entry that may expire asks the switch to say when it does (OFPFF_SEND_FLOW_REM).
    expires = command == ofp.OFPFC_ADD and entry.idle_timeout > 0
    idle, flags = (entry.idle_timeout, ofp.OFPFF_SEND_FLOW_REM) if expires else (0, 0)
    head = FLOW_MOD_HEAD.pack(ofp.OFP_VERSION, ofp.OFPT_FLOW_MOD, length, 0, cookie, 0, entry.table, command, idle, 0,
                              entry.priority, ofp.OFP_NO_BUFFER, ofp.OFPP_ANY, ofp.OFPG_ANY, flags)
    return PackedMessage(bytearray(head + packed_match + instructions))


def pack_flow_add(entry: FlowEntry) -> PackedMessage | None:
    """An OFPFC_ADD flow-mod for ``entry``, or None when its match needs os-ken (Nicira fields)."""
    return _pack_flow_mod(entry, ofp.OFPFC_ADD, wire_cookie(entry), _instructions(entry.actions, entry.goto))


def pack_flow_delete(entry: FlowEntry) -> PackedMessage | None:
    """``ofbind.flow_delete``'s strict delete, hand-packed, or None when the match needs os-ken: a chain's
    removal sends one per entry it leaves behind."""
    return _pack_flow_mod(entry, ofp.OFPFC_DELETE_STRICT, 0)


@lru_cache(maxsize=4096)
def _action_list(actions: tuple[Action, ...]) -> bytes:
    buf = bytearray()
    for action in actions:
        bind_action(action).serialize(buf, len(buf))
    return bytes(buf)


def packet_out_packed(in_port: int, actions: tuple[Action, ...], data: bytes) -> PackedMessage:
    """``ofbind.packet_out_actions``'s message, hand-packed: the same bytes, faster (a reactive
    flow's first packet goes back with one of these)."""
    return _packet_out(in_port, _action_list(actions), data)


def _packet_out(in_port: int, packed: bytes, data: bytes) -> PackedMessage:
    """A packet-out of ``data`` from ``in_port`` with the packed action list ``packed``."""
    length = PACKET_OUT_HEAD.size + len(packed) + len(data)
    head = PACKET_OUT_HEAD.pack(ofp.OFP_VERSION, ofp.OFPT_PACKET_OUT, length, 0, ofp.OFP_NO_BUFFER, in_port,
                                len(packed))
    return PackedMessage(bytearray(head + packed + data), "OFPPacketOut")


@lru_cache(maxsize=8192)
def _step_bytes(step: FlowStep) -> tuple[bytes, bytes]:
    """A reactive step's instructions and its actions alone (for the first packet's packet-out), looked up by
    the step itself (compared by identity) rather than by hashing its actions for every flow."""
    return _instructions(step.actions, None), _action_list(step.actions)


def step_flow_add(entry: FlowEntry, step: FlowStep) -> PackedMessage | None:
    """``pack_flow_add`` for a reactive flow's entry made from ``step`` (``FlowPlan.entries``)."""
    return _pack_flow_mod(entry, ofp.OFPFC_ADD, wire_cookie(entry), _step_bytes(step)[0])


def step_packet_out(in_port: int, step: FlowStep, data: bytes) -> PackedMessage:
    """``packet_out_packed`` with ``step``'s actions: a reactive flow's first packet, sent on along its entry."""
    return _packet_out(in_port, _step_bytes(step)[1], data)


SHARED_KEPT = 1 << 16  # shared entries' packed adds kept at most (one per host of the fabric)
_shared_adds: dict[int, tuple[FlowEntry, bytes]] = {}  # by the entry's id; the entry kept so the id stays its own


def flow_add_packed(entry: FlowEntry) -> Any:
    """``ofbind.flow_add``'s message, hand-packed where the match allows: the same bytes, faster.

    An ARP answer is the very same entry at every edge switch (``arp_answers``): it is packed once and copied for
    each switch after that.

    >>> from srfabric.model.fabric import Host
    >>> from srfabric.rules.arp_answers import answer_entry
    >>> answer = answer_entry(Host("h2", 0x02_00_00_00_00_02, "10.0.0.2", 1, 2))
    >>> first, again = flow_add_packed(answer), flow_add_packed(answer)
    >>> first.buf == again.buf and first.buf is not again.buf
    True
    """
    if entry.kind is not Kind.ANSWER:
        return pack_flow_add(entry) or flow_add(entry)
    kept = _shared_adds.get(id(entry))
    if kept is None or kept[0] is not entry:
        packed = pack_flow_add(entry)
        if packed is None:
            return flow_add(entry)
        if len(_shared_adds) >= SHARED_KEPT:
            _shared_adds.clear()
        kept = _shared_adds[id(entry)] = (entry, bytes(packed.buf))
    return PackedMessage(bytearray(kept[1]))


def flow_delete_packed(entry: FlowEntry) -> Any:
    """``ofbind.flow_delete``'s message, hand-packed where the match allows: the same bytes, faster."""
    return pack_flow_delete(entry) or flow_delete(entry)


@dataclass(frozen=True)
class PacketIn:
    """The parts of an OFPT_PACKET_IN the controller uses."""

    in_port: int
    data: bytes
    table_id: int
    reason: int
    cookie: int
    msg_len: int
    received_ns: int = 0


def parse_packet_in(raw: bytes, received_ns: int = 0) -> PacketIn:
    """Read a packet-in's in_port and frame without building os-ken objects.

    >>> raw = bytes.fromhex("040a002d00000001" "ffffffff000301010000000000000007"
    ...                     "0001000c800000040000000500000000" "0000") + b"abc"
    >>> parse_packet_in(raw)
    PacketIn(in_port=5, data=b'abc', table_id=1, reason=1, cookie=7, msg_len=45, received_ns=0)
    """
    if len(raw) < PACKET_IN_HEAD.size + MATCH_HEAD.size:
        raise DecodingError("packet_in", f"{len(raw)} bytes is shorter than its fixed part")
    _, _, length, _, _, _, reason, table_id, cookie = PACKET_IN_HEAD.unpack_from(raw)
    match_type, match_len = MATCH_HEAD.unpack_from(raw, PACKET_IN_HEAD.size)
    end = PACKET_IN_HEAD.size + match_len
    if match_type != ofp.OFPMT_OXM or match_len < MATCH_HEAD.size or end > len(raw):
        raise DecodingError("packet_in", f"match of type {match_type} and length {match_len} does not fit")
    in_port = None
    offset = PACKET_IN_HEAD.size + MATCH_HEAD.size
    while offset + 4 <= end:
        oxm_class, field_mask, width = struct.unpack_from("!HBB", raw, offset)
        if (oxm_class, field_mask >> 1, width) == (OXM_CLASS, 0, 4):
            (in_port,) = struct.unpack_from("!I", raw, offset + 4)
        offset += 4 + width
    if in_port is None:
        raise DecodingError("packet_in", "no in_port in its match")
    data_at = PACKET_IN_HEAD.size + match_len + (-match_len % 8) + 2  # the match's padding, then 2 pad bytes
    return PacketIn(in_port, bytes(raw[data_at:length]), table_id, reason, cookie, length, received_ns)
