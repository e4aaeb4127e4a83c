"""Compiled rules, checked by walking packets through fake switches (behaviour, not flow text)."""

from __future__ import annotations

import ipaddress

import pytest

from srfabric.codecs import MacNibbleCodec
from srfabric.errors import ModelError, RoutingError
from srfabric.model import Chain, FlowClassifier
from srfabric.model.topo import fat_tree, tsn_fig1
from srfabric.rules.compile import SwitchState, compile_fabric, compile_state
from srfabric.rules.entries import Kind
from srfabric_tools.simulate import Packet, walk

CODECS = ["mac-nibble", "mac-vlan-mpls"]
SFPS = [("v1", "v4", "v7"), ("v2", "v4", "v6"), ("v3", "v4", "v5")]


def ip(text: str) -> int:
    return int(ipaddress.IPv4Address(text))


def demo_fabric():
    topo = fat_tree(4)
    for name, edge in [
        ("v1", "e3"),
        ("v2", "e3"),
        ("v3", "e4"),
        ("v4", "e5"),
        ("v5", "e7"),
        ("v6", "e7"),
        ("v7", "e8"),
    ]:
        topo.add_function(name, edge)
    return topo.to_fabric()


def sfp_chains(count: int = 3) -> list[Chain]:
    return [
        Chain(
            f"SFP{i + 1}",
            FlowClassifier(protocol="udp", destination_port_range=(5001 + i, 5001 + i)),
            SFPS[i % 3],
            "h1",
            "h16",
            i + 1,
        )
        for i in range(count)
    ]


def udp(src: str, dst: str, dport: int, fabric) -> Packet:
    s, d = fabric.hosts[src], fabric.hosts[dst]
    return Packet(
        eth_src=s.mac, eth_dst=d.mac, ipv4_src=ip(s.ip), ipv4_dst=ip(d.ip), ip_proto=17, tp_src=40000, tp_dst=dport
    )


def send(fabric, tables, packet: Packet, host: str):
    """Walk ``packet`` from ``host``; ``tables`` are entries by switch, or a whole ``SwitchState`` (its groups
    hold the default routes' headers)."""
    h = fabric.hosts[host]
    if isinstance(tables, SwitchState):
        return walk(fabric, tables.entries, packet, h.dpid, h.port, groups=tables.groups)
    return walk(fabric, tables, packet, h.dpid, h.port)


@pytest.mark.parametrize("codec", CODECS)
def test_chains_cross_their_functions_in_order_and_arrive_restored(codec: str) -> None:
    fabric = demo_fabric()
    tables = compile_fabric(fabric, sfp_chains(), codec)
    for index, functions in enumerate(SFPS):
        packet = udp("h1", "h16", 5001 + index, fabric)
        result = send(fabric, tables, packet, "h1")
        assert result.functions == list(functions)
        assert [name for name, _ in result.delivered] == ["h16"]
        arrived = result.delivered[0][1]
        assert (arrived.eth_src, arrived.eth_dst, arrived.vlans, arrived.mpls) == (
            packet.eth_src,
            packet.eth_dst,
            [],
            [],
        )


@pytest.mark.parametrize("codec", CODECS)
def test_other_traffic_takes_the_default_route(codec: str) -> None:
    fabric = demo_fabric()
    tables = compile_state(fabric, sfp_chains(), codec)
    for src, dst, dport in [("h1", "h16", 9999), ("h16", "h1", 5001), ("h5", "h6", 5001), ("h3", "h4", 1)]:
        result = send(fabric, tables, udp(src, dst, dport, fabric), src)
        assert result.functions == []
        assert [name for name, _ in result.delivered] == [dst]
        assert result.delivered[0][1].eth_src == fabric.hosts[src].mac


@pytest.mark.parametrize("codec", CODECS)
def test_chain_state_only_on_edges_and_transit_state_constant(codec: str) -> None:
    fabric = demo_fabric()
    one = compile_fabric(fabric, sfp_chains(1), codec)
    many = compile_fabric(
        fabric,
        [
            Chain(
                f"c{i}",
                FlowClassifier(protocol="udp", destination_port_range=(6000 + i, 6000 + i)),
                SFPS[i % 3],
                f"h{1 + i % 8}",
                f"h{16 - i % 8}",
                i + 1,
            )
            for i in range(50)
        ],
        codec,
    )
    for dpid, switch in fabric.switches.items():
        chain_entries = [e for e in many[dpid] if e.kind == Kind.CHAIN]
        if switch.role != "edge":
            assert chain_entries == []
            assert len(one[dpid]) == len(many[dpid])
    assert sum(1 for entries in many.values() for e in entries if e.kind == Kind.CHAIN) >= 50


