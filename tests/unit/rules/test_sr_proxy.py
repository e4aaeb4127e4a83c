"""SR proxy: SR-unaware functions (networking-sfc's correlation None) get frames without a header, addressed
to their MAC, may route and NAT, and the chain goes on from their egress port. Checked by walking packets
through functions that behave like a router and a source NAT (behaviour, not flow text)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from srfabric.errors import ModelError
from srfabric.model import Chain, FlowClassifier
from srfabric.model.fabric import Fabric
from srfabric.rules.compile import compile_state
from srfabric.rules.entries import Kind, ipv4_number
from srfabric.rules.hop_by_hop import compile_hop_by_hop
from srfabric.rules.proxy import PROXY_MAC
from srfabric_tools.simulate import Packet, Walk, walk
from tests.unit.rules.test_rules_walk import CODECS, demo_fabric

ROUTER_IN, ROUTER_OUT, NAT_IN = 0x02AA00000001, 0x02AA00000002, 0x02BB00000001
NAT_ADDRESS = "10.0.0.200"
UDP = FlowClassifier(protocol="udp", destination_port_range=(5001, 5001))


def proxied(fabric: Fabric, name: str, mac: int, rewrites: frozenset[str] = frozenset()) -> None:
    fabric.add_function(replace(fabric.functions[name], proxy=True, mac=mac, rewrites=rewrites))


def sr_fabric() -> Fabric:
    """The demo fat tree with v1 (edge e3) a router and v4 (edge e5) a source NAT, both SR-unaware."""
    fabric = demo_fabric()
    proxied(fabric, "v1", ROUTER_IN)
    proxied(fabric, "v4", NAT_IN, frozenset({"ip_src"}))
    return fabric


def seen(into: list[Packet], change):
    """A function that notes what it got and hands back ``change`` of it."""
    def function(packet: Packet) -> Packet:
        into.append(packet)
        return change(packet)
    return function


def router(packet: Packet) -> Packet:
    return replace(packet, eth_src=ROUTER_OUT, eth_dst=0x0200000000FF)


def nat(packet: Packet) -> Packet:
    return replace(packet, ipv4_src=ipv4_number(NAT_ADDRESS), eth_src=NAT_IN + 1)


def send(fabric: Fabric, chains: list[Chain], codec: str, src: str, dst_ip: str, behaviour) -> Walk:
    state = compile_state(fabric, chains, codec)
    host = fabric.hosts[src]
    packet = Packet(eth_src=host.mac, eth_dst=0x0200000000FE, ipv4_src=ipv4_number(host.ip),
                    ipv4_dst=ipv4_number(dst_ip), ip_proto=17, tp_src=40000, tp_dst=5001)
    return walk(fabric, state.entries, packet, host.dpid, host.port, groups=state.groups, behaviour=behaviour)


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("destination", ["h16", None])
def test_a_chain_crosses_a_router_and_a_nat_that_get_plain_frames(codec: str, destination: str | None) -> None:
    fabric = sr_fabric()
    into_router: list[Packet] = []
    into_nat: list[Packet] = []
    behaviour = {"v1": seen(into_router, router), "v4": seen(into_nat, nat)}
    chain = Chain("c", UDP, ("v1", "v3", "v4", "v7"), "h1", destination, 1)
    result = send(fabric, [chain], codec, "h1", fabric.hosts["h16"].ip, behaviour)
    assert result.functions == ["v1", "v3", "v4", "v7"]
    assert [name for name, _ in result.delivered] == ["h16"]
    for got, mac in ((into_router, ROUTER_IN), (into_nat, NAT_IN)):
        (packet,) = got
        assert (packet.vlans, packet.mpls, packet.eth_dst) == ([], [], mac)
        assert packet.eth_src >> 44 == 0  # no hop count: nothing reads it as a header
    assert into_router[0].eth_src == (PROXY_MAC if codec == "mac-nibble" else fabric.hosts["h1"].mac)
    arrived = result.delivered[0][1]
    assert arrived.ipv4_src == ipv4_number(NAT_ADDRESS) and (arrived.vlans, arrived.mpls) == ([], [])
    assert arrived.eth_dst == fabric.hosts["h16"].mac


@pytest.mark.parametrize("codec", CODECS)
def test_the_proxy_costs_one_entry_per_function_and_one_per_chain_after_it(codec: str) -> None:
    fabric = sr_fabric()
    chain = Chain("c", UDP, ("v1", "v4"), "h1", "h16", 1)
    state = compile_state(fabric, [chain], codec)
    proxies = {(dpid, e.actions[-1]) for dpid, entries in state.entries.items() for e in entries
               if e.kind == Kind.PROXY}
    assert {dpid for dpid, _ in proxies} == {fabric.functions["v1"].ingress[0], fabric.functions["v4"].ingress[0]}
    after = [(dpid, e) for dpid, entries in state.entries.items() for e in entries
             if e.kind == Kind.CHAIN and e.table == 1]
    ingress_ports = {(dpid, dict((n, v) for n, v, _ in e.match)["in_port"]) for dpid, e in after}
    h1 = fabric.hosts["h1"]
    assert ingress_ports == {(h1.dpid, h1.port), fabric.functions["v1"].egress, fabric.functions["v4"].egress}
    # No transit switch holds anything of the chain.
    touched = {dpid for dpid, entries in state.entries.items() for e in entries if e.kind in (Kind.CHAIN, Kind.PROXY)}
    assert all(fabric.switches[d].role == "edge" for d in touched)


@pytest.mark.parametrize("codec", CODECS)
def test_a_function_on_the_sources_switch_gets_no_header_at_all(codec: str) -> None:
    fabric = demo_fabric()
    h5 = fabric.hosts["h5"]  # on e3 with v1 and v2
    assert fabric.functions["v1"].ingress[0] == h5.dpid
    proxied(fabric, "v1", ROUTER_IN)
    proxied(fabric, "v2", NAT_IN, frozenset({"ip_src"}))
    got: list[Packet] = []
    chain = Chain("c", UDP, ("v1", "v2"), "h5", "h16", 1)
    result = send(fabric, [chain], codec, "h5", fabric.hosts["h16"].ip,
                  {"v1": seen(got, router), "v2": seen(got, nat)})
    assert result.functions == ["v1", "v2"] and [n for n, _ in result.delivered] == ["h16"]
    # Under mac-nibble what a function sends gets a plain source MAC (its own might read as a header).
    after_router = PROXY_MAC if codec == "mac-nibble" else ROUTER_OUT
    assert [(p.eth_src, p.eth_dst, p.vlans, p.mpls) for p in got] == [
        (h5.mac, ROUTER_IN, [], []), (after_router, NAT_IN, [], [])]


@pytest.mark.parametrize("codec", CODECS)
def test_after_an_sr_unaware_last_function_default_routes_take_over(codec: str) -> None:
    fabric = sr_fabric()
    chain = Chain("open", UDP, ("v3", "v4"), "h1", None, 1)
    for dst in ("h16", "h9", "h2"):
        result = send(fabric, [chain], codec, "h1", fabric.hosts[dst].ip, {"v4": nat})
        assert result.functions == ["v3", "v4"] and [n for n, _ in result.delivered] == [dst], dst
    # Replies to the NAT's address reach it once the controller knows that address (a host at its egress port).
    state = compile_state(fabric, [chain], codec)
    assert not [e for e in state.entries[fabric.functions["v4"].egress[0]] if e.table == 4 and e.kind == Kind.CHAIN]


def test_two_chains_a_nat_cannot_tell_apart_are_refused_by_name() -> None:
    fabric = sr_fabric()
    one = Chain("one", UDP, ("v4",), "h1", "h16", 1)
    two = Chain("two", UDP, ("v4",), "h2", "h16", 2)
    with pytest.raises(ModelError, match=r"chain two.*v4 rewrites ip_src"):
        compile_state(fabric, [one, two], "mac-nibble")
    # Told apart by a field the NAT keeps, they are fine.
    compile_state(fabric, [one, replace(two, classifier=FlowClassifier(protocol="udp",
                                                                       destination_port_range=(5002, 5002)))],
                  "mac-nibble")


def test_a_transparent_function_may_not_declare_rewrites() -> None:
    fabric = demo_fabric()
    with pytest.raises(ModelError, match=r"v1.rewrites.*SR-unaware"):
        fabric.add_function(replace(fabric.functions["v1"], rewrites=frozenset({"ip_src"})))
    with pytest.raises(ModelError, match=r"v1.rewrites.*ttl not among"):
        fabric.add_function(replace(fabric.functions["v1"], proxy=True, rewrites=frozenset({"ttl"})))


def test_hop_by_hop_refuses_a_chain_through_a_function_that_rewrites_it() -> None:
    fabric = sr_fabric()
    problems: list = []
    compile_hop_by_hop(fabric, [Chain("c", UDP, ("v4",), "h1", "h16", 1)], problems)
    assert [str(p) for p in problems] and "v4" in str(problems[0]) and "rewrites" in str(problems[0])


@pytest.mark.parametrize("codec", CODECS)
def test_what_a_function_sends_on_its_own_is_not_taken_for_a_forged_header(codec: str) -> None:
    """A NAT's replies leave by its ingress port with its own MAC, whose top nibble may look like a hop count."""
    fabric = sr_fabric()
    h1, h16 = fabric.hosts["h1"], fabric.hosts["h16"]
    state = compile_state(fabric, [], codec)
    reply = Packet(eth_src=0xF20000000001, eth_dst=h1.mac, ipv4_src=ipv4_number(h16.ip), ipv4_dst=ipv4_number(h1.ip),
                   ip_proto=17, tp_src=5001, tp_dst=40000)
    result = walk(fabric, state.entries, reply, *fabric.functions["v4"].ingress, groups=state.groups)
    assert [name for name, _ in result.delivered] == ["h1"]


