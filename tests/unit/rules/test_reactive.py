"""Reactive flow setup, checked by walking packets through fake switches."""

from __future__ import annotations

import ipaddress
from dataclasses import replace

import pytest

from srfabric.controller.packets import parse_five_tuple
from srfabric.errors import DecodingError, RoutingError
from srfabric.model.flow import FiveTuple
from srfabric.model.topo import fat_tree
from srfabric.routing.paths import host_route
from srfabric.rules.compile import compile_fabric
from srfabric.rules.entries import FlowEntry, Kind
from srfabric.rules.reactive import RouteCache, flow_entries, reactive_tables
from srfabric_tools.simulate import Packet, walk

STEERINGS = ["source-routing", "hop-by-hop"]


def packet(fabric, src: str, dst: str, sport: int = 40000) -> Packet:
    s, d = fabric.hosts[src], fabric.hosts[dst]
    return Packet(eth_src=s.mac, eth_dst=d.mac, ipv4_src=int(ipaddress.IPv4Address(s.ip)),
                  ipv4_dst=int(ipaddress.IPv4Address(d.ip)), ip_proto=17, tp_src=sport, tp_dst=5001)


def with_flows(tables, placed):
    merged = {dpid: list(entries) for dpid, entries in tables.items()}
    for dpid, entry in placed:
        merged[dpid].append(entry)
    return merged


@pytest.mark.parametrize("steering", STEERINGS)
@pytest.mark.parametrize("codec", ["mac-nibble", "mac-vlan-mpls"])
@pytest.mark.parametrize(("src", "dst", "switches"), [("h1", "h2", 1), ("h1", "h3", 3), ("h1", "h16", 5)])
def test_first_packet_goes_to_the_controller_then_the_flow_is_delivered_unchanged(
        steering: str, codec: str, src: str, dst: str, switches: int) -> None:
    fabric = fat_tree(4).to_fabric()
    tables = reactive_tables(compile_fabric(fabric, [], codec, steering=steering), steering)
    sent = packet(fabric, src, dst)
    entry = (fabric.hosts[src].dpid, fabric.hosts[src].port)
    first = walk(fabric, tables, sent, *entry)
    assert first.to_controller == [entry[0]] and not first.delivered
    flow = FiveTuple(fabric.hosts[src].ip, fabric.hosts[dst].ip, 17, 40000, 5001)
    placed = flow_entries(fabric, flow, entry, codec, steering)
    assert placed[-1][0] == entry[0], "the ingress entry is sent last"
    assert len({dpid for dpid, _ in placed}) == (1 if steering == "source-routing" else switches)
    assert all(e.kind == Kind.FLOW for _, e in placed)
    after = with_flows(tables, placed)
    done = walk(fabric, after, packet(fabric, src, dst), *entry)
    assert done.delivered == [(dst, sent)] and not done.to_controller
    other = walk(fabric, after, packet(fabric, src, dst, sport=40001), *entry)
    assert other.to_controller == [entry[0]], "another flow between the same hosts is set up on its own"


def test_chains_stay_proactive_and_default_routes_go() -> None:
    fabric = fat_tree(4).to_fabric()
    for steering in STEERINGS:
        tables = reactive_tables(compile_fabric(fabric, [], "mac-nibble", steering=steering), steering)
        assert not any(e.kind == Kind.ROUTE for entries in tables.values() for e in entries)


def test_unknown_destination_is_refused_by_field() -> None:
    fabric = fat_tree(4).to_fabric()
    h1 = fabric.hosts["h1"]
    with pytest.raises(RoutingError, match="ipv4_dst"):
        flow_entries(fabric, FiveTuple(h1.ip, "192.0.2.9", 6, 1, 2), (h1.dpid, h1.port), "mac-nibble",
                     "source-routing")


@pytest.mark.parametrize(("frame", "field"), [
    (b"\x00" * 10, "frame"),
    (bytes(12) + b"\x86\xdd" + bytes(40), "frame"),
    (bytes(12) + b"\x08\x00" + b"\x45" + bytes(5), "frame"),
    (bytes(12) + b"\x88\x47" + b"\x00\x00\x00\x40", "frame"),
])
def test_bad_frames_are_refused_by_name(frame: bytes, field: str) -> None:
    with pytest.raises(DecodingError) as caught:
        parse_five_tuple(frame)
    assert caught.value.field == field


def test_five_tuple_is_read_through_a_vlan_and_mpls_header() -> None:
    ip = bytes.fromhex("4500001c00000000401100000a0000010a000002") + (7).to_bytes(2, "big") + (9).to_bytes(2, "big")
    frame = bytes(12) + b"\x81\x00" + b"\x00\x05" + b"\x88\x47" + b"\x00\x01\x00\x40" + b"\x00\x02\x01\x40" + ip
    assert parse_five_tuple(frame) == FiveTuple("10.0.0.1", "10.0.0.2", 17, 7, 9)


