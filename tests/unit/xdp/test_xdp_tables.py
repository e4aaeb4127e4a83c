"""Translation of flow entries into XDP map contents, and the pure layouts (no root needed)."""

from __future__ import annotations

import pytest

from srfabric.rules.compile import compile_state
from srfabric.rules.entries import FlowEntry, Kind, Output, PopVlan, SetField, cookie, match
from srfabric.rules.pipeline import HOST_IN
from srfabric.xdp import layout
from srfabric.xdp.routes import route_table
from srfabric.xdp.tables import XdpTableError, xdp_tables
from srfabric_tools.demo import demo_chains, demo_topology


@pytest.mark.parametrize("codec", ["mac-nibble", "mac-vlan-mpls"])
def test_every_switch_of_the_demo_translates(codec: str) -> None:
    spec, source, destination = demo_topology(4)
    fabric = spec.to_fabric()
    state = compile_state(fabric, demo_chains(source, destination), codec)
    for dpid, entries in state.entries.items():
        translated = xdp_tables(entries, state.groups.get(dpid, ()))
        fabric_ports = {port for (d, port) in fabric.links if d == dpid}
        assert fabric_ports <= translated.trusted_ports
        local = [h for h in fabric.hosts.values() if h.dpid == dpid]
        assert len(translated.deliver) == (len(local) if local else 0)
        if local:  # a route per host: one output per local host, one header per other switch with hosts (its group's)
            others = {h.dpid for h in fabric.hosts.values()} - {dpid}
            assert len(translated.routes) == len(fabric.hosts)
            assert len(set(translated.routes.values())) == len(others) + len(local)
    ingress = fabric.hosts[source].dpid
    assert len(xdp_tables(state.entries[ingress], state.groups[ingress]).wild) >= 3  # the three chains' classifiers


def test_a_route_to_a_group_that_is_not_indirect_or_missing_is_refused_by_name() -> None:
    from srfabric.rules.entries import Bucket, Group, GroupEntry

    route = FlowEntry(HOST_IN, 100, match(eth_type=0x0800, ipv4_dst=0x0A000002), (Group(7),), cookie=cookie(Kind.ROUTE))
    with pytest.raises(XdpTableError, match="group 7 is not installed"):
        xdp_tables([route])
    select = GroupEntry(7, "select", (Bucket((Output(1),), 1), Bucket((Output(2),), 1)))
    with pytest.raises(XdpTableError, match="indirect groups of one bucket, or all groups of 1 to 4 copies"):
        xdp_tables([route], [select])
    copies = GroupEntry(7, "all", (Bucket((SetField("eth_src", 0x21), Output(1))), Bucket((SetField("eth_src", 0x31),
                                                                                             Output(2)))))
    with pytest.raises(XdpTableError, match="a route or chain hands its frames to an indirect group"):
        xdp_tables([route], [copies])


def chain_entry(priority: int, actions: tuple, **fields: int | tuple[int, int]) -> FlowEntry:
    return FlowEntry(HOST_IN, priority, match(**fields), actions, cookie=cookie(Kind.CHAIN, 1))


def test_wildcards_keep_priority_order_and_masks() -> None:
    low = chain_entry(100, (Output(2),), eth_type=0x0800, ip_proto=17, udp_dst=(5000, 0xFFF8))
    high = chain_entry(200, (SetField("eth_src", 0x200000000012), Output(3)), eth_type=0x0800, ip_proto=6)
    tables = xdp_tables([low, high])
    assert [rule[32] for rule in tables.wild] == [1, 0]  # action index of `high` first
    mask = tables.wild[1][16:32]
    assert mask == layout.flow_key(proto=0xFF, dport=0xFFF8, stage=0xFF)


def test_entries_without_an_xdp_form_are_refused_by_name() -> None:
    popping = chain_entry(200, (PopVlan(), Output(2)), eth_type=0x0800)
    with pytest.raises(XdpTableError, match="priority=200"):
        xdp_tables([popping])
    arp = chain_entry(200, (Output(2),), eth_type=0x0806)
    with pytest.raises(XdpTableError, match="IPv4 only"):
        xdp_tables([arp])
    many = [chain_entry(300, (Output(2),), eth_type=0x0800, ip_proto=17, udp_dst=p) for p in range(65)]
    with pytest.raises(XdpTableError, match="exceed the XDP table's 64"):
        xdp_tables(many)


def test_route_table_mix_is_mostly_slash_24_and_seeded() -> None:
    table = route_table(20_000, seed=3)
    share = sum(1 for prefix, _ in table if prefix.endswith("/24")) / len(table)
    assert 0.5 < share < 0.6
    assert table[:5] == route_table(5, seed=3)



def test_a_chain_balanced_on_lb_fields_translates_to_masked_rules() -> None:
    from srfabric.model import Alternative, Chain, FlowClassifier
    from tests.unit.rules.test_rules_walk import demo_fabric

    fabric = demo_fabric()
    chain = Chain("lb", FlowClassifier(protocol="udp", destination_port_range=(10000, 10000)), (), "h1", "h16", 9,
                  alternatives=(Alternative(("v1",), 1), Alternative(("v2",), 3)), lb_fields=("udp_src",))
    state = compile_state(fabric, [chain], "mac-nibble")
    ingress = fabric.hosts["h1"].dpid
    wild = xdp_tables(state.entries[ingress], state.groups[ingress]).wild
    assert len(wild) == 16
    # Each rule keeps the classifier's fields and the destination's address, and adds the low four bits of the
    # UDP source port.
    assert {rule[16:32] for rule in wild} == {layout.flow_key(dst=0xFFFFFFFF, proto=0xFF, sport=0xF, dport=0xFFFF,
                                                              stage=0xFF, in_port=0xFFFF)}