def test_ways_that_part_after_a_shared_function_are_balanced_again_where_it_hands_frames_back() -> None:
    from srfabric.model.chain import Alternative

    fabric = sr_fabric()
    chain = Chain("lb", UDP, (), "h1", "h16", 1, alternatives=(Alternative(("v1", "v3"), 1),
                                                                Alternative(("v1", "v5"), 3)))
    state = compile_state(fabric, [chain], "mac-nibble")
    egress = fabric.functions["v1"].egress
    [group] = [g for g in state.groups[egress[0]] if g.type == "select"]
    assert sorted(b.weight for b in group.buckets) == [1, 3]
    seen = set()
    h1, h16 = fabric.hosts["h1"], fabric.hosts["h16"]
    for sport in range(40000, 40064):
        packet = Packet(eth_src=h1.mac, eth_dst=h16.mac, ipv4_src=ipv4_number(h1.ip), ipv4_dst=ipv4_number(h16.ip),
                        ip_proto=17, tp_src=sport, tp_dst=5001)
        result = walk(fabric, state.entries, packet, h1.dpid, h1.port, groups=state.groups)
        assert [n for n, _ in result.delivered] == ["h16"]
        seen.add(tuple(result.functions))
    assert seen == {("v1", "v3"), ("v1", "v5")}