@pytest.mark.parametrize("codec", CODECS)
def test_forged_header_from_a_host_is_dropped(codec: str) -> None:
    fabric = demo_fabric()
    tables = compile_fabric(fabric, sfp_chains(), codec)
    packet = udp("h1", "h16", 7777, fabric)
    if codec == "mac-nibble":
        packet.eth_src = MacNibbleCodec().encode([1, 3, 1, 3]).eth_src
    else:
        packet.vlans, packet.mpls = [0], [[0x30201, 3]]
    result = send(fabric, tables, packet, "h1")
    assert result.delivered == [] and result.functions == []
    assert result.dropped_at == [fabric.hosts["h1"].dpid]


def test_tsn_fig1_flows_follow_their_paths() -> None:
    fabric = tsn_fig1().to_fabric()
    tables = compile_state(fabric, [], "mac-nibble")
    result = send(fabric, tables, udp("h1", "h3", 1, fabric), "h1")
    assert [fabric.switches[d].name for d in result.switches] == ["s1", "s2", "s5"]
    assert [n for n, _ in result.delivered] == ["h3"]


def test_port_range_classifier_steers_every_port_in_range() -> None:
    fabric = demo_fabric()
    chain = Chain("r", FlowClassifier(protocol="udp", destination_port_range=(6000, 6010)), ("v1",), "h1", "h16", 9)
    tables = compile_state(fabric, [chain], "mac-nibble")
    for port, expected in [(5999, []), (6000, ["v1"]), (6007, ["v1"]), (6010, ["v1"]), (6011, [])]:
        assert send(fabric, tables, udp("h1", "h16", port, fabric), "h1").functions == expected


def test_conflicting_classifiers_are_refused() -> None:
    fabric = demo_fabric()
    a, b = sfp_chains(2)
    twin = Chain("twin", a.classifier, b.functions, a.source, a.destination, 77)
    with pytest.raises(ModelError, match="conflicts"):
        compile_fabric(fabric, [a, twin], "mac-nibble")


def test_port_beyond_the_codec_is_refused() -> None:
    topo = fat_tree(4)
    for index in range(8):
        topo.add_function(f"x{index}", "e3")  # ports 5..20 on e3
    fabric = topo.to_fabric()
    chain = Chain("far", FlowClassifier(), ("x7",), "h1", "h16", 1)
    with pytest.raises(RoutingError, match="outside 1..15"):
        compile_fabric(fabric, [chain], "mac-nibble")
    compile_fabric(fabric, [chain], "mac-vlan-mpls")


def test_a_later_pathlet_does_not_capture_another_chains_traffic() -> None:
    """Chain A re-encapsulates after v1; chain B's packets with A's port must not be pulled into A."""
    fabric = demo_fabric()
    a = Chain("A", FlowClassifier(protocol="udp", destination_port_range=(5001, 5001)), ("v1", "v4", "v7"),
              "h1", "h16", 1)
    b = Chain("B", FlowClassifier(protocol="udp"), ("v4",), "h2", "h9", 2)
    tables = compile_fabric(fabric, [a, b], "mac-nibble")
    result = send(fabric, tables, udp("h2", "h9", 5001, fabric), "h2")
    assert result.functions == ["v4"]
    assert [name for name, _ in result.delivered] == ["h9"]


def test_overlapping_classifiers_from_one_host_are_refused() -> None:
    fabric = demo_fabric()
    narrow = Chain("n", FlowClassifier(protocol="udp", destination_port_range=(5001, 5001)), ("v1",), "h1", "h16", 1)
    wide = Chain("w", FlowClassifier(protocol="udp", destination_port_range=(5000, 5010)), ("v2",), "h1", "h16", 2)
    with pytest.raises(ModelError, match="overlaps"):
        compile_fabric(fabric, [narrow, wide], "mac-nibble")


def test_long_host_routes_on_a_line_do_not_tie_with_restore() -> None:
    from srfabric.model.topo import TopoSpec

    topo = TopoSpec()
    for index in range(14):
        topo.add_switch(f"s{index}")
        if index:
            topo.add_link(f"s{index - 1}", f"s{index}")
    topo.add_host("h1", "s0")
    topo.add_host("h2", "s13")
    fabric = topo.to_fabric()
    tables = compile_state(fabric, [], "mac-nibble")
    result = send(fabric, tables, udp("h1", "h2", 9, fabric), "h1")
    assert [name for name, _ in result.delivered] == ["h2"]
    assert result.delivered[0][1].eth_src == fabric.hosts["h1"].mac
