"""Flow entries as ``ovs-ofctl add-flow`` text: for benchmarks that program a bridge without a
controller, and for people who want to read what the controller would install.

Examples
--------
>>> from srfabric.rules.codec_rules import NibbleRules
>>> step_match, actions = NibbleRules().decode_steps()[2]
>>> flow_text(FlowEntry(2, 100, step_match, actions))
'table=2,priority=100,eth_src=30:00:00:00:00:00/f0:00:00:00:00:00,actions=load:0x2->eth_src[44..47],output:eth_src[8..11]'
"""

from __future__ import annotations

from typing import assert_never

from srfabric.rules.entries import (
    IPV4_FIELDS,
    IPV6_FIELDS,
    MAC_FIELDS,
    Action,
    FlowEntry,
    Group,
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
    readable_value,
)

# OXM names ovs-ofctl does not accept in matches, with the names it uses.
OFCTL_NAMES = {"ipv4_src": "ip_src", "ipv4_dst": "ip_dst", "eth_type": "dl_type", "ip_proto": "nw_proto"}


def _value(name: str, value: int) -> str:
    if name in ("eth_type", "vlan_vid", "vlan_tci"):
        return hex(value)
    return str(readable_value(name, value))


def match_text(entry: FlowEntry) -> str:
    parts = []
    for name, value, mask in entry.match:
        text = f"{OFCTL_NAMES.get(name, name)}={_value(name, value)}"
        if mask is not None:
            text += f"/{_value(name, mask)}" if name in MAC_FIELDS | IPV4_FIELDS | IPV6_FIELDS else f"/{hex(mask)}"
        parts.append(text)
    return ",".join(parts)


def action_text(action: Action) -> str:
    match action:
        case Output(port):
            return f"output:{port}"
        case OutputBits(field, ofs, nbits):
            return f"output:{field}[{ofs}..{ofs + nbits - 1}]"
        case LoadBits(field, ofs, nbits, value):
            return f"load:{hex(value)}->{field}[{ofs}..{ofs + nbits - 1}]"
        case MoveBits(src, src_ofs, dst, dst_ofs, nbits):
            return f"move:{src}[{src_ofs}..{src_ofs + nbits - 1}]->{dst}[{dst_ofs}..{dst_ofs + nbits - 1}]"
        case SetField(field, value):
            return f"set_field:{_value(field, value)}->{field}"
        case PushVlan(ethertype):
            return f"push_vlan:{hex(ethertype)}"
        case PopVlan():
            return "pop_vlan"
        case PushMpls(ethertype):
            return f"push_mpls:{hex(ethertype)}"
        case PopMpls(ethertype):
            return f"pop_mpls:{hex(ethertype)}"
        case SetMplsTtl(ttl):
            return f"set_mpls_ttl:{ttl}"
        case ToController():
            return "controller"
        case SetQueue(queue_id):
            return f"set_queue:{queue_id}"
        case Group(group_id):
            return f"group:{group_id}"
        case Meter(meter_id):  # ovs-ofctl writes OpenFlow 1.3's meter instruction as an action
            return f"meter:{meter_id}"
        case _:
            assert_never(action)


def flow_text(entry: FlowEntry) -> str:
    """One ``add-flow`` line; no actions and no goto is a drop, as in OpenFlow."""
    actions = [action_text(a) for a in entry.actions]
    if entry.goto is not None:
        actions.append(f"goto_table:{entry.goto}")
    head = f"table={entry.table},priority={entry.priority}"
    if entry.cookie:
        head += f",cookie={hex(entry.cookie)}"
    matched = match_text(entry)
    return f"{head}{',' + matched if matched else ''},actions={','.join(actions) or 'drop'}"
