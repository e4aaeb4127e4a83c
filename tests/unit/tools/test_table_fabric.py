"""The emulated switches that keep their flow tables (``bench/table_fabric``): flow-mods read as
``parse_flow_mod`` reads them, tables that pick by priority and forget idle entries, frames written back as they
were read, and a frame crossing a fabric by the entries it was sent (forwarding, not message counts)."""

from __future__ import annotations

import asyncio

from os_ken.ofproto import ofproto_v1_3 as ofp
from os_ken.ofproto import ofproto_v1_3_parser as parser

from srfabric.model.topo import tree
from srfabric.rules.entries import FlowEntry, Output, PopVlan, PushMpls, PushVlan, SetField, ToController, match
from srfabric.rules.openflow.ofbind import flow_add, flow_delete
from srfabric.rules.openflow.wire import packet_out_packed
from srfabric.xdp.frames import udp_frame
from srfabric.xdp.of_messages import parse_flow_mod
from srfabric_tools.bench.flow_mod_read import FlowModReader
from srfabric_tools.bench.of_emulator import FLOW_PORT, Tally
from srfabric_tools.bench.of_tables import FlowTables
from srfabric_tools.bench.table_fabric import TableFabric
from srfabric_tools.bench.wire_frames import decode, encode
from srfabric_tools.simulate import Packet


def wire(msg: object) -> bytes:
    msg.set_xid(1)  # type: ignore[attr-defined]
    msg.serialize()  # type: ignore[attr-defined]
    return bytes(msg.buf)  # type: ignore[attr-defined]


ENTRIES = [
    FlowEntry(0, 100, match(in_port=1, eth_type=0x0800, ipv4_src=0x0A000001, udp_dst=5009),
              (PushVlan(0x8100), SetField("vlan_vid", 0x1005), Output(3)), idle_timeout=10),
    FlowEntry(1, 7, match(eth_dst=(0x020000000000, 0xFF0000000000), vlan_vid=0x1005), (PopVlan(), Output(2)),
              goto=None, cookie=0x55),
    FlowEntry(0, 1, match(), (ToController(),)),
    FlowEntry(2, 9, match(eth_type=0x8847, mpls_label=17), (PushMpls(0x8847), Output(4)), goto=3),
]


def test_the_reader_reads_srfabrics_flow_mods_as_parse_flow_mod_does() -> None:
    reader = FlowModReader()
    for entry in ENTRIES:
        for msg in (flow_add(entry), flow_delete(entry)):
            raw = wire(msg)
            assert reader.read(raw) == parse_flow_mod(raw)
            assert reader.read(raw) == parse_flow_mod(raw)  # again, its instructions now remembered


def test_the_reader_reads_a_learning_switchs_flow_mod() -> None:
    actions = [parser.OFPActionOutput(3)]
    msg = parser.OFPFlowMod(None, priority=1, match=parser.OFPMatch(in_port=2, eth_dst="00:00:00:00:00:02",
                                                                    eth_src="06:00:00:00:00:09"),
                            instructions=[parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS, actions)])
    msg.datapath = type("Datapath", (), {"ofproto": ofp, "ofproto_parser": parser})()
    raw = wire(msg)
    assert FlowModReader().read(raw) == parse_flow_mod(raw)


def test_tables_pick_the_highest_priority_and_forget_idle_entries() -> None:
    tables = FlowTables()
    wide, narrow, miss = (FlowEntry(0, 5, match(eth_dst=(0x02 << 40, 0xFF << 40)), (Output(1),)),
                          FlowEntry(0, 50, match(eth_dst=0x020000000002, in_port=3), (Output(2),), idle_timeout=2),
                          FlowEntry(0, 0, match(), (ToController(),)))
    for entry in (wide, narrow, miss):
        tables.add(entry, 0, b"", now=0.0)
    packet = Packet(eth_src=1, eth_dst=0x020000000002)
    assert tables.lookup(0, packet, 3, now=1.0) == narrow
    assert tables.lookup(0, packet, 4, now=1.0) == wide  # another in_port: only the masked one holds
    assert tables.lookup(0, Packet(1, 0x0A), 3, now=1.0) == miss
    assert [held.entry for held in tables.expire(now=2.5)] == []  # hit at 1.0: idle 1.5 s of 2
    assert [held.entry for held in tables.expire(now=3.0)] == [narrow]
    assert tables.lookup(0, packet, 3, now=3.0) == wide
    assert tables.delete(0, match(), None, cookie=0, cookie_mask=0) and len(tables) == 0


