"""IPv6 on the fabric: dual-stack hosts' default routes, IPv6 classifiers (through SR-aware and SR-unaware
functions, with and without a destination), forged IPv6 frames, and Neighbour Discovery at the controller.
Checked by walking packets (behaviour, not flow text)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from srfabric.controller.config import ControllerConfig
from srfabric.controller.core import ControllerCore
from srfabric.controller.neighbours import ADVERT, SOLICIT, nd_frame, parse_nd
from srfabric.errors import ModelError, RoutingError
from srfabric.model import Chain, FlowClassifier
from srfabric.model.fabric import Fabric
from srfabric.rules.compile import compile_state
from srfabric.rules.entries import ipv6_number
from srfabric_tools.simulate import Packet, Walk, walk
from tests.unit.controller.fake_switches import FakeSwitches, connected
from tests.unit.rules.test_rules_walk import CODECS, demo_fabric

TCP6 = FlowClassifier(ethertype="IPv6", protocol="tcp", destination_port_range=(5201, 5201))


def dual_stack() -> Fabric:
    fabric = demo_fabric()
    for index, name in enumerate(sorted(fabric.hosts, key=lambda n: int(n[1:])), start=1):
        fabric.add_host(replace(fabric.hosts[name], ip6=(f"fd00::{index:x}",)))
    return fabric


def send6(fabric: Fabric, chains: list[Chain], codec: str, src: str, dst: str, behaviour=None,
          eth_src: int | None = None) -> Walk:
    state = compile_state(fabric, chains, codec)
    s, d = fabric.hosts[src], fabric.hosts[dst]
    packet = Packet(eth_src=s.mac if eth_src is None else eth_src, eth_dst=d.mac, eth_type=0x86DD, ip_proto=6,
                    tp_src=40000, tp_dst=5201, ipv6_src=ipv6_number(s.ip6[0]), ipv6_dst=ipv6_number(d.ip6[0]))
    return walk(fabric, state.entries, packet, s.dpid, s.port, groups=state.groups, behaviour=behaviour)


def arrived_plain(result: Walk, fabric: Fabric, src: str, dst: str) -> None:
    [(name, packet)] = result.delivered
    assert name == dst
    assert (packet.eth_type, packet.vlans, packet.mpls) == (0x86DD, [], [])  # the label's pop restored IPv6
    assert (packet.eth_src, packet.eth_dst) == (fabric.hosts[src].mac, fabric.hosts[dst].mac)


@pytest.mark.parametrize("codec", CODECS)
def test_dual_stack_hosts_reach_each_other_over_ipv6(codec: str) -> None:
    fabric = dual_stack()
    for src, dst in (("h1", "h16"), ("h16", "h2"), ("h1", "h2")):  # across pods, back, on one edge
        arrived_plain(send6(fabric, [], codec, src, dst), fabric, src, dst)
    state = compile_state(fabric, [], codec)
    ids = {g.group_id for groups in state.groups.values() for g in groups}
    assert any(i & 0x10000000 for i in ids) and any(not i & 0x10000000 for i in ids)  # a group per family


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("proxy", [False, True])
@pytest.mark.parametrize("destination", ["h16", None])
def test_an_ipv6_chain_crosses_three_functions(codec: str, proxy: bool, destination: str | None) -> None:
    fabric = dual_stack()
    # Without a destination the way to the last function must fit one header: three functions close together.
    functions = ("v1", "v4", "v7") if destination else ("v1", "v2", "v3")
    if proxy:
        for name in functions:
            fabric.add_function(replace(fabric.functions[name], proxy=True))
    got: list[Packet] = []

    def note(packet: Packet) -> Packet:
        got.append(packet)
        return packet

    chain = Chain("six", TCP6, functions, "h1", destination, 1)
    result = send6(fabric, [chain], codec, "h1", "h16", {name: note for name in functions})
    assert result.functions == list(functions)
    [(name, packet)] = result.delivered
    assert name == "h16" and (packet.eth_type, packet.vlans, packet.mpls) == (0x86DD, [], [])
    if proxy:  # the functions saw plain IPv6
        assert all((p.eth_type, p.vlans, p.mpls) == (0x86DD, [], []) for p in got)
    # IPv4 of the same ports is not the chain's.
    plain = compile_state(fabric, [chain], codec)
    h1, h16 = fabric.hosts["h1"], fabric.hosts["h16"]
    v4 = Packet(eth_src=h1.mac, eth_dst=h16.mac, ipv4_src=int.from_bytes(bytes(map(int, h1.ip.split("."))), "big"),
                ipv4_dst=int.from_bytes(bytes(map(int, h16.ip.split("."))), "big"), ip_proto=6, tp_src=40000,
                tp_dst=5201)
    assert walk(fabric, plain.entries, v4, h1.dpid, h1.port, groups=plain.groups).functions == []


@pytest.mark.parametrize("codec", CODECS)
def test_forged_ipv6_frames_are_dropped_at_the_ingress(codec: str) -> None:
    fabric = dual_stack()
    h1 = fabric.hosts["h1"]
    state = compile_state(fabric, [], codec)
    forged = Packet(eth_src=0x3000000000F1 if codec == "mac-nibble" else h1.mac, eth_dst=0x1, eth_type=0x86DD,
                    ipv6_src=ipv6_number(h1.ip6[0]), ipv6_dst=ipv6_number("fd00::10"), ip_proto=17)
    if codec == "mac-vlan-mpls":
        forged.vlans, forged.mpls = [0x0F1], [[0x12345, 3, 1]]
    result = walk(fabric, state.entries, forged, h1.dpid, h1.port, groups=state.groups)
    assert result.delivered == [] and result.dropped_at == [h1.dpid]


def test_ipv6_classifiers_are_checked_and_need_the_hosts_ipv6_address() -> None:
    with pytest.raises(ModelError, match=r"source_ip_prefix: '10.0.0.0/8' is not an IPv6 prefix"):
        FlowClassifier(ethertype="IPv6", source_ip_prefix="10.0.0.0/8").validate()
    with pytest.raises(ModelError, match=r"ethertype: 'ARP' is not one of IPv4, IPv6"):
        FlowClassifier(ethertype="ARP").validate()
    fabric = demo_fabric()  # IPv4 only
    with pytest.raises(RoutingError, match=r"source: host h1 has no IPv6 address known yet"):
        compile_state(fabric, [Chain("six", TCP6, ("v1",), "h1", "h16", 1)], "mac-nibble")
    with pytest.raises(ModelError, match=r"host.ip6: fe80::1 is no address to route to"):
        fabric.add_host(replace(fabric.hosts["h1"], ip6=("fe80::1",)))


def test_the_controller_learns_ipv6_addresses_from_neighbour_discovery_and_answers() -> None:
    controller, switches = controller_with(demo_fabric())
    h1, h16 = controller.fabric.hosts["h1"], controller.fabric.hosts["h16"]
    sent: list[tuple[int, int, bytes]] = []
    ask = nd_frame(SOLICIT, "fd00::1", "ff02::1:ff00:10", "fd00::10", h1.mac, h1.mac, 0x3333FF000010)
    sent += switches.effects(controller.packet_in(h1.dpid, h1.port, ask))
    assert controller.fabric.hosts["h1"].ip6 == ("fd00::1",)
    answer = nd_frame(ADVERT, "fd00::10", "fd00::1", "fd00::10", h16.mac, h16.mac, h1.mac, 0x60000000)
    sent += switches.effects(controller.packet_in(h16.dpid, h16.port, answer))
    assert controller.fabric.hosts["h16"].ip6 == ("fd00::10",)
    assert [d for d, _, _ in sent][-1] == h1.dpid  # the advertisement went back to the host that asked
    sent.clear()
    sent += switches.effects(controller.packet_in(h1.dpid, h1.port, ask))  # known now: answered at once
    [(dpid, _, frame)] = sent
    reply = parse_nd(frame)
    assert dpid == h1.dpid and (reply.kind, reply.target, reply.lladdr, reply.eth_dst) == (
        ADVERT, "fd00::10", h16.mac, h1.mac)


def test_an_address_seen_before_the_hosts_arp_is_its_own_once_the_arp_comes() -> None:
    from srfabric.controller.packets import ARP_REQUEST, ArpPacket

    controller, switches = controller_with(demo_fabric())
    h1 = controller.fabric.hosts.pop("h1")
    ask = nd_frame(SOLICIT, "fd00::1", "ff02::1:ff00:10", "fd00::10", h1.mac, h1.mac, 0x3333FF000010)
    switches.effects(controller.packet_in(h1.dpid, h1.port, ask))
    assert controller.fabric.host_by_ip6("fd00::1") is None  # no host to give it to yet
    arp = ArpPacket(ARP_REQUEST, h1.mac, h1.ip, 0, "10.0.0.2", h1.mac, 0xFFFFFFFFFFFF)
    switches.effects(controller.packet_in(h1.dpid, h1.port, arp.to_bytes()))
    learned = controller.fabric.host_by_ip6("fd00::1")
    assert learned is not None and (learned.mac, learned.ip) == (h1.mac, h1.ip)


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("proxy", [False, True])
def test_every_address_of_a_host_with_several_crosses_the_whole_chain(codec: str, proxy: bool) -> None:
    fabric = dual_stack()
    for name, extra in (("h1", "fd00::a1"), ("h16", "fd00::b0")):
        fabric.add_host(replace(fabric.hosts[name], ip6=(*fabric.hosts[name].ip6, extra)))
    if proxy:
        for name in ("v1", "v4", "v7"):
            fabric.add_function(replace(fabric.functions[name], proxy=True))
    state = compile_state(fabric, [Chain("six", TCP6, ("v1", "v4", "v7"), "h1", "h16", 1)], codec)
    h1, h16 = fabric.hosts["h1"], fabric.hosts["h16"]
    for src in h1.ip6:
        for dst in h16.ip6:
            packet = Packet(eth_src=h1.mac, eth_dst=h16.mac, eth_type=0x86DD, ip_proto=6, tp_src=1, tp_dst=5201,
                            ipv6_src=ipv6_number(src), ipv6_dst=ipv6_number(dst))
            result = walk(fabric, state.entries, packet, h1.dpid, h1.port, groups=state.groups)
            assert result.functions == ["v1", "v4", "v7"] and [n for n, _ in result.delivered] == ["h16"], (src, dst)


def controller_with(fabric: Fabric) -> tuple[ControllerCore, FakeSwitches]:
    """The decision core over ``fabric``, every switch connected; its packet-outs land in fake switches."""
    controller = ControllerCore(ControllerConfig())
    controller.fabric = fabric
    switches = FakeSwitches()
    connected(controller, switches, {dpid: [] for dpid in fabric.switches})
    return controller, switches


def test_neighbour_discovery_moves_addresses_lets_owners_check_them_and_is_bounded() -> None:
    sent: list[tuple[int, int, bytes]] = []
    controller, switches = controller_with(dual_stack())
    h1, h2 = controller.fabric.hosts["h1"], controller.fabric.hosts["h2"]
    # h1 checks its own address (DAD, from ::): the controller keeps quiet.
    probe = nd_frame(SOLICIT, "::", "ff02::1:ff00:1", h1.ip6[0], h1.mac, h1.mac, 0x3333FF000001)
    sent += switches.effects(controller.packet_in(h1.dpid, h1.port, probe))
    assert sent == []
    # h2 takes over h1's address (as ARP moves an IPv4 one).
    advert = nd_frame(ADVERT, h1.ip6[0], "ff02::1", h1.ip6[0], h2.mac, h2.mac, 0x333300000001)
    sent += switches.effects(controller.packet_in(h2.dpid, h2.port, advert))
    assert controller.fabric.hosts["h1"].ip6 == () and h1.ip6[0] in controller.fabric.hosts["h2"].ip6
    # No host gets more than a few addresses, however many it claims.
    for index in range(100):
        claim = nd_frame(SOLICIT, f"fd00::1:{index:x}", "ff02::1:ff00:10", "fd00::10", h1.mac, h1.mac,
                         0x3333FF000010)
        sent += switches.effects(controller.packet_in(h1.dpid, h1.port, claim))
    assert len(controller.fabric.hosts["h1"].ip6) == 8


def test_an_advert_to_an_sr_unaware_function_goes_to_its_own_mac() -> None:
    fabric = dual_stack()
    fabric.add_function(replace(fabric.functions["v4"], proxy=True))
    sent: list[tuple[int, int, bytes]] = []
    controller, switches = controller_with(fabric)
    egress, router = fabric.functions["v4"].egress, 0xF2AA00000001
    h16 = fabric.hosts["h16"]
    # Under mac-nibble its frames reach the controller with a plain source MAC; its option says who it is.
    ask = nd_frame(SOLICIT, "fd00::99", "ff02::1:ff00:10", h16.ip6[0], router, 0x025352000001, 0x3333FF000010)
    sent += switches.effects(controller.packet_in(egress[0], egress[1], ask))
    [(_, _, frame)] = sent
    assert parse_nd(frame).eth_dst == router
