"""The switch side of OpenFlow 1.3 for the XDP agent: controller messages read back into rule objects,
replies packed with ``struct``. Pure: bytes in, bytes or ``FlowEntry`` out.

os-ken parses flow-mods (its packet-out parser asserts on a field it filled
itself, so packet-outs are read here), and has no serializers for the replies a
switch sends; those are packed from the OpenFlow 1.3.5 layouts.
"""

from __future__ import annotations

import ipaddress
import struct
from dataclasses import dataclass
from typing import Any

from os_ken.ofproto import ofproto_v1_3 as ofp
from os_ken.ofproto import ofproto_v1_3_parser as parser

from srfabric.codecs.macaddr import mac_from_str
from srfabric.errors import DecodingError
from srfabric.rules.entries import (
    IPV4_FIELDS,
    MAC_FIELDS,
    Action,
    FlowEntry,
    Output,
    PopMpls,
    PopVlan,
    PushMpls,
    PushVlan,
    SetField,
    SetMplsTtl,
    ToController,
    match,
)
from srfabric.southbound.ofbind import PROTOCOL
from srfabric.southbound.wire import HEADER, pack_match

FEATURES = struct.Struct("!QIBB2xII")
MULTIPART = struct.Struct("!HH4x")
PORT = struct.Struct("!I4x6s2x16sIIIIIIII")
FLOW_STATS = struct.Struct("!HBxIIHHHH4xQQQ")
PACKET_OUT = struct.Struct("!IIH6x")
NXM_NAMES = {"eth_type_nxm": "eth_type", "in_port_nxm": "in_port"}


def header(msg_type: int, xid: int, body: bytes = b"") -> bytes:
    return HEADER.pack(ofp.OFP_VERSION, msg_type, HEADER.size + len(body), xid) + body


def _value(name: str, value: Any) -> int:
    """A field value as ``FlowEntry`` holds it: MACs and IPv4 addresses as integers.

    >>> _value("eth_src", "30:00:00:00:03:24"), _value("ipv4_dst", "10.0.0.2"), _value("udp_dst", 53)
    (52776558134052, 167772162, 53)
    """
    if name in MAC_FIELDS and isinstance(value, str):
        return mac_from_str(value, name)
    if name in IPV4_FIELDS and isinstance(value, str):
        return int(ipaddress.IPv4Address(value))
    return int(value)


def _action(action: Any) -> Action | None:
    """Our rule object for an os-ken action; None for the Nicira actions of built-in entries."""
    if isinstance(action, parser.OFPActionOutput):
        return ToController() if action.port == ofp.OFPP_CONTROLLER else Output(action.port)
    if isinstance(action, parser.OFPActionSetField):
        return SetField(action.key, _value(action.key, action.value))
    if isinstance(action, parser.OFPActionPushVlan):
        return PushVlan(action.ethertype)
    if isinstance(action, parser.OFPActionPopVlan):
        return PopVlan()
    if isinstance(action, parser.OFPActionPushMpls):
        return PushMpls(action.ethertype)
    if isinstance(action, parser.OFPActionPopMpls):
        return PopMpls(action.ethertype)
    if isinstance(action, parser.OFPActionSetMplsTtl):
        return SetMplsTtl(action.mpls_ttl)
    return None


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
    except (struct.error, KeyError, ValueError, AssertionError) as error:
        raise DecodingError("flow_mod", f"cannot be parsed: {error}") from None
    fields: dict[str, int | tuple[int, int]] = {}
    for name, value in msg.match._fields2:
        plain = NXM_NAMES.get(name, name)
        if isinstance(value, tuple):
            fields[plain] = (_value(plain, value[0]), _value(plain, value[1]))
        else:
            fields[plain] = _value(plain, value)
    actions: list[Action] = []
    goto = None
    complete = True
    for instruction in msg.instructions:
        if isinstance(instruction, parser.OFPInstructionGotoTable):
            goto = instruction.table_id
        elif isinstance(instruction, parser.OFPInstructionActions):
            for action in instruction.actions:
                ours = _action(action)
                complete = complete and ours is not None
                if ours is not None:
                    actions.append(ours)
    entry = FlowEntry(msg.table_id, msg.priority, match(**fields), tuple(actions), goto, msg.cookie)
    return FlowMod(msg.command, msg.table_id, entry, complete)


@dataclass(frozen=True)
class PacketOut:
    in_port: int
    actions: tuple[Action | None, ...]
    data: bytes


def parse_packet_out(raw: bytes) -> PacketOut:
    """A packet-out's actions and frame.

    >>> from srfabric.southbound.ofbind import packet_out
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
    actions = []
    while offset < end:
        action = parser.OFPAction.parser(raw, offset)
        if action.len < 8:
            raise DecodingError("packet_out", f"an action of length {action.len} is shorter than 8")
        actions.append(_action(action))
        offset += action.len
    return PacketOut(in_port, tuple(actions), bytes(raw[end:length]))


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


def flow_stats_reply(xid: int, entries: list[tuple[FlowEntry, int, int]]) -> bytes:
    """One reply with every entry and its (packets, bytes); matches that have no OXM form go out empty."""
    body = b""
    for entry, packets, octets in entries:
        packed = pack_match(entry.match) or pack_match(())
        assert packed is not None
        length = FLOW_STATS.size + len(packed)
        body += FLOW_STATS.pack(length, entry.table, 0, 0, entry.priority, 0, 0, 0, entry.cookie, packets,
                                octets) + packed
    return header(ofp.OFPT_MULTIPART_REPLY, xid, MULTIPART.pack(ofp.OFPMP_FLOW, 0) + body)


def packet_in(in_port: int, table: int, cookie: int, data: bytes) -> bytes:
    packed = pack_match(match(in_port=in_port))
    assert packed is not None
    body = struct.pack("!IHBBQ", ofp.OFP_NO_BUFFER, len(data), ofp.OFPR_ACTION, table, cookie) + packed
    return header(ofp.OFPT_PACKET_IN, 0, body + bytes(2) + data)


def error(xid: int, kind: int, code: int, offending: bytes) -> bytes:
    return header(ofp.OFPT_ERROR, xid, struct.pack("!HH", kind, code) + offending[:64])
