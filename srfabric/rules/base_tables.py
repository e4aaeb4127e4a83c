"""Every switch's chain-independent tables (``base``'s fixed entries and every host's default route), kept between
calls while only links were lost: a route is worked out again only when a link it crosses went down (an index by
link names them), and only the switches those routes land on get new tables, the old ones with the stale routes'
entries taken out and the new ones put in. A link cut at k=16 then touches the few ingress switches whose routes
crossed it, not all 320 and their 131,072 routes. Pure: no I/O.

Examples
--------
>>> from srfabric.model.topo import fat_tree
>>> fabric = fat_tree(4).to_fabric()
>>> memo = TopologyMemo()
>>> first = topology_tables(fabric, "mac-nibble", [], memo=memo)
>>> fabric.suspend_link(next(iter(fabric.links)))  # its carrier lost, as a port status says
>>> again = topology_tables(fabric, "mac-nibble", [], memo=memo)
>>> kept = [d for d in fabric.switches if again.entries[d] is first.entries[d]]
>>> 0 < len(kept) < len(fabric.switches)  # the switches no stale route lands on keep their very tables
True
>>> again.entries == topology_tables(fabric, "mac-nibble", []).entries  # the same as worked out afresh
True
"""

from __future__ import annotations

from dataclasses import dataclass, field

from srfabric.errors import SrfabricError
from srfabric.model.fabric import Fabric, Host
from srfabric.routing.paths import no_path
from srfabric.rules.arp_answers import answer_entry, asked_by_itself
from srfabric.rules.base import SwitchRoutes, crossed, switch_base_entries
from srfabric.rules.codec_rules import CodecRules, rules_for
from srfabric.rules.entries import EntryKey, FlowEntry, GroupEntry
from srfabric.rules.gateway import gateway_route_entries
from srfabric.rules.headers import (
    IPV6_ROUTES,
    host_route_entries,
    route_group_ids,
    route_ingresses,
    sre_switches,
)
from srfabric.rules.streams.time_triggered import best_effort_first, tt_base_entries
from srfabric.rules.tables import Tables, reported

Fixed = tuple[tuple[int, ...], list[FlowEntry]]  # a switch's trusted ports, its fixed entries
# A route's entries and groups, the links it crosses, the switches it puts anything on.
Found = tuple[list[tuple[int, FlowEntry]], list[tuple[int, GroupEntry]], frozenset[tuple[int, int]], frozenset[int]]
RouteKey = tuple[str, int]  # (host, ingress switch); the host "" for the gateway route of everything else


@dataclass
class TopologyMemo:
    """What ``topology_tables`` worked out last time, kept while only links were lost since: each switch's
    fixed entries (while its trusted ports are the same), each host route's entries (while every link it
    crosses is up), which routes cross each link, and the last tables built without a problem with what they
    were built for. Losing a link makes no route shorter, so a kept route is still a shortest one."""

    growth_version: int = -1
    sre: frozenset[int] = frozenset()
    switch_entries: dict[int, Fixed] = field(default_factory=dict)
    routes: dict[RouteKey, Found] = field(default_factory=dict)
    by_link: dict[tuple[int, int], set[RouteKey]] = field(default_factory=dict)
    # the last clean tables, the links up then, and the hosts, ingress switches and gateway they were built for
    last: tuple[Tables, frozenset[tuple[int, int]], tuple[object, ...]] | None = None

    def current(self, fabric: Fabric, sre: set[int]) -> None:
        if (fabric.growth_version, frozenset(sre)) != (self.growth_version, self.sre):
            self.growth_version, self.sre = fabric.growth_version, frozenset(sre)
            self.switch_entries.clear()
            self.routes.clear()
            self.by_link.clear()
            self.last = None

    def keep(self, key: RouteKey, found: Found) -> Found:
        """``found`` as ``key``'s route, indexed by the links it crosses."""
        old = self.routes.get(key)
        for link in old[2] if old is not None else ():
            self.by_link[link].discard(key)
        for link in found[2]:
            self.by_link.setdefault(link, set()).add(key)
        self.routes[key] = found
        return found


