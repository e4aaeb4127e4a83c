"""Bind flow entries (``srfabric.rules.entries``) to OpenFlow 1.3 messages built by os-ken.

Nothing here opens a socket: the functions take a datapath-like object (the
protocol modules and nothing else) and return message objects.
"""

from __future__ import annotations

from typing import Any, assert_never

from os_ken.ofproto import nicira_ext
from os_ken.ofproto import ofproto_v1_3 as ofp
from os_ken.ofproto import ofproto_v1_3_parser as parser

from srfabric.errors import ModelError
from srfabric.rules.entries import (
    Action,
    FlowEntry,
    Group,
    GroupEntry,
    LoadBits,
    Match,
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
    readable_value,
)


class ProtocolOnly:
    """The part of a datapath that os-ken needs to build and parse messages."""

    ofproto = ofp
    ofproto_parser = parser
    id: int | None = None

    def set_xid(self, msg: Any) -> None:  # os-ken calls this only through Datapath.send_msg
        raise NotImplementedError


PROTOCOL = ProtocolOnly()


NXM_ONLY = {"mpls_ttl"}
NXM_SPELLING = {"eth_type": "eth_type_nxm", "in_port": "in_port_nxm"}


def bind_match(fields: Match) -> Any:
    # os-ken orders match fields by OXM class; a Nicira-only field (class 0x0001) would then
    # precede its OXM prerequisite (class 0x8000) and the switch rejects the match
    # (BAD_PREREQ). Spelling the prerequisites as NXM (class 0x0000) keeps them first.
    rename = NXM_SPELLING if any(name in NXM_ONLY for name, _, _ in fields) else {}
    kwargs: dict[str, Any] = {}
    for field_name, value, mask in fields:
        name = rename.get(field_name, field_name)
        shown = readable_value(field_name, value)
        kwargs[name] = shown if mask is None else (shown, readable_value(field_name, mask))
    return parser.OFPMatch(**kwargs)


def bind_action(action: Action) -> Any:
    """os-ken's object for one action; the type checker proves every kind of ``Action`` is bound."""
    match action:
        case Output(port):
            return parser.OFPActionOutput(port, 0)
        case ToController():
            return parser.OFPActionOutput(ofp.OFPP_CONTROLLER, ofp.OFPCML_NO_BUFFER)
        case OutputBits(field, ofs, nbits):
            return parser.NXActionOutputReg(nicira_ext.ofs_nbits(ofs, ofs + nbits - 1), field, 0)
        case LoadBits(field, ofs, nbits, value):
            return parser.NXActionRegLoad(nicira_ext.ofs_nbits(ofs, ofs + nbits - 1), field, value)
        case MoveBits(src, src_ofs, dst, dst_ofs, nbits):
            return parser.NXActionRegMove(src, dst, nbits, src_ofs, dst_ofs)
        case SetField(field, value):
            return parser.OFPActionSetField(**{field: readable_value(field, value)})
        case PushVlan(ethertype):
            return parser.OFPActionPushVlan(ethertype)
        case PopVlan():
            return parser.OFPActionPopVlan()
        case PushMpls(ethertype):
            return parser.OFPActionPushMpls(ethertype)
        case PopMpls(ethertype):
            return parser.OFPActionPopMpls(ethertype)
        case SetMplsTtl(ttl):
            return parser.OFPActionSetMplsTtl(ttl)
        case Group(group_id):
            return parser.OFPActionGroup(group_id)
        case SetQueue(queue_id):
            return parser.OFPActionSetQueue(queue_id)
        case Meter(meter_id):  # OpenFlow 1.3 has no meter action, only the instruction (``instructions``)
            raise ModelError("actions", f"meter {meter_id} can only be an entry's first action, never a bucket's "
                                        f"or a packet-out's")
        case _:
            assert_never(action)


DIGEST_SHIFT = 24
DIGEST_MASK = 0xFFFFFFFF << DIGEST_SHIFT


def wire_cookie(entry: FlowEntry) -> int:
    """The cookie sent with ``entry``: its own (kind and owner) plus a digest of the whole entry in bits 24..55.

    A controller that reads a switch's table back (after a restart) tells from the
    cookie alone whether an entry is exactly the one it would send.

    >>> from srfabric.rules.entries import Output, match
    >>> e = FlowEntry(0, 10, match(in_port=1), (Output(2),), cookie=5 << 56)
    >>> wire_cookie(e) >> 56, wire_cookie(e) != wire_cookie(FlowEntry(0, 10, match(in_port=1), (Output(3),), 5 << 56))
    (5, True)
    """
    return (entry.cookie & ~DIGEST_MASK) | (entry.digest << DIGEST_SHIFT)


