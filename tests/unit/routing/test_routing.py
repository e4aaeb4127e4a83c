"""Waypoint routing through service functions and pathlet splitting."""

from __future__ import annotations

import pytest

from srfabric.errors import RoutingError
from srfabric.model import Chain, FlowClassifier
from srfabric.model.topo import fat_tree, tsn_fig1
from srfabric.routing import Hop, Route, chain_route, split_pathlets


def demo_fabric():
    topo = fat_tree(4)
    for name, edge in [("v1", "e3"), ("v4", "e5"), ("v7", "e8")]:
        topo.add_function(name, edge)
    return topo, topo.to_fabric()


def test_tsn_fig1_route_uses_the_papers_ports() -> None:
    fabric = tsn_fig1().to_fabric()
    route = chain_route(fabric, Chain("f13", FlowClassifier(), (), "h1", "h3"))
    assert route.ports() == [3, 2]  # then s5 delivers to h3 on port 4
    assert route.delivery == (5, 4)


def test_chain_route_visits_functions_in_order() -> None:
    topo, fabric = demo_fabric()
    route = chain_route(fabric, Chain("c", FlowClassifier(), ("v1", "v4", "v7"), "h1", "h16"))
    into = [hop for hop in route.hops if hop.arrival in {f.egress for f in fabric.functions.values()}]
    assert [fabric.function_ports()[(h.dpid, h.port)].name for h in into] == ["v1", "v4", "v7"]
    # Every hop leaves from where the previous one arrived.
    position = route.entry
    for hop in route.hops:
        assert hop.dpid == position[0]
        position = hop.arrival
    assert position[0] == route.delivery[0]


def test_pathlets_cover_the_route_and_end_at_sre_switches() -> None:
    topo, fabric = demo_fabric()
    route = chain_route(fabric, Chain("c", FlowClassifier(), ("v1", "v4", "v7"), "h1", "h16"))
    edges = {d for d, s in fabric.switches.items() if s.role == "edge"}
    for capacity in (3, 4, 6, 11):
        pathlets = split_pathlets(route, capacity, lambda dpid: dpid in edges)
        ports = [p for pl in pathlets for p in (pl.first_port, *pl.encoded)]
        assert ports == route.ports()
        assert all(len(pl.encoded) <= capacity for pl in pathlets)
        assert all(pl.start[0] in edges for pl in pathlets)
    assert len(split_pathlets(route, 11, lambda dpid: dpid in edges)) == 2


def test_unsplittable_route_is_a_clear_error() -> None:
    hops = tuple(Hop(i, 1, (i + 1, 2)) for i in range(1, 8))
    route = Route((1, 5), hops, (8, 3))
    with pytest.raises(RoutingError, match="within 2 hops"):
        split_pathlets(route, 2, lambda dpid: dpid in (1, 8))


def test_unknown_function_and_disconnected_switch() -> None:
    topo, fabric = demo_fabric()
    with pytest.raises(RoutingError, match="unknown"):
        chain_route(fabric, Chain("c", FlowClassifier(), ("nope",), "h1", "h16"))
    fabric.remove_link(next(iter(fabric.links)))
    fabric.remove_link((0x101, 2))
    with pytest.raises(RoutingError, match="no path"):
        chain_route(fabric, Chain("c", FlowClassifier(), (), "h1", "h16"))
