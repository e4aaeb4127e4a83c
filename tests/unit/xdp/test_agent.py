"""The XDP agent's flow table follows the controller's flow-mods; what XDP cannot do is refused on the wire."""

from __future__ import annotations

from os_ken.ofproto import ofproto_v1_3 as ofp

from srfabric.model.topo import fat_tree
from srfabric.rules.compile import compile_fabric
from srfabric.rules.entries import FlowEntry, Kind, Output, PopVlan, cookie, match
from srfabric.southbound.ofbind import flow_delete, flow_delete_all
from srfabric.southbound.wire import flow_add_packed
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
    entries = compile_fabric(fat_tree(4).to_fabric(), [], "mac-nibble")[0x101]
    for entry in entries:
        agent.on_flow_mod(wire(flow_add_packed(entry)), 5)
    assert not agent.sent and len(agent.table) == len(entries)
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
