"""The XDP agent reads back exactly the rule objects the controller sent, and packs replies os-ken can parse."""

from __future__ import annotations

from os_ken.ofproto import ofproto_parser
from os_ken.ofproto import ofproto_v1_3 as ofp

from srfabric.model import Chain, FlowClassifier
from srfabric.model.topo import fat_tree
from srfabric.rules.compile import compile_fabric
from srfabric.rules.entries import Kind
from srfabric.rules.openflow.ofbind import PROTOCOL, packet_out_actions, wire_cookie
from srfabric.rules.openflow.wire import flow_add_packed
from srfabric.xdp.of_messages import (
    PortDesc,
    features_reply,
    flow_stats_reply,
    packet_in,
    parse_flow_mod,
    parse_packet_out,
    port_desc_reply,
    port_status,
)
from srfabric.xdp.tables import BUILT_IN


def compiled(codec: str):
    topo = fat_tree(4)
    topo.add_function("v1", "e3")
    chain = Chain("c", FlowClassifier(protocol="udp", destination_port_range=(80, 90)), ("v1",), "h1", "h16", 5)
    return compile_fabric(topo.to_fabric(), [chain], codec)


def test_flow_mods_read_back_as_the_entries_sent() -> None:
    for codec in ("mac-nibble", "mac-vlan-mpls"):
        for entries in compiled(codec).values():
            for entry in entries:
                msg = flow_add_packed(entry)
                msg.set_xid(9)
                msg.serialize()
                back = parse_flow_mod(bytes(msg.buf))
                assert back.command == ofp.OFPFC_ADD
                if back.complete:
                    assert back.entry == entry
                else:  # only the decode steps use Nicira actions; XDP does those itself
                    assert entry.kind in BUILT_IN and back.entry.key == entry.key


def test_packet_out_with_header_actions_reads_back() -> None:
    entry = next(e for e in compiled("mac-vlan-mpls")[0x101] if e.kind == Kind.CHAIN and len(e.actions) > 2)
    msg = packet_out_actions(3, entry.actions, b"\x01" * 60)
    msg.set_xid(4)
    msg.serialize()
    back = parse_packet_out(bytes(msg.buf))
    assert (back.in_port, back.actions, back.data) == (3, entry.actions, b"\x01" * 60)


def test_replies_parse_with_os_ken() -> None:
    def parse(raw: bytes):
        version, msg_type, length, xid = raw[0], raw[1], int.from_bytes(raw[2:4], "big"), 7
        assert length == len(raw)
        return ofproto_parser.msg(PROTOCOL, version, msg_type, length, xid, raw)

    features = parse(features_reply(7, 0x101, 5))
    assert features.datapath_id == 0x101 and features.n_tables == 5
    ports = parse(port_desc_reply(7, [PortDesc(1, "s1-eth1", 0x020000000001), PortDesc(2, "s1-eth2", 2)]))
    down = parse(port_status(PortDesc(3, "s1-eth3", 3), down=True))
    assert (down.reason, down.desc.port_no, down.desc.state & ofp.OFPPS_LINK_DOWN) == (ofp.OFPPR_MODIFY, 3, 1)
    up = parse(port_status(PortDesc(3, "s1-eth3", 3), down=False))
    assert up.desc.state & ofp.OFPPS_LINK_DOWN == 0
    assert [(p.port_no, p.name) for p in ports.body] == [(1, b"s1-eth1"), (2, b"s1-eth2")]
    entries = [e for e in compiled("mac-nibble")[0x101]]
    stats = parse(flow_stats_reply(7, [(e, 3, 180) for e in entries]))
    assert [(s.table_id, s.priority, s.cookie, s.packet_count) for s in stats.body] == [
        (e.table, e.priority, wire_cookie(e), 3) for e in entries]
    raw = packet_in(4, 1, 0x0100000000000000, b"\xff" * 42)
    from srfabric.rules.openflow.wire import parse_packet_in

    parsed = parse_packet_in(raw)
    assert (parsed.in_port, parsed.data, parsed.table_id) == (4, b"\xff" * 42, 1)