def topology_tables(fabric: Fabric, codec: str, problems: list[SrfabricError] | None = None,
                    tt_queue: int | None = None, memo: TopologyMemo | None = None) -> Tables:
    """Every switch's chain-independent entries and its default routes to every host, without the service
    functions' ports (``function_port_entries``): what only switches, links and hosts decide.

    With ``tt_queue`` every switch also puts time-triggered frames into that queue (``time_triggered``); with
    ``memo`` (the same codec and ``tt_queue`` every call) what is still right is not worked out again.
    """
    rules = rules_for(codec)
    sre = sre_switches(fabric)
    memo = memo if memo is not None else TopologyMemo()
    memo.current(fabric, sre)
    ingress = sorted(route_ingresses(fabric) & fabric.switches.keys())
    built_for = (tuple(ingress), fabric.gateway_ip, tt_queue)  # hosts: a change of theirs resets the memo
    patched = _patched(fabric, memo, built_for, SwitchRoutes(rules, sre), route_group_ids(fabric))
    if patched is not None:
        return patched
    fixed = {dpid: _fixed(fabric, dpid, rules, sre, tt_queue, memo) for dpid in fabric.switches}
    group_ids = route_group_ids(fabric)
    shared = SwitchRoutes(rules, sre)
    routes = [_host_routes(fabric, host, ingress, shared, group_ids, memo, problems)
              for host in sorted(fabric.hosts.values(), key=lambda h: h.name)]
    gateway = _gateway_routes(fabric, ingress, shared, group_ids, memo)
    before = len(problems) if problems is not None else 0
    tables = _full(fabric, fixed, routes, gateway, problems)
    clean = all(error is None for _, _, error in routes) and all(error is None for _, _, error in gateway) \
        and (problems is None or len(problems) == before)
    memo.last = (tables, frozenset(fabric.links), built_for) if clean else None
    return tables


def _fixed(fabric: Fabric, dpid: int, rules: CodecRules, sre: set[int], tt_queue: int | None,
           memo: TopologyMemo) -> Fixed:
    trusted = tuple(fabric.trusted_ports(dpid))
    kept = memo.switch_entries.get(dpid)
    if kept is None or kept[0] != trusted:
        entries = switch_base_entries(fabric, dpid, rules, dpid in sre)
        if tt_queue is not None:
            entries = best_effort_first(entries + tt_base_entries(rules, dpid in sre, tt_queue))
        kept = memo.switch_entries[dpid] = (trusted, entries)
    return kept


def _host_routes(fabric: Fabric, host: Host, ingress: list[int], shared: SwitchRoutes, group_ids: dict[int, int],
                 memo: TopologyMemo, problems: list[SrfabricError] | None
                 ) -> tuple[str, list[Found], SrfabricError | None]:
    """``host``'s route from every ingress; an ingress that cannot reach it (a service leaf whose links are not
    known yet) is the error beside the others' routes (raised at once without ``problems``)."""
    what = f"host {host.name}"
    founds: list[Found] = []
    unreachable: SrfabricError | None = None
    reach = fabric.distances_to(host.dpid)
    for dpid in ingress:
        found = memo.routes.get((host.name, dpid))
        if found is None or not found[2] <= fabric.links.keys():
            if dpid != host.dpid and dpid not in reach:  # no path (yet: a starting fabric knows no links), at once
                error = no_path("destination", dpid, host.dpid)  # as ``tree_path`` would refuse it
                if problems is None:
                    raise error
                unreachable = unreachable or error
                continue
            try:
                found = memo.keep((host.name, dpid), _route(fabric, (host.name, dpid), shared, group_ids))
            except SrfabricError as error:
                if problems is None:
                    raise
                unreachable = unreachable or error
                continue
        founds.append(found)
    return what, founds, unreachable


def _gateway_routes(fabric: Fabric, ingress: list[int], shared: SwitchRoutes, group_ids: dict[int, int],
                    memo: TopologyMemo) -> list[tuple[str, Found | None, SrfabricError | None]]:
    """Every ingress's route for addresses no host has, to the gateway (when the fabric has one), or its error."""
    out: list[tuple[str, Found | None, SrfabricError | None]] = []
    for dpid in ingress if fabric.gateway() is not None else ():
        found = memo.routes.get(("", dpid))  # no host has an empty name: the route for every other address
        if found is None or not found[2] <= fabric.links.keys():
            try:
                found = memo.keep(("", dpid), _route(fabric, ("", dpid), shared, group_ids))
            except SrfabricError as error:
                out.append((f"gateway from switch {dpid:#x}", None, error))
                continue
        out.append((f"gateway from switch {dpid:#x}", found, None))
    return out


def _found(entries: list[tuple[int, FlowEntry]], groups: list[tuple[int, GroupEntry]],
           links: frozenset[tuple[int, int]]) -> Found:
    return entries, groups, links, frozenset(d for d, _ in entries) | frozenset(d for d, _ in groups)