def test_what_the_proxy_cannot_follow_is_refused_by_name() -> None:
    from srfabric.errors import RoutingError
    from srfabric.model.chain import Alternative

    fabric = sr_fabric()
    with pytest.raises(RoutingError, match="crosses SR-unaware function v1 twice"):
        compile_state(fabric, [Chain("twice", UDP, ("v1", "v4", "v1"), "h1", "h16", 1)], "mac-nibble")
    uneven = Chain("uneven", UDP, (), "h1", "h16", 1, alternatives=(Alternative(("v2", "v1", "v3")),
                                                                    Alternative(("v1", "v5"))))
    with pytest.raises(RoutingError, match="every way before it must go on to every way after it"):
        compile_state(fabric, [uneven], "mac-nibble")


@pytest.mark.parametrize("codec", CODECS)
def test_chains_from_two_sources_through_one_function_that_keeps_the_addresses(codec: str) -> None:
    fabric = sr_fabric()
    chains = [Chain("a", UDP, ("v1",), "h1", "h16", 1), Chain("b", UDP, ("v1",), "h2", "h16", 2)]
    for src in ("h1", "h2"):
        result = send(fabric, chains, codec, src, fabric.hosts["h16"].ip, {"v1": router})
        assert result.functions == ["v1"] and [n for n, _ in result.delivered] == ["h16"]