def test_a_frame_is_written_back_with_its_tags_labels_and_new_fields() -> None:
    frame = udp_frame(0x020000000002, 0x020000000001, "10.0.0.1", "10.0.0.2", 20000, FLOW_PORT, size=90)
    packet, rest = decode(frame)
    packet.vlans.insert(0, 0x2005)
    packet.mpls.insert(0, [17, 64, 0])
    packet.ipv4_dst = 0x0A000009
    again, rest_again = decode(encode(packet, rest))
    assert (again.vlans, again.mpls, again.ipv4_dst, again.tp_src) == ([0x2005], [[17, 64, 0]], 0x0A000009, 20000)
    assert rest_again == encode(packet, rest)[-len(rest_again):]


def test_a_frame_crosses_the_fabric_by_its_entries_and_a_miss_is_dropped() -> None:
    spec = tree(2, 2)  # s1 above s2 and s3; h1, h2 on s2; h3, h4 on s3
    h1, h3 = spec.hosts["h1"], spec.hosts["h3"]
    up = next(link for link in spec.links if {link.a, link.b} == {"s1", "s2"})
    down = next(link for link in spec.links if {link.a, link.b} == {"s1", "s3"})
    s2_up, s1_from_s2 = (up.a_port, up.b_port) if up.a == "s2" else (up.b_port, up.a_port)
    s1_down, s3_from_s1 = (down.a_port, down.b_port) if down.a == "s1" else (down.b_port, down.a_port)
    frame = udp_frame(h3.mac, h1.mac, h1.ip, h3.ip, 20000, FLOW_PORT)

    async def run(with_s3_entry: bool) -> Tally:
        fabric = TableFabric(spec)
        for name in spec.switches:
            fabric.switches[name] = fabric.make_switch(name)
        entries = {"s1": FlowEntry(0, 10, match(in_port=s1_from_s2), (Output(s1_down),)),
                   "s3": FlowEntry(0, 10, match(in_port=s3_from_s1, eth_dst=h3.mac), (Output(h3.port),))}
        for name, entry in entries.items():
            if name == "s1" or with_s3_entry:
                fabric.switch(name).flow_mod(wire(flow_add(entry)))
        fabric.tally.sent[(bytes([10, 0, 0, 1]), 20000)] = 0
        out = packet_out_packed(h1.port, (Output(s2_up),), frame).buf
        fabric.packet_out(fabric.switches["s2"], memoryview(bytes(out)), 0)
        await asyncio.sleep(0.01)
        return fabric.tally

    crossed = asyncio.run(run(True))
    assert crossed.setup_ns and not crossed.sent  # out on h3's port: set up
    missed = asyncio.run(run(False))
    assert not missed.setup_ns and missed.sent  # s3 has no entry: OpenFlow 1.3 drops it


def test_table_changes_apply_in_order_and_a_barrier_is_answered_after_them() -> None:
    """A flow-mod is applied a slice at a time between turns of the loop; what follows it (a barrier) waits for
    it, an echo does not; the tables hold the entry once the barrier is answered."""
    spec = tree(1, 2)

    async def run() -> tuple[list[int], int]:
        fabric = TableFabric(spec)
        switch = fabric.switches["s1"] = fabric.make_switch("s1")
        answered: list[int] = []
        switch.write = lambda data: answered.append(data[1])  # type: ignore[method-assign]
        barrier = wire(parser.OFPBarrierRequest(type("Datapath", (), {"ofproto": ofp, "ofproto_parser": parser})()))
        echo = wire(parser.OFPEchoRequest(type("Datapath", (), {"ofproto": ofp, "ofproto_parser": parser})()))
        switch.data_received(wire(flow_add(ENTRIES[0])) + barrier + echo)
        before = list(answered)
        await asyncio.sleep(0.01)
        assert before == [ofp.OFPT_ECHO_REPLY]  # read and answered at once; the barrier waits for the flow-mod
        return answered, len(switch.tables)

    answered, held = asyncio.run(run())
    assert answered == [ofp.OFPT_ECHO_REPLY, ofp.OFPT_BARRIER_REPLY] and held == 1
