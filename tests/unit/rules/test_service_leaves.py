"""Service leaves: an SR-unaware function attached to a switch without hosts hands its frames back there, and
that switch holds the default routes that take them on by destination; transit switches without function ports
hold none. Checked by walking frames (behaviour, not flow text)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from srfabric.model import Chain, FlowClassifier
from srfabric.model.fabric import Fabric
from srfabric.model.topo import fat_tree
from srfabric.rules.compile import compile_state
from srfabric.rules.entries import Kind, ipv4_number
from srfabric_tools.simulate import Packet, walk
from tests.unit.rules.test_rules_walk import CODECS

UDP = FlowClassifier(protocol="udp", destination_port_range=(5001, 5001))
NAT_IN, NAT_ADDRESS = 0x02BB00000001, "10.0.0.200"


def with_service_leaf() -> Fabric:
    """The k=4 fat tree with a source NAT (SR-unaware) on aggregation switch a3, which has no hosts."""
    topo = fat_tree(4)
    topo.add_function("nat", "a3")
    fabric = topo.to_fabric()
    nat = fabric.functions["nat"]
    fabric.add_function(replace(nat, proxy=True, mac=NAT_IN, rewrites=frozenset({"ip_src"})))
    return fabric


def natted(packet: Packet) -> Packet:
    return replace(packet, ipv4_src=ipv4_number(NAT_ADDRESS), eth_src=NAT_IN + 1)


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("destination", ["h16", "h2"])
def test_a_chain_without_a_destination_goes_on_from_a_service_leaf_by_destination(codec: str,
                                                                                   destination: str) -> None:
    fabric = with_service_leaf()
    state = compile_state(fabric, [Chain("open", UDP, ("nat",), "h1", None, 1)], codec)
    h1, to = fabric.hosts["h1"], fabric.hosts[destination]
    packet = Packet(eth_src=h1.mac, eth_dst=0x0200000000FE, ipv4_src=ipv4_number(h1.ip),
                    ipv4_dst=ipv4_number(to.ip), ip_proto=17, tp_src=40000, tp_dst=5001)
    result = walk(fabric, state.entries, packet, h1.dpid, h1.port, groups=state.groups, behaviour={"nat": natted})
    assert result.functions == ["nat"]
    [(name, arrived)] = result.delivered
    assert name == destination and arrived.ipv4_src == ipv4_number(NAT_ADDRESS)
    assert (arrived.vlans, arrived.mpls, arrived.eth_dst) == ([], [], to.mac)


def test_only_switches_with_hosts_or_an_sr_unaware_functions_port_hold_default_routes() -> None:
    fabric = with_service_leaf()
    state = compile_state(fabric, [], "mac-nibble")
    routed = {dpid for dpid, entries in state.entries.items() for e in entries if e.kind == Kind.ROUTE}
    with_hosts = {host.dpid for host in fabric.hosts.values()}
    assert routed == with_hosts | {fabric.functions["nat"].egress[0]}


def test_a_service_leaf_not_linked_yet_costs_no_other_switch_its_routes() -> None:
    from srfabric.model.fabric import ServiceFunction, Switch

    fabric = with_service_leaf()
    before = compile_state(fabric, [], "mac-nibble")
    fabric.add_switch(Switch(0x999, "leaf"))  # connected, its links not discovered yet
    fabric.add_function(ServiceFunction("fw", (0x999, 1), (0x999, 2), proxy=True, mac=0x02CC00000001))
    problems: list = []
    after = compile_state(fabric, [], "mac-nibble", problems)
    routes = {dpid: [e for e in entries if e.kind == Kind.ROUTE] for dpid, entries in after.entries.items()}
    assert all(routes[dpid] == [e for e in entries if e.kind == Kind.ROUTE]
               for dpid, entries in before.entries.items())  # every other switch keeps every route
    assert routes[0x999] == [] and {p.field for p in problems} == {f"host h{i}" for i in range(1, 17)}
