"""Chains without a destination (networking-sfc's usual classifier: a logical source port only): traffic
crosses the chain's functions in order, then goes on to wherever its destination address leads. Checked by
walking packets through the compiled tables (behaviour, not flow text)."""

from __future__ import annotations

import asyncio

import pytest

from srfabric.errors import ModelError, RoutingError
from srfabric.model import Alternative, Chain, FlowClassifier
from srfabric.model.fabric import ServiceFunction
from srfabric.model.topo import fat_tree
from srfabric.rules.compile import compile_fabric, compile_state
from srfabric.rules.entries import Kind
from srfabric.rules.hop_by_hop import compile_hop_by_hop
from srfabric.rules.pipeline import TERMINATE
from srfabric_tools.simulate import walk
from tests.unit.rules.test_rules_walk import CODECS, demo_fabric, send, udp

UDP_5001 = FlowClassifier(protocol="udp", destination_port_range=(5001, 5001))


def open_chain(functions: tuple[str, ...] = ("v1", "v4"), **kwargs: object) -> Chain:
    return Chain("open", kwargs.pop("classifier", UDP_5001), functions, "h1", None, 1, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("codec", CODECS)
def test_traffic_crosses_the_chain_then_goes_where_its_address_leads(codec: str) -> None:
    fabric = demo_fabric()
    tables = compile_fabric(fabric, [open_chain()], codec)
    # h9 hangs off v4's switch (e5): its own edge delivers; h5, h16 and h2 are reached by a new header.
    for destination in ("h9", "h5", "h16", "h2", "h15"):
        packet = udp("h1", destination, 5001, fabric)
        result = send(fabric, tables, packet, "h1")
        assert result.functions == ["v1", "v4"], destination
        assert [name for name, _ in result.delivered] == [destination]
        arrived = result.delivered[0][1]
        assert (arrived.eth_src, arrived.eth_dst, arrived.vlans, arrived.mpls) == (
            packet.eth_src, packet.eth_dst, [], [])


@pytest.mark.parametrize("codec", CODECS)
def test_other_traffic_of_the_source_is_not_steered(codec: str) -> None:
    fabric = demo_fabric()
    tables = compile_state(fabric, [open_chain()], codec)
    for src, dst, dport in [("h1", "h5", 9999), ("h2", "h5", 5001), ("h5", "h1", 5001)]:
        result = send(fabric, tables, udp(src, dst, dport, fabric), src)
        assert result.functions == [] and [name for name, _ in result.delivered] == [dst]


@pytest.mark.parametrize("codec", CODECS)
def test_a_destination_prefix_narrows_the_chain(codec: str) -> None:
    fabric = demo_fabric()
    prefix = fabric.hosts["h5"].ip.rsplit(".", 1)[0] + ".0/24"
    chain = open_chain(classifier=FlowClassifier(protocol="udp", destination_ip_prefix=prefix))
    tables = compile_fabric(fabric, [chain], codec)
    inside = send(fabric, tables, udp("h1", "h5", 80, fabric), "h1")
    assert inside.functions == ["v1", "v4"] and [n for n, _ in inside.delivered] == ["h5"]


@pytest.mark.parametrize("codec", CODECS)
def test_balanced_paths_each_go_on_from_their_own_last_function(codec: str) -> None:
    fabric = demo_fabric()
    chain = open_chain((), alternatives=(Alternative(("v1", "v7")), Alternative(("v2", "v5"))))
    state = compile_state(fabric, [chain], codec)
    seen = set()
    for sport in range(40000, 40040):
        packet = udp("h1", "h9", 5001, fabric)
        packet.tp_src = sport
        h1 = fabric.hosts["h1"]
        result = walk(fabric, state.entries, packet, h1.dpid, h1.port, groups=state.groups)
        assert [n for n, _ in result.delivered] == ["h9"]
        seen.add(tuple(result.functions))
    assert seen == {("v1", "v7"), ("v2", "v5")}


def test_two_chains_ending_at_one_function_share_its_exit_entries() -> None:
    fabric = demo_fabric()
    one = compile_fabric(fabric, [open_chain()], "mac-nibble")
    other = Chain("other", FlowClassifier(protocol="tcp"), ("v2", "v4"), "h2", None, 2)
    both = compile_fabric(fabric, [open_chain(), other], "mac-nibble")
    e5, port = fabric.functions["v4"].egress
    exits = [e for e in both[e5]
             if e.kind == Kind.ROUTE and e.table == TERMINATE and ("in_port", port, None) in e.match]
    assert len(exits) == len([h for h in fabric.hosts.values() if h.dpid != e5])
    assert len(both[e5]) == len(one[e5])  # the second chain's ingress is on h2's edge, e1: nothing new on e5


@pytest.mark.parametrize("codec", CODECS)
def test_a_chain_that_needs_a_second_header_is_refused_by_name(codec: str) -> None:
    with pytest.raises(RoutingError, match=r"without a destination must fit one header: its \d+ hops .* need 2"):
        compile_fabric(demo_fabric(), [open_chain(("v1", "v4", "v7"))], codec)


@pytest.mark.parametrize("codec", CODECS)
def test_a_higher_chain_through_the_same_function_keeps_its_frames(codec: str) -> None:
    """B (above the open chain, to h9 on v4's switch) ends where the open chain's frames are sent on."""
    fabric = demo_fabric()
    above = Chain("B", FlowClassifier(protocol="udp", destination_port_range=(5001, 5001)), ("v1", "v4"), "h1",
                  "h9", 2, priority=1)
    tables = compile_fabric(fabric, [open_chain(classifier=FlowClassifier(protocol="udp")), above], codec)
    for dport, destination in ((5001, "h9"), (5002, "h9"), (5002, "h16")):
        result = send(fabric, tables, udp("h1", destination, dport, fabric), "h1")
        assert result.functions == ["v1", "v4"] and [n for n, _ in result.delivered] == [destination]


def test_a_last_function_on_a_switch_that_cannot_write_headers_is_refused_by_name() -> None:
    topo = fat_tree(4)
    topo.add_function("v1", "e3")
    fabric = topo.to_fabric()
    core = next(d for d, sw in fabric.switches.items() if sw.role == "core")
    free = max(port for (dpid, port) in fabric.links if dpid == core) + 1
    fabric.add_function(ServiceFunction("dpi", (core, free), (core, free + 1)))
    with pytest.raises(RoutingError, match=r"last function hands frames back at switch .* cannot write headers"):
        compile_fabric(fabric, [open_chain(("v1", "dpi"))], "mac-nibble")


def test_a_chain_without_destination_or_function_and_hop_by_hop_are_refused() -> None:
    fabric = demo_fabric()
    with pytest.raises(ModelError, match="needs a service function on every path"):
        compile_fabric(fabric, [open_chain(())], "mac-nibble")
    with pytest.raises(ModelError, match="hop-by-hop rules follow a chain to its destination"):
        compile_hop_by_hop(fabric, [open_chain()])


@pytest.mark.parametrize("codec", CODECS)
def test_a_chain_with_a_destination_leaves_traffic_to_other_hosts_alone(codec: str) -> None:
    """networking-sfc's logical_destination_port selects traffic to that port: the ingress matches its address."""
    fabric = demo_fabric()
    to_h16 = Chain("to-h16", UDP_5001, ("v1", "v4"), "h1", "h16", 1)
    tables = compile_state(fabric, [to_h16], codec)
    assert send(fabric, tables, udp("h1", "h16", 5001, fabric), "h1").functions == ["v1", "v4"]
    other = send(fabric, tables, udp("h1", "h5", 5001, fabric), "h1")
    assert other.functions == [] and [n for n, _ in other.delivered] == ["h5"]


def test_reactive_setup_refuses_a_chain_without_destination_by_name() -> None:
    from srfabric.controller.config import ControllerConfig
    from srfabric.controller.controller import Controller

    controller = Controller(ControllerConfig(reactive=True))
    controller.fabric = demo_fabric()
    with pytest.raises(ModelError, match="reactive: chain open has no destination"):
        asyncio.run(controller.add_chain(open_chain()))
    assert controller.chains == {}


def test_hop_by_hop_rules_too_leave_traffic_to_other_hosts_alone() -> None:
    fabric = demo_fabric()
    tables = compile_hop_by_hop(fabric, [Chain("to-h16", UDP_5001, ("v1", "v4"), "h1", "h16", 1)])
    assert send(fabric, tables, udp("h1", "h16", 5001, fabric), "h1").functions == ["v1", "v4"]
    other = send(fabric, tables, udp("h1", "h5", 5001, fabric), "h1")
    assert other.functions == [] and [n for n, _ in other.delivered] == ["h5"]