def test_kept_routes_follow_a_host_that_changed_address() -> None:
    fabric = fat_tree(4).to_fabric()
    h1, h16 = fabric.hosts["h1"], fabric.hosts["h16"]
    routes = RouteCache()
    flow = FiveTuple(h1.ip, h16.ip, 17, 4000, 5000)
    assert flow_entries(fabric, flow, (h1.dpid, h1.port), "mac-nibble", "source-routing", routes)
    fabric.add_host(replace(h16, ip="10.9.9.9"))
    with pytest.raises(RoutingError, match="ipv4_dst"):
        flow_entries(fabric, flow, (h1.dpid, h1.port), "mac-nibble", "source-routing", routes)
    moved = FiveTuple(h1.ip, "10.9.9.9", 17, 4000, 5000)
    assert flow_entries(fabric, moved, (h1.dpid, h1.port), "mac-nibble", "source-routing", routes)


def test_kept_pathlets_give_the_same_entries_as_working_them_out_again() -> None:
    fabric = fat_tree(4).to_fabric()
    routes = RouteCache()
    h1 = fabric.hosts["h1"]
    for codec in ("mac-nibble", "mac-vlan-mpls"):
        for dst in ("h2", "h3", "h16"):
            for sport in (40000, 40001):
                flow = FiveTuple(h1.ip, fabric.hosts[dst].ip, 17, sport, 5001)
                kept = flow_entries(fabric, flow, (h1.dpid, h1.port), codec, "source-routing", routes)
                assert kept == flow_entries(fabric, flow, (h1.dpid, h1.port), codec, "source-routing")


@pytest.mark.parametrize("steering", STEERINGS)
@pytest.mark.parametrize("proto", [1, 6, 17])
def test_a_planned_entry_keeps_the_digest_it_would_be_given_afresh(steering: str, proto: int) -> None:
    """Entries made from a kept plan carry a digest written from a template; a sync compares it with the
    one any equal entry works out, so the two must agree."""
    fabric = fat_tree(4).to_fabric()
    h1, h16 = fabric.hosts["h1"], fabric.hosts["h16"]
    for codec in ("mac-nibble", "mac-vlan-mpls"):
        flow = FiveTuple(h1.ip, h16.ip, proto, 40000, 5001)
        for _, entry in flow_entries(fabric, flow, (h1.dpid, h1.port), codec, steering, idle_timeout=30):
            afresh = FlowEntry(entry.table, entry.priority, entry.match, entry.actions, entry.goto, entry.cookie,
                               entry.idle_timeout)
            assert afresh == entry and afresh.digest == entry.digest


def test_plans_are_kept_per_place_and_destination() -> None:
    fabric = fat_tree(4).to_fabric()
    routes = RouteCache()
    h1, h16 = fabric.hosts["h1"], fabric.hosts["h16"]
    flow = FiveTuple(h1.ip, h16.ip, 17, 4000, 5000)
    plan = routes.plan(fabric, flow, (h1.dpid, h1.port), "mac-nibble", "source-routing")
    assert routes.plan(fabric, replace(flow, sport=4001), (h1.dpid, h1.port), "mac-nibble", "source-routing") is plan
    assert routes.misses == 1
    hop_by_hop = routes.plan(fabric, flow, (h1.dpid, h1.port), "mac-nibble", "hop-by-hop")
    assert routes.misses == 1  # the same route, planned for the other steering
    assert [step.dpid for step in hop_by_hop.steps][-1] == h1.dpid == plan.steps[-1].dpid  # ingress last
    assert plan.links == hop_by_hop.links and len(plan.links) == 4 and hop_by_hop.switches == 5


def test_flows_beyond_the_gateway_share_the_gateways_plan() -> None:
    """Hosts may send to any address: those beyond the fabric must not each keep a plan of their own."""
    fabric = fat_tree(4).to_fabric()
    h1, h16 = fabric.hosts["h1"], fabric.hosts["h16"]
    fabric.set_gateway(h16.ip)
    routes = RouteCache()
    plans = {id(routes.plan(fabric, FiveTuple(h1.ip, f"198.18.0.{n}", 17, 4000, 53), (h1.dpid, h1.port), "mac-nibble",
                            "source-routing")) for n in range(1, 200)}
    assert len(plans) == 1 and len(routes._plans) == 1


def test_an_unencodable_route_is_refused_naming_the_flow() -> None:
    fabric = fat_tree(4).to_fabric()
    h1, h2 = fabric.hosts["h1"], fabric.hosts["h3"]
    first_hop = host_route(fabric, (h1.dpid, h1.port), "h3").hops[0]
    fabric.remove_link((first_hop.dpid, first_hop.port))
    far = first_hop.arrival
    fabric.remove_link(far)
    fabric.add_link((first_hop.dpid, 21), far)  # a port mac-nibble cannot write (1..15)
    flow = FiveTuple(h1.ip, h2.ip, 17, 4000, 5000)
    routes = RouteCache()
    for _ in range(2):  # refused each time, never kept
        with pytest.raises(RoutingError, match=f"flow {h1.ip}->{h2.ip}"):
            routes.plan(fabric, flow, (h1.dpid, h1.port), "mac-nibble", "source-routing")
    assert not routes._plans
