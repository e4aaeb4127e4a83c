"""The gateway takes IPv4 to no host of the fabric ("everything else"): from every edge, after a destination-less
chain, and back in from it, with the addresses frames had. Checked by walking packets (behaviour, not flow text)."""

from __future__ import annotations

import pytest

from srfabric.errors import ModelError
from srfabric.model import Chain, FlowClassifier
from srfabric.model.fabric import Fabric
from srfabric.rules.compile import compile_state
from srfabric.rules.entries import ipv4_number
from srfabric_tools.simulate import Packet, walk
from tests.unit.rules.test_rules_walk import CODECS, demo_fabric

OUTSIDE = "192.0.2.7"


def with_gateway(name: str = "h9") -> Fabric:
    fabric = demo_fabric()
    fabric.set_gateway(fabric.hosts[name].ip)
    return fabric


def frame(fabric: Fabric, src: str, dst_ip: str, dport: int = 80, src_ip: str | None = None,
          dst_mac: int | None = None) -> Packet:
    host = fabric.hosts[src]
    return Packet(eth_src=host.mac, eth_dst=dst_mac if dst_mac is not None else 0x0200000000FE,
                  ipv4_src=ipv4_number(src_ip or host.ip), ipv4_dst=ipv4_number(dst_ip), ip_proto=17, tp_src=40000,
                  tp_dst=dport)


def send(fabric: Fabric, chains: list[Chain], codec: str, packet: Packet, src: str):
    state = compile_state(fabric, chains, codec)
    host = fabric.hosts[src]
    return walk(fabric, state.entries, packet, host.dpid, host.port, groups=state.groups)


@pytest.mark.parametrize("codec", CODECS)
def test_everything_else_goes_to_the_gateway_from_every_edge(codec: str) -> None:
    fabric = with_gateway()
    gateway = fabric.gateway()
    assert gateway is not None
    for src in ("h1", "h10", "h16"):  # another pod, the gateway's own edge, the last edge
        # The host sends to its default router's MAC, the gateway's (the controller answers its ARP).
        result = send(fabric, [], codec, frame(fabric, src, OUTSIDE, dst_mac=gateway.mac), src)
        assert [name for name, _ in result.delivered] == ["h9"], src
        arrived = result.delivered[0][1]
        assert (arrived.eth_src, arrived.eth_dst, arrived.vlans, arrived.mpls) == (
            fabric.hosts[src].mac, gateway.mac, [], [])
    # Hosts of the fabric still get their own routes.
    assert [n for n, _ in send(fabric, [], codec, frame(fabric, "h1", fabric.hosts["h16"].ip), "h1").delivered] \
        == ["h16"]


@pytest.mark.parametrize("codec", CODECS)
def test_frames_from_outside_arrive_with_the_gateways_mac(codec: str) -> None:
    fabric = with_gateway()
    h1 = fabric.hosts["h1"]
    packet = frame(fabric, "h9", h1.ip, src_ip=OUTSIDE, dst_mac=h1.mac)
    result = send(fabric, [], codec, packet, "h9")
    assert [name for name, _ in result.delivered] == ["h1"]
    arrived = result.delivered[0][1]
    assert (arrived.eth_src, arrived.eth_dst, arrived.ipv4_src) == (fabric.hosts["h9"].mac, h1.mac,
                                                                    ipv4_number(OUTSIDE))


def test_without_a_gateway_everything_else_is_dropped_at_the_ingress() -> None:
    fabric = demo_fabric()
    result = send(fabric, [], "mac-nibble", frame(fabric, "h1", OUTSIDE), "h1")
    assert result.delivered == [] and result.dropped_at == [fabric.hosts["h1"].dpid]


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("gateway", ["h9", "h16"])  # on the last function's switch, or far from it
def test_a_chain_without_destination_goes_on_to_the_gateway_and_to_the_hosts(codec: str, gateway: str) -> None:
    fabric = with_gateway(gateway)
    chain = Chain("open", FlowClassifier(protocol="udp", destination_port_range=(5001, 5001)), ("v1", "v4"), "h1",
                  None, 1)
    # v4 hangs off e5, whose own hosts are h9 and h10: both still take what is theirs.
    for dst_ip, expected in ((OUTSIDE, gateway), (fabric.hosts["h10"].ip, "h10"), (fabric.hosts["h16"].ip, "h16"),
                             (fabric.hosts["h9"].ip, "h9")):
        packet = frame(fabric, "h1", dst_ip, dport=5001, dst_mac=fabric.hosts[gateway].mac)
        result = send(fabric, [chain], codec, packet, "h1")
        assert result.functions == ["v1", "v4"], dst_ip
        assert [name for name, _ in result.delivered] == [expected], dst_ip
        assert result.delivered[0][1].eth_src == fabric.hosts["h1"].mac


