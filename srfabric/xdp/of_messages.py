"""The switch side of OpenFlow 1.3 for the XDP agent: controller messages read back into rule objects,
replies packed with ``struct``. Pure: bytes in, bytes or ``FlowEntry`` out.

os-ken parses flow-mods (its packet-out parser asserts on a field it filled
itself, so packet-outs are read here), and has no serializers for the replies a
switch sends; those are packed from the OpenFlow 1.3.5 layouts.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from os_ken.ofproto import ofproto_v1_3 as ofp
from os_ken.ofproto import ofproto_v1_3_parser as parser

from srfabric.errors import DecodingError
from srfabric.rules.entries import (
    Action,
    Bucket,
    FlowEntry,
    GroupEntry,
    match,
)
from srfabric.rules.openflow.ofbind import DIGEST_MASK, PROTOCOL, wire_cookie
from srfabric.rules.openflow.readback import GROUP_TYPE_NAMES, UnreadableAction, action_from_ofp, match_from_ofp
from srfabric.rules.openflow.wire import HEADER, pack_match

FEATURES = struct.Struct("!QIBB2xII")
MULTIPART = struct.Struct("!HH4x")
PORT = struct.Struct("!I4x6s2x16sIIIIIIII")
FLOW_STATS = struct.Struct("!HBxIIHHHH4xQQQ")
PACKET_OUT = struct.Struct("!IIH6x")
GROUP_MOD = struct.Struct("!HBxI")
BUCKET = struct.Struct("!HHII4x")


def header(msg_type: int, xid: int, body: bytes = b"") -> bytes:
    return HEADER.pack(ofp.OFP_VERSION, msg_type, HEADER.size + len(body), xid) + body


class UnsupportedInstruction(DecodingError):
    """A well-formed flow-mod with an instruction this switch does not have (OpenFlow's BAD_INSTRUCTION)."""


@dataclass(frozen=True)
class FlowMod:
    command: int
    table: int
    entry: FlowEntry
    complete: bool  # False when an action had no rule object (the entry then only counts as present)


def parse_flow_mod(raw: bytes) -> FlowMod:
    """A flow-mod as the rule object the controller built it from."""
    _, msg_type, length, xid = HEADER.unpack_from(raw)
    try:
        msg = parser.OFPFlowMod.parser(PROTOCOL, ofp.OFP_VERSION, msg_type, length, xid, raw)
    except Exception as error:  # noqa: BLE001 - os-ken raises plain Exception (and its own) for malformed ones
        raise DecodingError("flow_mod", f"cannot be parsed: {error}") from None
    actions: list[Action] = []
    goto = None
    complete = True
    for instruction in msg.instructions:
        if isinstance(instruction, parser.OFPInstructionMeter):
            raise UnsupportedInstruction("flow_mod", f"meter {instruction.meter_id}: this switch has no OpenFlow "
                                                     "meters; it polices streams with its own table (psfp follow)")
        if isinstance(instruction, parser.OFPInstructionGotoTable):
            goto = instruction.table_id
        elif isinstance(instruction, parser.OFPInstructionActions):
            for action in instruction.actions:
                try:
                    actions.append(action_from_ofp(action))
                except UnreadableAction:
                    complete = False
    # The cookie's digest bits only say what was sent; the entry keeps the controller's own cookie.
    entry = FlowEntry(msg.table_id, msg.priority, match_from_ofp(msg.match), tuple(actions), goto,
                      msg.cookie & ~DIGEST_MASK, msg.idle_timeout)
    return FlowMod(msg.command, msg.table_id, entry, complete)


def _actions(raw: bytes, offset: int, end: int, what: str) -> list[Action | None]:
    """The actions in ``raw[offset:end]``; anything malformed is a ``DecodingError`` (os-ken's parser raises
    whatever it meets: assertion, value, struct or bare errors)."""
    actions: list[Action | None] = []
    while offset < end:
        if offset + 8 > end:
            raise DecodingError(what, f"an action at byte {offset} runs past the end of its list")
        length = int.from_bytes(raw[offset + 2:offset + 4], "big")
        if length < 8 or length % 8 or offset + length > end:
            raise DecodingError(what, f"an action of length {length} at byte {offset} is not a multiple of 8 "
                                      "that fits its list")
        try:
            action = parser.OFPAction.parser(bytes(raw[:offset + length]), offset)
        except Exception as error:  # noqa: BLE001 - os-ken raises plain Exception for some malformed payloads
            raise DecodingError(what, f"the action at byte {offset} cannot be parsed: {error}") from None
        try:
            actions.append(action_from_ofp(action))
        except UnreadableAction:
            actions.append(None)
        offset += length
    return actions


@dataclass(frozen=True)
class GroupMod:
    command: int
    group: GroupEntry  # without buckets for a delete
    complete: bool  # False when an action had no rule object or the type is not one srfabric sends


def parse_group_mod(raw: bytes) -> GroupMod:
    """A group-mod as the rule object the controller built it from.

    >>> from srfabric.rules.entries import Bucket, GroupEntry, Output
    >>> from srfabric.rules.openflow.ofbind import group_mod
    >>> msg = group_mod(GroupEntry(5, "indirect", (Bucket((Output(2),)),))); msg.set_xid(1); msg.serialize()
    >>> parse_group_mod(bytes(msg.buf)).group
    GroupEntry(group_id=5, type='indirect', buckets=(Bucket(actions=(Output(port=2),), weight=0),))
    """
    length = HEADER.unpack_from(raw)[2] if len(raw) >= HEADER.size else 0
    if len(raw) < HEADER.size + GROUP_MOD.size or length > len(raw):
        raise DecodingError("group_mod", f"{len(raw)} bytes cannot hold a group-mod of {length}")
    command, kind, group_id = GROUP_MOD.unpack_from(raw, HEADER.size)
    offset = HEADER.size + GROUP_MOD.size
    buckets: list[Bucket] = []
    complete = kind in GROUP_TYPE_NAMES
    while offset < length:
        if offset + BUCKET.size > length:
            raise DecodingError("group_mod", f"a bucket at byte {offset} runs past the end")
        size, weight, _, _ = BUCKET.unpack_from(raw, offset)
        if size < BUCKET.size or offset + size > length:
            raise DecodingError("group_mod", f"a bucket of length {size} at byte {offset} does not fit")
        actions = _actions(raw, offset + BUCKET.size, offset + size, "group_mod")
        complete = complete and None not in actions
        buckets.append(Bucket(tuple(a for a in actions if a is not None), weight))
        offset += size
    return GroupMod(command, GroupEntry(group_id, GROUP_TYPE_NAMES.get(kind, "unknown"), tuple(buckets)), complete)


@dataclass(frozen=True)
class PacketOut:
    in_port: int
    actions: tuple[Action | None, ...]
    data: bytes


def parse_packet_out(raw: bytes) -> PacketOut:
    """A packet-out's actions and frame.

    >>> from srfabric.rules.openflow.ofbind import packet_out
    >>> msg = packet_out(3, b"frame"); msg.set_xid(1); msg.serialize()
    >>> parse_packet_out(bytes(msg.buf))
    PacketOut(in_port=4294967293, actions=(Output(port=3),), data=b'frame')
    """
    if len(raw) < HEADER.size + PACKET_OUT.size:
        raise DecodingError("packet_out", f"{len(raw)} bytes is shorter than its fixed part")
    length = HEADER.unpack_from(raw)[2]
    _, in_port, actions_len = PACKET_OUT.unpack_from(raw, HEADER.size)
    offset = HEADER.size + PACKET_OUT.size
    end = offset + actions_len
    if end > len(raw):
        raise DecodingError("packet_out", f"actions of {actions_len} bytes run past the end")
    return PacketOut(in_port, tuple(_actions(raw, offset, end, "packet_out")), bytes(raw[end:length]))


@dataclass(frozen=True)
class PortDesc:
    number: int
    name: str
    mac: int


def features_reply(xid: int, dpid: int, tables: int) -> bytes:
    return header(ofp.OFPT_FEATURES_REPLY, xid, FEATURES.pack(dpid, 0, tables, 0, ofp.OFPC_FLOW_STATS, 0))


def port_desc_reply(xid: int, ports: list[PortDesc]) -> bytes:
    body = b"".join(
        PORT.pack(p.number, p.mac.to_bytes(6, "big"), p.name.encode()[:15], 0, ofp.OFPPS_LIVE, 0, 0, 0, 0,
                  10_000_000, 10_000_000)
        for p in ports
    )
    return header(ofp.OFPT_MULTIPART_REPLY, xid, MULTIPART.pack(ofp.OFPMP_PORT_DESC, 0) + body)


def port_status(port: PortDesc, down: bool) -> bytes:
    """OFPT_PORT_STATUS (modify): the port's carrier went down (OFPPS_LINK_DOWN) or came back (live)."""
    state = ofp.OFPPS_LINK_DOWN if down else ofp.OFPPS_LIVE
    desc = PORT.pack(port.number, port.mac.to_bytes(6, "big"), port.name.encode()[:15], 0, state, 0, 0, 0, 0,
                     10_000_000, 10_000_000)
    return header(ofp.OFPT_PORT_STATUS, 0, struct.pack("!B7x", ofp.OFPPR_MODIFY) + desc)


def flow_stats_reply(xid: int, entries: list[tuple[FlowEntry, int, int]]) -> bytes:
    """One reply with every entry and its (packets, bytes); matches that have no OXM form go out empty.

    Cookies go back as the controller sends them (``wire_cookie``), digest included.
    """
    body = b""
    for entry, packets, octets in entries:
        packed = pack_match(entry.match) or pack_match(())
        assert packed is not None
        length = FLOW_STATS.size + len(packed)
        body += FLOW_STATS.pack(length, entry.table, 0, 0, entry.priority, 0, 0, 0, wire_cookie(entry), packets,
                                octets) + packed
    return header(ofp.OFPT_MULTIPART_REPLY, xid, MULTIPART.pack(ofp.OFPMP_FLOW, 0) + body)


def packet_in(in_port: int, table: int, cookie: int, data: bytes) -> bytes:
    packed = pack_match(match(in_port=in_port))
    assert packed is not None
    body = struct.pack("!IHBBQ", ofp.OFP_NO_BUFFER, len(data), ofp.OFPR_ACTION, table, cookie) + packed
    return header(ofp.OFPT_PACKET_IN, 0, body + bytes(2) + data)


def error(xid: int, kind: int, code: int, offending: bytes) -> bytes:
    return header(ofp.OFPT_ERROR, xid, struct.pack("!HH", kind, code) + offending[:64])
