"""Bind flow entries (``srfabric.rules.entries``) to OpenFlow 1.3 messages built by os-ken.

Nothing here opens a socket: the functions take a datapath-like object (the
protocol modules and nothing else) and return message objects.
"""

from __future__ import annotations

from typing import Any

from os_ken.ofproto import nicira_ext
from os_ken.ofproto import ofproto_v1_3 as ofp
from os_ken.ofproto import ofproto_v1_3_parser as parser

from srfabric.rules.entries import (
    Action,
    FlowEntry,
    LoadBits,
    Match,
    MoveBits,
    Output,
    OutputBits,
    PopMpls,
    PopVlan,
    PushMpls,
    PushVlan,
    SetField,
    SetMplsTtl,
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
    if isinstance(action, Output):
        return parser.OFPActionOutput(action.port, 0)
    if isinstance(action, ToController):
        return parser.OFPActionOutput(ofp.OFPP_CONTROLLER, ofp.OFPCML_NO_BUFFER)
    if isinstance(action, OutputBits):
        span = nicira_ext.ofs_nbits(action.ofs, action.ofs + action.nbits - 1)
        return parser.NXActionOutputReg(span, action.field, 0)
    if isinstance(action, LoadBits):
        span = nicira_ext.ofs_nbits(action.ofs, action.ofs + action.nbits - 1)
        return parser.NXActionRegLoad(span, action.field, action.value)
    if isinstance(action, MoveBits):
        return parser.NXActionRegMove(action.src, action.dst, action.nbits, action.src_ofs, action.dst_ofs)
    if isinstance(action, SetField):
        return parser.OFPActionSetField(**{action.field: readable_value(action.field, action.value)})
    if isinstance(action, PushVlan):
        return parser.OFPActionPushVlan(action.ethertype)
    if isinstance(action, PopVlan):
        return parser.OFPActionPopVlan()
    if isinstance(action, PushMpls):
        return parser.OFPActionPushMpls(action.ethertype)
    if isinstance(action, PopMpls):
        return parser.OFPActionPopMpls(action.ethertype)
    if isinstance(action, SetMplsTtl):
        return parser.OFPActionSetMplsTtl(action.ttl)
    raise TypeError(f"no OpenFlow binding for {action!r}")


def flow_add(entry: FlowEntry) -> Any:
    instructions = []
    if entry.actions:
        actions = [bind_action(a) for a in entry.actions]
        instructions.append(parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS, actions))
    if entry.goto is not None:
        instructions.append(parser.OFPInstructionGotoTable(entry.goto))
    return parser.OFPFlowMod(
        PROTOCOL, cookie=entry.cookie, table_id=entry.table, command=ofp.OFPFC_ADD,
        priority=entry.priority, buffer_id=ofp.OFP_NO_BUFFER, out_port=ofp.OFPP_ANY,
        out_group=ofp.OFPG_ANY, match=bind_match(entry.match),
        instructions=instructions,
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