def test_a_gateway_address_that_is_no_ipv4_address_is_refused_by_name() -> None:
    fabric = demo_fabric()
    with pytest.raises(ModelError, match="gateway"):
        fabric.set_gateway("not-an-address")
    assert fabric.gateway_ip is None


def test_hop_by_hop_rules_and_reactive_flows_take_everything_else_to_the_gateway() -> None:
    from srfabric.model.flow import FiveTuple
    from srfabric.rules.hop_by_hop import compile_hop_by_hop
    from srfabric.rules.reactive import flow_entries, reactive_tables

    fabric = with_gateway("h16")
    gateway = fabric.gateway()
    assert gateway is not None
    h1 = fabric.hosts["h1"]
    tables = compile_hop_by_hop(fabric, [])
    result = walk(fabric, tables, frame(fabric, "h1", OUTSIDE, dst_mac=gateway.mac), h1.dpid, h1.port)
    assert [name for name, _ in result.delivered] == ["h16"]
    flow = FiveTuple(h1.ip, OUTSIDE, 17, 40000, 80)
    state = compile_state(fabric, [], "mac-nibble")
    for steering, compiled in (("source-routing", state.entries), ("hop-by-hop", tables)):
        placed = flow_entries(fabric, flow, (h1.dpid, h1.port), "mac-nibble", steering)
        reactive = reactive_tables(compiled, steering)  # no default routes: the flow's own entries only
        entries = {dpid: [*reactive[dpid], *(e for d, e in placed if d == dpid)] for dpid in reactive}
        result = walk(fabric, entries, frame(fabric, "h1", OUTSIDE, dst_mac=gateway.mac), h1.dpid, h1.port)
        assert [name for name, _ in result.delivered] == ["h16"], steering


@pytest.mark.parametrize("codec", CODECS)
def test_another_chain_through_the_same_function_still_reaches_its_host(codec: str) -> None:
    fabric = with_gateway("h16")
    udp = FlowClassifier(protocol="udp", destination_port_range=(5001, 5001))
    open_chain = Chain("open", udp, ("v4",), "h1", None, 1)
    to_h10 = Chain("d1", udp, ("v4",), "h2", "h10", 2)  # v4 hangs off e5, h10's switch
    result = send(fabric, [open_chain, to_h10], codec, frame(fabric, "h2", fabric.hosts["h10"].ip, 5001), "h2")
    assert result.functions == ["v4"] and [n for n, _ in result.delivered] == ["h10"]


@pytest.mark.parametrize("codec", CODECS)
def test_a_chain_from_the_gateway_delivers_to_the_hosts_by_its_function(codec: str) -> None:
    fabric = with_gateway("h16")
    chain = Chain("in", FlowClassifier(protocol="udp"), ("v4",), "h16", None, 1)
    h9 = fabric.hosts["h9"]
    packet = frame(fabric, "h16", h9.ip, src_ip=OUTSIDE, dst_mac=h9.mac)
    result = send(fabric, [chain], codec, packet, "h16")
    assert result.functions == ["v4"] and [n for n, _ in result.delivered] == ["h9"]
    assert result.delivered[0][1].eth_src == fabric.hosts["h16"].mac


def test_a_way_to_the_gateway_that_needs_two_headers_is_refused_and_takes_nothing() -> None:
    from srfabric.errors import SrfabricError
    from srfabric.model.topo import TopoSpec

    topo = TopoSpec()
    for index in range(16):
        topo.add_switch(f"s{index}")
        if index:
            topo.add_link(f"s{index - 1}", f"s{index}")
        topo.add_host(f"h{index}", f"s{index}")
    topo.gateway = "h15"
    fabric = topo.to_fabric()
    problems: list[SrfabricError] = []
    state = compile_state(fabric, [], "mac-nibble", problems)
    assert problems and all("second header" in str(p) and p.field.startswith("gateway from") for p in problems)
    for name in ("h11", "h12", "h13", "h14"):
        other = fabric.hosts[name]
        packet = frame(fabric, "h0", other.ip, dst_mac=other.mac)
        result = walk(fabric, state.entries, packet, fabric.hosts["h0"].dpid, fabric.hosts["h0"].port,
                      groups=state.groups)
        assert [n for n, _ in result.delivered] == [name]


def test_an_address_no_host_can_have_is_refused_by_name() -> None:
    from srfabric.model.fabric import Host

    fabric = demo_fabric()
    for address in ("0.0.0.0", "224.0.0.251", "255.255.255.255"):
        with pytest.raises(ModelError, match="host.ip"):
            fabric.add_host(Host("odd", 0x99, address, fabric.hosts["h1"].dpid, 9))
