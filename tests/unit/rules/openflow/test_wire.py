"""Hand-packed messages carry the same bytes as os-ken's and parse back the same way."""

from __future__ import annotations

from typing import Any

import pytest
from os_ken.ofproto import ofproto_parser
from os_ken.ofproto import ofproto_v1_3 as ofp

from srfabric.errors import DecodingError
from srfabric.model import Chain, FlowClassifier
from srfabric.model.flow import FiveTuple
from srfabric.model.topo import fat_tree
from srfabric.rules.compile import compile_fabric
from srfabric.rules.entries import FlowEntry
from srfabric.rules.hop_by_hop import compile_hop_by_hop
from srfabric.rules.openflow.ofbind import PROTOCOL, flow_add, flow_delete, packet_out_actions
from srfabric.rules.openflow.wire import (
    pack_flow_add,
    pack_flow_delete,
    packet_out_packed,
    parse_packet_in,
    step_flow_add,
    step_packet_out,
)
from srfabric.rules.reactive import RouteCache, flow_entries


def entries() -> list[FlowEntry]:
    topo = fat_tree(4)
    topo.add_function("v1", "e3")
    fabric = topo.to_fabric()
    chain = Chain("c", FlowClassifier(protocol="tcp", destination_port_range=(80, 90)), ("v1",), "h1", "h16", 5)
    found = []
    for tables in (compile_fabric(fabric, [chain], "mac-nibble"), compile_fabric(fabric, [chain], "mac-vlan-mpls"),
                   compile_hop_by_hop(fabric, [chain])):
        found += [e for table in tables.values() for e in table]
    h1, h16 = fabric.hosts["h1"], fabric.hosts["h16"]
    for proto in (1, 6, 17):
        flow = FiveTuple(h1.ip, h16.ip, proto, 1234, 80)
        for steering in ("source-routing", "hop-by-hop"):
            found += [e for _, e in flow_entries(fabric, flow, (h1.dpid, h1.port), "mac-vlan-mpls", steering)]
            found += [e for _, e in flow_entries(fabric, flow, (h1.dpid, h1.port), "mac-nibble", steering,
                                                 idle_timeout=30)]  # expiring entries: timeout and flag too
    return found


@pytest.mark.parametrize(("packed_by_hand", "by_os_ken"), [(pack_flow_add, flow_add), (pack_flow_delete, flow_delete)],
                         ids=["add", "strict-delete"])
def test_packed_flow_mods_equal_os_kens_bytes(packed_by_hand: Any, by_os_ken: Any) -> None:
    packed = 0
    for xid, entry in enumerate(entries(), start=1):
        fast = packed_by_hand(entry)
        if fast is None:
            assert any(name in ("mpls_ttl", "ipv6_src", "ipv6_dst") for name, _, _ in entry.match), entry
            continue
        reference = by_os_ken(entry)
        reference.set_xid(xid)
        reference.serialize()
        fast.set_xid(xid)
        assert bytes(fast.buf) == bytes(reference.buf), entry
        packed += 1
    assert packed > 100


def test_packed_packet_outs_equal_os_kens_bytes() -> None:
    frame = bytes(range(60))
    ingress = [entry for entry in entries() if entry.actions]
    assert ingress
    for xid, entry in enumerate(ingress, start=1):
        reference = packet_out_actions(3, entry.actions, frame)
        reference.set_xid(xid)
        reference.serialize()
        fast = packet_out_packed(3, entry.actions, frame)
        fast.set_xid(xid)
        assert bytes(fast.buf) == bytes(reference.buf), entry


def _packet_in(in_port: int, data: bytes, extra_oxm: bytes = b"") -> bytes:
    oxm = bytes.fromhex("80000004") + in_port.to_bytes(4, "big") + extra_oxm
    match_len = 4 + len(oxm)
    match = (1).to_bytes(2, "big") + match_len.to_bytes(2, "big") + oxm + bytes(-match_len % 8)
    body = bytes.fromhex("ffffffff") + len(data).to_bytes(2, "big") + bytes([1, 2]) + (9).to_bytes(8, "big")
    body += match + bytes(2) + data
    return bytes([4, ofp.OFPT_PACKET_IN]) + (8 + len(body)).to_bytes(2, "big") + (77).to_bytes(4, "big") + body


@pytest.mark.parametrize("extra", [b"", bytes.fromhex("8000080600000000000a")])
def test_packet_in_parses_like_os_ken(extra: bytes) -> None:
    raw = _packet_in(7, bytes(range(60)), extra)
    reference = ofproto_parser.msg(PROTOCOL, 4, ofp.OFPT_PACKET_IN, len(raw), 77, raw)
    fast = parse_packet_in(raw)
    assert (fast.in_port, fast.data, fast.table_id, fast.reason, fast.cookie) == (
        reference.match["in_port"], bytes(reference.data), reference.table_id, reference.reason, reference.cookie)


@pytest.mark.parametrize("raw", [b"\x04\x0a\x00\x08\x00\x00\x00\x01", _packet_in(3, b"x")[:30],
                                 _packet_in(3, b"x").replace(bytes.fromhex("80000004"), bytes.fromhex("80000204"))])
def test_bad_packet_ins_are_refused_by_name(raw: bytes) -> None:
    with pytest.raises(DecodingError, match="packet_in"):
        parse_packet_in(raw)


def test_messages_packed_from_a_plans_steps_equal_os_kens_bytes() -> None:
    fabric = fat_tree(4).to_fabric()
    h1, h16 = fabric.hosts["h1"], fabric.hosts["h16"]
    routes = RouteCache()
    frame = bytes(range(60))
    checked = 0
    for codec, steering in (("mac-nibble", "source-routing"), ("mac-vlan-mpls", "source-routing"),
                            ("mac-nibble", "hop-by-hop")):
        plan = routes.plan(fabric, FiveTuple(h1.ip, h16.ip, 17, 1, 2), (h1.dpid, h1.port), codec, steering)
        for proto in (1, 6, 17):
            flow = FiveTuple(h1.ip, h16.ip, proto, 1234, 80)
            for step, (_, entry) in zip(plan.steps, plan.entries(flow, 30), strict=True):
                for fast, reference in ((step_flow_add(entry, step), flow_add(entry)),
                                        (step_packet_out(3, step, frame), packet_out_actions(3, entry.actions, frame))):
                    assert fast is not None
                    reference.set_xid(7)
                    reference.serialize()
                    fast.set_xid(7)
                    assert bytes(fast.buf) == bytes(reference.buf), entry
                    checked += 1
    assert checked == 2 * 3 * (1 + 1 + 5)
