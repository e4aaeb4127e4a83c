"""Default routes: spread over equal-cost paths along each destination switch's tree, written at the ingress
through one indirect group per destination switch, so that a lost link rewrites groups, not host entries."""

from __future__ import annotations

from collections import Counter

import pytest

from srfabric.model.topo import fat_tree
from srfabric.routing.paths import host_route, tree_path
from srfabric.rules.compile import compile_state
from srfabric.rules.entries import Group, Kind, ipv4_number
from srfabric.rules.headers import ROUTE_GROUPS
from srfabric.rules.hop_by_hop import compile_hop_by_hop
from srfabric.rules.pipeline import HOST_IN
from srfabric_tools.simulate import Packet, walk

CODECS = ["mac-nibble", "mac-vlan-mpls"]


def edges(fabric) -> list[int]:
    return sorted(d for d, sw in fabric.switches.items() if sw.role == "edge")


def test_paths_spread_over_the_cores_and_follow_one_tree_per_destination() -> None:
    fabric = fat_tree(4).to_fabric()
    uses: Counter[tuple[int, int]] = Counter()
    for dst in edges(fabric):
        for src in fabric.switches:
            hops = tree_path(fabric, src, dst, "x")
            assert len(hops) == fabric.distances_to(dst)[src]  # a shortest path
            if hops:  # the rest of the way is the next switch's own path: one tree per destination
                assert tree_path(fabric, hops[0].arrival[0], dst, "x") == hops[1:]
            if fabric.switches[src].role == "edge":
                uses.update((hop.dpid, hop.port) for hop in hops)
    cores = {end: count for end, count in uses.items() if fabric.switches[end[0]].role == "aggregation"
             and fabric.switches[fabric.links[end][0]].role == "core"}
    # Hashing spreads, it does not balance exactly: most uplinks to the cores carry routes, none carries most.
    assert len(cores) >= 12 and max(cores.values()) <= sum(cores.values()) / 4


def test_a_lost_link_moves_only_the_paths_that_crossed_it() -> None:
    fabric = fat_tree(4).to_fabric()
    before = {(s, d): tree_path(fabric, s, d, "x") for s in edges(fabric) for d in edges(fabric)}
    for end in sorted(fabric.links):
        cut = fat_tree(4).to_fabric()
        cut.suspend_link(end)
        for (s, d), hops in before.items():
            crossed = any((hop.dpid, hop.port) in (end, cut.dormant[end]) for hop in hops)
            if not crossed:
                assert tree_path(cut, s, d, "x") == hops, (end, s, d)


@pytest.mark.parametrize("codec", CODECS)
def test_one_group_per_destination_switch_and_hosts_share_it(codec: str) -> None:
    fabric = fat_tree(4).to_fabric()
    state = compile_state(fabric, [], codec)
    for dpid in edges(fabric):
        routes = [e for e in state.entries[dpid] if e.kind == Kind.ROUTE and e.table == HOST_IN]
        assert len(routes) == len(fabric.hosts)
        remote = [e for e in routes if isinstance(e.actions[0], Group)]
        assert len(remote) == len(fabric.hosts) - 2 and len({e.actions[0] for e in remote}) == len(edges(fabric)) - 1
        groups = state.groups[dpid]
        assert len(groups) == len(edges(fabric)) - 1
        assert all(g.type == "indirect" and g.group_id & ROUTE_GROUPS for g in groups)


@pytest.mark.parametrize("codec", CODECS)
def test_a_cut_rewrites_only_the_groups_of_the_ways_it_carried(codec: str) -> None:
    fabric = fat_tree(4).to_fabric()
    before = compile_state(fabric, [], codec)
    for end in sorted(fabric.links):
        cut = fat_tree(4).to_fabric()
        cut.suspend_link(end)
        after = compile_state(cut, [], codec)
        assert after.entries == before.entries, end  # no host entry changes: they name their group
        changed = {(dpid, g.group_id) for dpid, groups in after.groups.items() for g in groups
                   if g not in before.groups[dpid]}
        carried = {(s, ROUTE_GROUPS | d) for s in edges(fabric) for d in edges(fabric)
                   if any((hop.dpid, hop.port) in (end, cut.dormant[end]) for hop in tree_path(fabric, s, d, "x"))}
        assert changed == carried, end
        host = fabric.hosts["h1"]
        for name, other in cut.hosts.items():  # and every host is still reached
            packet = Packet(eth_src=host.mac, eth_dst=other.mac, ipv4_src=ipv4_number(host.ip),
                            ipv4_dst=ipv4_number(other.ip), ip_proto=17, tp_src=1, tp_dst=2)
            result = walk(cut, after.entries, packet, host.dpid, host.port, groups=after.groups)
            assert [n for n, _ in result.delivered] == [name]