def instructions(actions: tuple[Action, ...], goto: int | None) -> list[Any]:
    """An entry's instructions: its meter (a leading ``Meter``), its actions applied, then its goto.

    >>> [type(i).__name__ for i in instructions((Meter(7, 1000, 2), Output(2)), 1)]
    ['OFPInstructionMeter', 'OFPInstructionActions', 'OFPInstructionGotoTable']
    """
    out: list[Any] = []
    if actions and isinstance(actions[0], Meter):
        out.append(parser.OFPInstructionMeter(actions[0].meter_id, ofp.OFPIT_METER))
        actions = actions[1:]
    if actions:
        out.append(parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS, [bind_action(a) for a in actions]))
    if goto is not None:
        out.append(parser.OFPInstructionGotoTable(goto))
    return out


def flow_add(entry: FlowEntry) -> Any:
    return parser.OFPFlowMod(
        PROTOCOL, cookie=wire_cookie(entry), table_id=entry.table, command=ofp.OFPFC_ADD,
        idle_timeout=entry.idle_timeout, priority=entry.priority, buffer_id=ofp.OFP_NO_BUFFER, out_port=ofp.OFPP_ANY,
        out_group=ofp.OFPG_ANY, flags=ofp.OFPFF_SEND_FLOW_REM if entry.idle_timeout else 0,
        match=bind_match(entry.match), instructions=instructions(entry.actions, entry.goto),
    )


def flow_delete(entry: FlowEntry) -> Any:
    return parser.OFPFlowMod(
        PROTOCOL, table_id=entry.table, command=ofp.OFPFC_DELETE_STRICT, priority=entry.priority,
        buffer_id=ofp.OFP_NO_BUFFER, out_port=ofp.OFPP_ANY, out_group=ofp.OFPG_ANY,
        match=bind_match(entry.match),
    )


def flow_delete_all() -> Any:
    return parser.OFPFlowMod(
        PROTOCOL, table_id=ofp.OFPTT_ALL, command=ofp.OFPFC_DELETE, buffer_id=ofp.OFP_NO_BUFFER,
        out_port=ofp.OFPP_ANY, out_group=ofp.OFPG_ANY, match=parser.OFPMatch(),
    )


def packet_out(port: int, data: bytes) -> Any:
    return parser.OFPPacketOut(
        PROTOCOL, buffer_id=ofp.OFP_NO_BUFFER, in_port=ofp.OFPP_CONTROLLER,
        actions=[parser.OFPActionOutput(port, 0)], data=data,
    )


def packet_out_actions(in_port: int, actions: tuple[Action, ...], data: bytes) -> Any:
    """Send ``data`` through ``actions`` as if it had arrived on ``in_port`` (a reactive flow's first packet)."""
    return parser.OFPPacketOut(
        PROTOCOL, buffer_id=ofp.OFP_NO_BUFFER, in_port=in_port, actions=[bind_action(a) for a in actions], data=data,
    )


GROUP_TYPES = {"all": ofp.OFPGT_ALL, "select": ofp.OFPGT_SELECT, "indirect": ofp.OFPGT_INDIRECT}


def group_mod(group: GroupEntry, modify: bool = False) -> Any:
    """Add (or replace the buckets of) a group. OpenFlow 1.3 cannot name the fields a select group
    hashes (Open vSwitch hashes the 5-tuple); chains balanced on named fields use ``lb_split`` instead."""
    buckets = [parser.OFPBucket(weight=bucket.weight, watch_port=ofp.OFPP_ANY, watch_group=ofp.OFPG_ANY,
                                actions=[bind_action(a) for a in bucket.actions]) for bucket in group.buckets]
    return parser.OFPGroupMod(PROTOCOL, command=ofp.OFPGC_MODIFY if modify else ofp.OFPGC_ADD,
                              type_=GROUP_TYPES[group.type], group_id=group.group_id, buckets=buckets)


def group_delete(group_id: int) -> Any:
    return parser.OFPGroupMod(PROTOCOL, command=ofp.OFPGC_DELETE, type_=ofp.OFPGT_ALL, group_id=group_id, buckets=[])


METER_FLAGS = ofp.OFPMF_PKTPS | ofp.OFPMF_BURST | ofp.OFPMF_STATS


def meter_mod(meter: Meter, modify: bool = False) -> Any:
    """Add (or change) a meter of ``meter.rate_pps`` frames a second and a bucket of ``meter.burst`` frames, one
    drop band, with counters (``meter_stats`` reads them)."""
    band = parser.OFPMeterBandDrop(rate=meter.rate_pps, burst_size=meter.burst)
    return parser.OFPMeterMod(PROTOCOL, command=ofp.OFPMC_MODIFY if modify else ofp.OFPMC_ADD, flags=METER_FLAGS,
                              meter_id=meter.meter_id, bands=[band])


def meter_delete(meter_id: int) -> Any:
    return parser.OFPMeterMod(PROTOCOL, command=ofp.OFPMC_DELETE, flags=0, meter_id=meter_id, bands=[])
