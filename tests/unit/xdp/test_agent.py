"""The XDP agent's flow table follows the controller's flow-mods; what XDP cannot do is refused on the wire."""

from __future__ import annotations

from os_ken.ofproto import ofproto_v1_3 as ofp

from srfabric.model.topo import fat_tree
from srfabric.rules.compile import compile_state
from srfabric.rules.entries import Bucket, FlowEntry, GroupEntry, Kind, Output, PopVlan, cookie, match
from srfabric.rules.openflow.ofbind import flow_delete, flow_delete_all, group_delete, group_mod
from srfabric.rules.openflow.wire import flow_add_packed
from srfabric.xdp.agent import XdpAgent


def wire(msg) -> bytes:
    msg.set_xid(5)
    msg.serialize()
    return bytes(msg.buf)


class Recording(XdpAgent):
    def __init__(self) -> None:
        super().__init__(0x101, {1: "e1-eth1"}, "mac-nibble", "test")
        self.sent: list[bytes] = []

    def send(self, raw: bytes) -> None:
        self.sent.append(raw)


def test_adds_deletes_and_flush_follow_the_controller() -> None:
    agent = Recording()
    state = compile_state(fat_tree(4).to_fabric(), [], "mac-nibble")
    entries, groups = state.entries[0x101], state.groups[0x101]
    for group in groups:  # as the controller sends them: groups first, then the entries that use them
        agent.on_group_mod(wire(group_mod(group)), 5)
    for entry in entries:
        agent.on_flow_mod(wire(flow_add_packed(entry)), 5)
    assert not agent.sent and len(agent.table) == len(entries)
    assert agent.groups == {group.group_id: group for group in groups}
    agent.on_flow_mod(wire(flow_delete(entries[0])), 5)
    assert entries[0].key not in agent.table and len(agent.table) == len(entries) - 1
    agent.on_flow_mod(wire(flow_delete_all()), 5)
    assert agent.table == {}


def test_an_entry_without_an_xdp_form_is_refused_with_an_openflow_error() -> None:
    agent = Recording()
    odd = FlowEntry(1, 300, match(eth_type=0x0800, ipv4_dst=1), (PopVlan(), Output(2)), cookie=cookie(Kind.CHAIN))
    agent.on_flow_mod(wire(flow_add_packed(odd)), 5)
    assert agent.table == {}
    assert len(agent.sent) == 1 and agent.sent[0][1] == ofp.OFPT_ERROR
    assert int.from_bytes(agent.sent[0][8:10], "big") == ofp.OFPET_BAD_ACTION


def test_indirect_groups_are_held_replaced_and_deleted_and_other_types_refused() -> None:
    agent = Recording()
    header = GroupEntry(0x80000102, "indirect", (Bucket((Output(1),)),))
    agent.on_group_mod(wire(group_mod(header)), 5)
    moved = GroupEntry(0x80000102, "indirect", (Bucket((Output(2),)),))
    agent.on_group_mod(wire(group_mod(moved, modify=True)), 5)
    agent.on_group_mod(wire(group_mod(moved)), 5)  # an add of a held group replaces it (no read-back here)
    assert not agent.sent and agent.groups == {moved.group_id: moved}
    agent.on_group_mod(wire(group_delete(moved.group_id)), 5)
    assert agent.groups == {}
    select = GroupEntry(9, "select", (Bucket((Output(1),), 1), Bucket((Output(2),), 1)))
    agent.on_group_mod(wire(group_mod(select)), 5)
    assert agent.groups == {} and len(agent.sent) == 1 and agent.sent[0][1] == ofp.OFPT_ERROR
    assert int.from_bytes(agent.sent[0][8:10], "big") == ofp.OFPET_GROUP_MOD_FAILED


def test_group_mods_the_maps_could_not_follow_are_refused_and_change_nothing() -> None:
    from srfabric.rules.entries import Group

    agent = Recording()
    header = GroupEntry(0x80000102, "indirect", (Bucket((Output(1),)),))
    agent.on_group_mod(wire(group_mod(header)), 5)
    route = FlowEntry(1, 100, match(eth_type=0x0800, ipv4_dst=3), (Group(header.group_id),), cookie=cookie(Kind.ROUTE))
    agent.on_flow_mod(wire(flow_add_packed(route)), 5)
    unknown = GroupEntry(0x80000103, "indirect", (Bucket((Output(1),)),))
    no_header = GroupEntry(header.group_id, "indirect", (Bucket((PopVlan(), Output(1))),))
    for bad in (group_mod(unknown, modify=True), group_mod(no_header, modify=True)):
        agent.on_group_mod(wire(bad), 5)
    assert [int.from_bytes(raw[8:10], "big") for raw in agent.sent] == [ofp.OFPET_GROUP_MOD_FAILED] * 2
    assert agent.groups == {header.group_id: header} and route.key in agent.table
    agent.on_group_mod(wire(group_delete(header.group_id)), 5)  # its entries go with it, as OpenFlow says
    assert agent.groups == {} and agent.table == {}


def test_malformed_group_mods_get_an_error_not_an_exception() -> None:
    import random

    agent = Recording()
    good = wire(group_mod(GroupEntry(5, "indirect", (Bucket((Output(1),)),))))
    rng = random.Random(7)
    for _ in range(3000):
        raw = bytearray(good)
        for _ in range(rng.randint(1, 4)):
            raw[rng.randrange(8, len(raw))] = rng.randrange(256)
        agent.on_group_mod(bytes(raw), 5)  # must not raise
    cut = good[:20]
    agent.sent.clear()
    agent.on_group_mod(cut[:2] + len(cut).to_bytes(2, "big") + cut[4:], 5)
    assert agent.sent and agent.sent[0][1] == ofp.OFPT_ERROR
