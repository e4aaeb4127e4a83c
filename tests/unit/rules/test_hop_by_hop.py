"""Hop-by-hop rule steering, checked by walking packets through fake switches."""

from __future__ import annotations

import ipaddress

import pytest

from srfabric.errors import RoutingError
from srfabric.model import Chain, FlowClassifier
from srfabric.rules.compile import compile_fabric
from srfabric.rules.entries import Kind
from srfabric.rules.hop_by_hop import compile_hop_by_hop
from srfabric_tools.lab.fabric_topos import chain_between, line
from srfabric_tools.simulate import Packet, walk


def ip(text: str) -> int:
    return int(ipaddress.IPv4Address(text))


def packet(fabric, src: str, dst: str, dport: int = 5201) -> Packet:
    s, d = fabric.hosts[src], fabric.hosts[dst]
    return Packet(eth_src=s.mac, eth_dst=d.mac, ipv4_src=ip(s.ip), ipv4_dst=ip(d.ip), ip_proto=6, tp_src=40000,
                  tp_dst=dport)


@pytest.mark.parametrize("n", [1, 4, 10])
def test_chain_crosses_its_functions_and_arrives_unchanged(n: int) -> None:
    spec = line(5, 10)
    fabric = spec.to_fabric()
    functions = tuple(f"v{i}" for i in range(1, n + 1))
    tables = compile_hop_by_hop(fabric, [chain_between(spec, "c", functions, 1)])
    sent = packet(fabric, "S", "D")
    result = walk(fabric, tables, sent, fabric.hosts["S"].dpid, fabric.hosts["S"].port)
    assert result.functions == list(functions)
    assert [(name, got) for name, got in result.delivered] == [("D", sent)]
    back = walk(fabric, tables, packet(fabric, "D", "S"), fabric.hosts["D"].dpid, fabric.hosts["D"].port)
    assert back.functions == [] and [name for name, _ in back.delivered] == ["S"]


def test_every_switch_on_the_route_holds_chain_state() -> None:
    spec = line(5, 10)
    fabric = spec.to_fabric()
    one = compile_fabric(fabric, [chain_between(spec, "c", ("v1", "v10"), 1)], "mac-nibble", steering="hop-by-hop")
    assert all(any(e.kind == Kind.CHAIN for e in entries) for entries in one.values())
    source_routed = compile_fabric(fabric, [chain_between(spec, "c", ("v1", "v10"), 1)], "mac-nibble",
                                   steering="source-routing")
    assert sum(any(e.kind == Kind.CHAIN for e in entries) for entries in source_routed.values()) < 5


def test_a_route_entering_a_switch_twice_by_one_port_is_refused_by_name() -> None:
    spec = line(3, 6)
    fabric = spec.to_fabric()
    # v3 on sw2, back to v1 on sw1, then v4 on sw2 again: sw2 is entered twice from sw1's link.
    chain = Chain("zigzag", FlowClassifier(protocol="tcp"), ("v3", "v1", "v4"), "S", "D", 1)
    with pytest.raises(RoutingError, match="chain zigzag"):
        compile_hop_by_hop(fabric, [chain])


def test_unknown_steering_is_refused() -> None:
    with pytest.raises(Exception, match="steering"):
        compile_fabric(line().to_fabric(), [], "mac-nibble", steering="magic")
