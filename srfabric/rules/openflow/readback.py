"""os-ken's parsed OpenFlow objects read back into srfabric's rule objects.

The XDP agent reads the flow-mods it receives this way; the controller reads a
switch's flow table and groups this way when the switch connects, to fix only
what differs from what it should hold.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from os_ken.ofproto import ofproto_v1_3 as ofp
from os_ken.ofproto import ofproto_v1_3_parser as parser

from srfabric.codecs.macaddr import mac_from_str
from srfabric.errors import SrfabricError
from srfabric.rules.entries import (
    IPV4_FIELDS,
    IPV6_FIELDS,
    MAC_FIELDS,
    Action,
    Bucket,
    Group,
    GroupEntry,
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
    SetQueue,
    ToController,
    match,
)

NXM_NAMES = {"eth_type_nxm": "eth_type", "in_port_nxm": "in_port"}
GROUP_TYPE_NAMES = {ofp.OFPGT_ALL: "all", ofp.OFPGT_SELECT: "select", ofp.OFPGT_INDIRECT: "indirect"}


def field_value(name: str, value: Any) -> int:
    """A field value as ``FlowEntry`` holds it: MACs and IPv4 addresses as integers.

    >>> field_value("eth_src", "30:00:00:00:03:24"), field_value("ipv4_dst", "10.0.0.2"), field_value("udp_dst", 53)
    (52776558134052, 167772162, 53)
    """
    if name in MAC_FIELDS and isinstance(value, str):
        return mac_from_str(value, name)
    if name in IPV4_FIELDS and isinstance(value, str):
        return int(ipaddress.IPv4Address(value))
    if name in IPV6_FIELDS and isinstance(value, str):
        return int(ipaddress.IPv6Address(value))
    return int(value)


def match_from_ofp(ofp_match: Any) -> Match:
    """Our canonical match for an os-ken ``OFPMatch`` (Nicira spellings of OXM fields folded in)."""
    fields: dict[str, int | tuple[int, int]] = {}
    for name, value in ofp_match._fields2:
        plain = NXM_NAMES.get(name, name)
        if isinstance(value, tuple):
            fields[plain] = (field_value(plain, value[0]), field_value(plain, value[1]))
        else:
            fields[plain] = field_value(plain, value)
    return match(**fields)


class UnreadableAction(SrfabricError):
    """An action that has no rule object here (none that srfabric sends)."""

    def __init__(self, action: Any) -> None:
        super().__init__("action", f"{type(action).__name__} has no rule object to read it into")


def action_from_ofp(action: Any) -> Action:
    """Our rule object for an os-ken action; ``UnreadableAction`` names one that has none.

    >>> action_from_ofp(parser.OFPActionOutput(3))
    Output(port=3)
    >>> action_from_ofp(parser.NXActionRegLoad((44 << 6) | 3, "eth_src", 1))
    LoadBits(field='eth_src', ofs=44, nbits=4, value=1)
    >>> action_from_ofp(parser.OFPActionCopyTtlIn())
    Traceback (most recent call last):
    srfabric.rules.openflow.readback.UnreadableAction: action: OFPActionCopyTtlIn has no rule object to read it into
    """
    if isinstance(action, parser.OFPActionOutput):
        return ToController() if action.port == ofp.OFPP_CONTROLLER else Output(action.port)
    if isinstance(action, parser.OFPActionSetField):
        return SetField(action.key, field_value(action.key, action.value))
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
    if isinstance(action, parser.OFPActionGroup):
        return Group(action.group_id)
    if isinstance(action, parser.OFPActionSetQueue):
        return SetQueue(action.queue_id)
    # Nicira's: a bit span is (offset << 6) | (bits - 1), as ``nicira_ext.ofs_nbits`` packs it.
    if isinstance(action, parser.NXActionRegLoad):
        return LoadBits(action.dst, action.ofs_nbits >> 6, (action.ofs_nbits & 0x3F) + 1, action.value)
    if isinstance(action, parser.NXActionOutputReg):
        return OutputBits(action.src, action.ofs_nbits >> 6, (action.ofs_nbits & 0x3F) + 1)
    if isinstance(action, parser.NXActionRegMove):
        return MoveBits(action.src_field, action.src_ofs, action.dst_field, action.dst_ofs, action.n_bits)
    raise UnreadableAction(action)


def group_from_ofp(desc: Any) -> GroupEntry | None:
    """A group as the switch describes it (``OFPGroupDescStats``); None when an action has no rule object."""
    kind = GROUP_TYPE_NAMES.get(desc.type)
    if kind is None:
        return None
    buckets = []
    for bucket in desc.buckets:
        try:
            actions = tuple(action_from_ofp(a) for a in bucket.actions)
        except UnreadableAction:
            return None  # not one srfabric sent: the caller treats it as another's
        buckets.append(Bucket(actions, bucket.weight if kind == "select" else 0))
    return GroupEntry(desc.group_id, kind, tuple(buckets))