def test_hop_by_hop_routes_take_the_same_paths() -> None:
    fabric = fat_tree(4).to_fabric()
    tables = compile_hop_by_hop(fabric, [])
    for host in fabric.hosts.values():
        for dpid in fabric.switches:
            route = host_route(fabric, (dpid, 0), host.name)
            first = route.hops[0].port if route.hops else route.delivery[1]
            (entry,) = [e for e in tables[dpid] if e.kind == Kind.ROUTE
                        and ("ipv4_dst", ipv4_number(host.ip), None) in e.match]
            assert entry.actions[0].port == first


def test_reactive_setup_installs_no_default_route_groups_but_keeps_the_chains() -> None:
    from srfabric.rules.entries import Bucket, GroupEntry, Output
    from srfabric.rules.reactive import reactive_groups

    fabric = fat_tree(4).to_fabric()
    groups = compile_state(fabric, [], "mac-nibble").groups
    chain_group = GroupEntry(37, "select", (Bucket((Output(1),), 1), Bucket((Output(2),), 1)))
    kept = reactive_groups({**groups, 0x101: [*groups[0x101], chain_group]})
    assert kept[0x101] == [chain_group] and not any(kept[dpid] for dpid in kept if dpid != 0x101)


def test_group_ids_stay_put_when_switches_come_and_go() -> None:
    from srfabric.model.fabric import Fabric, Host, Switch
    from srfabric.rules.headers import route_group_ids

    def fabric(dpids: list[int]) -> Fabric:
        made = Fabric()
        for index, dpid in enumerate(dpids):
            made.add_switch(Switch(dpid, f"s{index}"))
            made.add_host(Host(f"h{index}", index + 1, f"10.0.0.{index + 1}", dpid, 1))
        return made

    colliding = [0x10000001, 0x20000001, 0x30000005]
    before = route_group_ids(fabric(colliding))
    assert before == {0x10000001: 0x80000001, 0x20000001: 0x80000002, 0x30000005: 0x80000005}
    after = route_group_ids(fabric([0x7, *colliding]))
    assert {dpid: after[dpid] for dpid in colliding} == before and after[0x7] == 0x80000007


@pytest.mark.parametrize("codec", CODECS)
def test_one_header_routes_are_the_entries_every_route_gets(codec: str) -> None:
    """A route of one header (most of them) is made at once; it is what the general construction makes: its
    pathlets' entries, the ingress one handing the frame to the destination switch's group."""
    from dataclasses import replace

    from srfabric.rules.codec_rules import rules_for
    from srfabric.rules.entries import Bucket, GroupEntry
    from srfabric.rules.headers import host_addresses, host_route_entries, pathlet_steps, sre_switches, steps_entries

    fabric = fat_tree(4).to_fabric()
    rules, sre = rules_for(codec), sre_switches(fabric)
    checked = 0
    for host in fabric.hosts.values():
        for ingress in edges(fabric):
            route = host_route(fabric, (ingress, 0), host.name)
            steps = pathlet_steps(route, rules, sre, "route")
            dsts = host_addresses(host, "dst")
            placed = steps_entries(route, steps, dsts, Kind.ROUTE, 0)
            if not route.hops:
                continue
            group_id = ROUTE_GROUPS | host.dpid
            expected = ([(at, replace(e, actions=(Group(group_id),)) if e.table == HOST_IN else e) for at, e in placed],
                        [(placed[0][0], GroupEntry(group_id, "indirect", (Bucket(placed[0][1].actions),)))])
            assert host_route_entries(route, dsts, rules, sre, group_id, "route", steps=steps) == expected
            checked += len(steps) == 1
    assert checked > 0