def test_the_gateway_is_address_0_in_routes_restore_and_delivery() -> None:
    from srfabric.model import Chain, FlowClassifier
    from tests.unit.rules.test_rules_walk import demo_fabric

    fabric = demo_fabric()
    gateway = fabric.hosts["h16"]
    fabric.set_gateway(gateway.ip)
    chain = Chain("open", FlowClassifier(protocol="udp"), ("v1", "v4"), "h1", None, 1)  # v4 on h9's switch, e5
    state = compile_state(fabric, [chain], "mac-nibble")
    everything = layout.ipv4(0)
    for dpid, entries in state.entries.items():
        translated = xdp_tables(entries, state.groups.get(dpid, ()))
        if dpid in {h.dpid for h in fabric.hosts.values()}:
            assert everything in translated.routes and translated.restore[everything] == layout.mac_value(
                gateway.mac)
        assert (everything in translated.deliver) == (dpid == gateway.dpid)
    exit_switch = fabric.hosts["h9"].dpid
    at_exit = xdp_tables(state.entries[exit_switch], state.groups[exit_switch])
    by_stage = [rule for rule in at_exit.wild if rule[13] == layout.STAGE_DELIVER]  # the key's stage byte
    assert len(by_stage) == 1  # what v4 hands back and no host takes: on to the gateway, by v4's egress port


@pytest.mark.parametrize("codec", ["mac-nibble", "mac-vlan-mpls"])
def test_the_sr_proxy_is_refused_by_name(codec: str) -> None:
    from dataclasses import replace

    spec, _, _ = demo_topology(4)
    fabric = spec.to_fabric()
    function = next(iter(fabric.functions.values()))
    fabric.add_function(replace(function, proxy=True))
    state = compile_state(fabric, [], codec)
    with pytest.raises(XdpTableError, match="SR proxy .*correlation None.* not in the XDP data plane"):
        xdp_tables(state.entries[function.ingress[0]], state.groups.get(function.ingress[0], ()))


def redundant_state(time_triggered: bool):  # type: ignore[no-untyped-def]
    from srfabric.model.stream import SteeredStream
    from srfabric.model.topo import tsn_fig1
    from srfabric.rules.compile import CompileCache

    fabric = tsn_fig1().to_fabric()
    stream = SteeredStream("cam", 1, "h1", "h3", ("s1", "s2", "s5"), time_triggered=time_triggered,
                           second_path=("s1", "s3", "s4", "s5"))
    return fabric, CompileCache("mac-nibble", tt_queue=6).state(fabric, [], streams=[stream])


def test_a_redundant_streams_group_becomes_one_copy_per_path_for_the_replicator() -> None:
    fabric, state = redundant_state(time_triggered=False)
    names = {switch.name: dpid for dpid, switch in fabric.switches.items()}
    talker, listener = fabric.hosts["h1"], fabric.hosts["h3"]
    at_talker = xdp_tables(state.entries[names["s1"]], state.groups.get(names["s1"], ()))
    copies = at_talker.replicas[(talker.port, listener.mac)]
    ports = {b: port for (a, port), (b, _) in fabric.links.items() if a == names["s1"]}
    assert sorted(port for port, _ in copies) == sorted([ports[names["s2"]], ports[names["s3"]]])
    assert len({header for _, header in copies}) == 2  # each path its own header
    at_listener = xdp_tables(state.entries[names["s5"]], state.groups.get(names["s5"], ()))
    assert at_listener.replicas == {}  # its R-TAG delivery is the edge's elimination: nothing to write


def test_a_time_triggered_redundant_stream_is_refused_by_name_on_xdp() -> None:
    fabric, state = redundant_state(time_triggered=True)
    s1 = next(dpid for dpid, switch in fabric.switches.items() if switch.name == "s1")
    with pytest.raises(XdpTableError, match="no egress queues"):
        xdp_tables(state.entries[s1], state.groups.get(s1, ()))


def stream_state(tt_queue: int | None):  # type: ignore[no-untyped-def]
    from srfabric.model.stream import SteeredStream
    from srfabric.model.topo import tsn_fig1
    from srfabric.rules.compile import CompileCache

    fabric = tsn_fig1().to_fabric()
    stream = SteeredStream("cam", 1, "h1", "h3", ("s1", "s2", "s5"), udp_dst=6000)
    s1 = next(dpid for dpid, switch in fabric.switches.items() if switch.name == "s1")
    return s1, CompileCache("mac-nibble", tt_queue=tt_queue).state(fabric, [], streams=[stream])


def test_a_time_triggered_stream_steers_at_its_talkers_edge_without_a_queue() -> None:
    s1, state = stream_state(tt_queue=None)
    translated = xdp_tables(state.entries[s1], state.groups.get(s1, ()))
    key = layout.flow_key(src="10.0.0.1", dst="10.0.0.3", dport=6000, proto=17, stage=layout.STAGE_HOST_IN,
                          in_port=1)
    assert any(rule[:16] == key for rule in translated.wild)  # its classifier, exact on its fields


def test_a_stream_that_chooses_a_queue_is_refused_naming_the_setting() -> None:
    s1, state = stream_state(tt_queue=6)
    with pytest.raises(XdpTableError, match="no egress queues .* --tt-queue -1"):
        xdp_tables(state.entries[s1], state.groups.get(s1, ()))