def _full(fabric: Fabric, fixed: dict[int, Fixed], routes: list[tuple[str, list[Found], SrfabricError | None]],
          gateway: list[tuple[str, Found | None, SrfabricError | None]], problems: list[SrfabricError] | None
          ) -> Tables:
    """The tables from scratch: each host's routes from every ingress all or nothing, its error reported."""
    tables = Tables(fabric.switches)
    for dpid, kept in fixed.items():
        tables.add_all([(dpid, entry) for entry in kept[1]], "fabric")
    for what, founds, unreachable in routes:
        with reported(problems, what):
            tables.add_all([e for found in founds for e in found[0]], what, [g for found in founds for g in found[1]])
            if unreachable is not None:
                raise unreachable
    for what, gateway_found, error in gateway:
        with reported(problems, what):
            if error is not None:
                raise error
            assert gateway_found is not None
            tables.add_all(gateway_found[0], "gateway", gateway_found[1])
    return tables


def _patched(fabric: Fabric, memo: TopologyMemo, built_for: tuple[object, ...], shared: SwitchRoutes,
             group_ids: dict[int, int]) -> Tables | None:
    """The last clean tables with the routes that crossed a link lost since worked out again, on the switches they
    land on only (the others keep their very tables); None when there are no such tables, anything but links
    were lost, or a stale route now fails, lands elsewhere or conflicts (the full assembly then decides)."""
    if memo.last is None or memo.last[2] != built_for or not fabric.links.keys() <= memo.last[1]:
        return None
    old, links, _ = memo.last
    lost = links - fabric.links.keys()
    if any(tuple(fabric.trusted_ports(dpid)) != memo.switch_entries[dpid][0] for dpid, _ in lost):
        return None  # a link forgotten, not only down: its ports are host ports now, the fixed entries change
    stale = sorted({key for link in lost for key in memo.by_link.get(link, ())})
    if not stale:
        return old
    fresh: dict[RouteKey, Found] = {}
    for key in stale:
        try:
            fresh[key] = _route(fabric, key, shared, group_ids)
        except SrfabricError:
            return None
        if fresh[key][3] != memo.routes[key][3]:
            return None
    tables = Tables(())
    tables.entries, tables.groups = dict(old.entries), dict(old.groups)
    for dpid in {dpid for key in stale for dpid in fresh[key][3]}:
        tables.entries[dpid], tables.groups[dpid] = dict(old.entries[dpid]), dict(old.groups[dpid])
    for key in stale:  # out first: a default route's group is shared by the hosts of one switch, stale together
        for dpid, entry in memo.routes[key][0]:
            tables.entries[dpid].pop(entry.key, None)
        for dpid, group in memo.routes[key][1]:
            tables.groups[dpid].pop(group.group_id, None)
    try:
        for key in stale:
            tables.add_all(fresh[key][0], "route", fresh[key][1])
    except SrfabricError:
        return None
    keys: dict[int, set[EntryKey]] = {}
    for key in stale:
        for dpid, entry in (*memo.routes[key][0], *fresh[key][0]):
            keys.setdefault(dpid, set()).add(entry.key)
        memo.keep(key, fresh[key])
    old.since, tables.since = None, (old, keys)  # one step back only: no chain of every tables before
    memo.last = (tables, frozenset(fabric.links), built_for)
    return tables


def _route(fabric: Fabric, key: RouteKey, shared: SwitchRoutes, group_ids: dict[int, int]) -> Found:
    """One default route afresh: ``key``'s host from its ingress, or (host "") the gateway's for everything else."""
    host, dpid = key
    if not host:
        gateway = fabric.gateway()
        if gateway is None:
            raise SrfabricError("gateway", "no gateway host is known")
        placed, groups, route = gateway_route_entries(fabric, gateway, dpid, shared.rules, shared.sre,
                                                      group_ids[gateway.dpid])
        return _found(placed, groups, crossed(fabric, [route]))
    what, target = f"host {host}", fabric.hosts[host]
    dst, *dst6 = shared.addresses(target)  # its IPv4 address, then its IPv6 ones
    route, v4_steps, v6_steps, links = shared.steps(fabric, dpid, host, what)
    v4 = host_route_entries(route, [dst], shared.rules, shared.sre, group_ids[target.dpid], what, steps=v4_steps)
    # Its address answered where its route starts (``arp_answers``): there only, as frames to it go there only.
    answers = [(dpid, answer_entry(target))] + ([(dpid, asked_by_itself(target))] if dpid == target.dpid else [])
    if not dst6:
        return _found(v4[0] + answers, v4[1], links)
    v6 = host_route_entries(route, dst6, shared.rules, shared.sre, group_ids[target.dpid] | IPV6_ROUTES, what,
                            ipv6=True, steps=v6_steps)  # a group of its own: the MPLS header
    return _found(v4[0] + v6[0] + answers, v4[1] + v6[1], links)