def test_hop_by_hop_addresses_frames_to_a_proxied_router() -> None:
    fabric = sr_fabric()
    got: list[Packet] = []
    tables = compile_hop_by_hop(fabric, [Chain("c", UDP, ("v1",), "h1", "h16", 1)])
    h1, h16 = fabric.hosts["h1"], fabric.hosts["h16"]
    packet = Packet(eth_src=h1.mac, eth_dst=h16.mac, ipv4_src=ipv4_number(h1.ip), ipv4_dst=ipv4_number(h16.ip),
                    ip_proto=17, tp_src=40000, tp_dst=5001)
    result = walk(fabric, tables, packet, h1.dpid, h1.port, behaviour={"v1": seen(got, lambda p: replace(
        p, eth_src=ROUTER_OUT, eth_dst=h16.mac))})
    assert [n for n, _ in result.delivered] == ["h16"] and got[0].eth_dst == ROUTER_IN


def test_a_functions_time_triggered_mark_is_cleared_like_a_hosts() -> None:
    from srfabric.rules.compile import CompileCache

    fabric = sr_fabric()
    state = CompileCache("mac-nibble", tt_queue=6).state(fabric, [])
    h1, h16 = fabric.hosts["h1"], fabric.hosts["h16"]
    marked = Packet(eth_src=0xF20000000001, eth_dst=h16.mac, ipv4_src=ipv4_number(h1.ip),
                    ipv4_dst=ipv4_number(h16.ip), ip_proto=17, tp_src=1, tp_dst=2, ip_dscp=56)
    result = walk(fabric, state.entries, marked, *fabric.functions["v4"].egress, groups=state.groups)
    [(name, arrived)] = result.delivered
    assert name == "h16" and arrived.ip_dscp == 0 and {q for _, _, q in result.egress} == {0}


def test_the_controller_learns_a_nats_address_at_its_port_and_never_moves_a_host_there() -> None:
    from srfabric.controller.config import ControllerConfig
    from srfabric.controller.core import ControllerCore
    from srfabric.controller.packets import ARP_REQUEST, ArpPacket

    controller = ControllerCore(ControllerConfig())
    controller.fabric = sr_fabric()
    egress = controller.fabric.functions["v4"].egress

    def ask(mac: int, ip: str) -> None:
        frame = ArpPacket(ARP_REQUEST, mac, ip, 0, controller.fabric.hosts["h16"].ip, mac, 0xFFFFFFFFFFFF)
        controller.packet_in(egress[0], egress[1], frame.to_bytes())

    ask(0x02BB00000002, NAT_ADDRESS)
    ask(0x02BB00000003, NAT_ADDRESS)  # the NAT came back with another MAC: updated
    nat_host = controller.fabric.host_by_ip(NAT_ADDRESS)
    assert nat_host is not None and (nat_host.mac, (nat_host.dpid, nat_host.port)) == (0x02BB00000003, egress)
    h1 = controller.fabric.hosts["h1"]
    ask(0x02BB00000004, h1.ip)  # a known host's address from the function's port: h1 stays where it is
    assert controller.fabric.hosts["h1"] == h1


def test_a_port_is_of_an_sr_aware_function_or_of_an_sr_unaware_one_not_both() -> None:
    from srfabric.model.fabric import ServiceFunction

    fabric = sr_fabric()
    v1 = fabric.functions["v1"]
    with pytest.raises(ModelError, match=r"other.correlation: port .* is also a port of v1, which is SR-unaware"):
        fabric.add_function(ServiceFunction("other", v1.ingress, (v1.egress[0], 15)))


def test_the_chain_view_shows_a_new_run_of_headers_after_each_sr_unaware_function() -> None:
    from srfabric.api.resources.views import chain_view
    from srfabric.controller.controller import Controller

    controller = Controller()
    controller.fabric = sr_fabric()
    view = chain_view(controller, Chain("c", UDP, ("v1", "v4"), "h1", "h16", 1))
    starts = [(p["switch"], p["in_port"]) for p in view["paths"][0]["pathlets"]]
    functions = controller.fabric.functions
    names = {d: s.name for d, s in controller.fabric.switches.items()}
    h1 = controller.fabric.hosts["h1"]
    assert starts == [(names[h1.dpid], h1.port), (names[functions["v1"].egress[0]], functions["v1"].egress[1]),
                      (names[functions["v4"].egress[0]], functions["v4"].egress[1])]
    assert view["unrouted"] is None
