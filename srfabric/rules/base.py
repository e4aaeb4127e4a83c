"""What a switch holds whatever chains and streams run: port roles, control and security entries, the decode
steps, restore and delivery at header-writing edges, and every host's default route. Depends on switches,
links and hosts only (service functions' ports apart), so the compile engine keeps it per topology version.
Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from srfabric.errors import SrfabricError
from srfabric.model.fabric import Fabric
from srfabric.routing.paths import Route, host_route
from srfabric.rules.codec_rules import CodecRules, rules_for
from srfabric.rules.entries import (
    FlowEntry,
    GroupEntry,
    Kind,
    Output,
    SetField,
    ToController,
    cookie,
    match,
)
from srfabric.rules.gateway import gateway_edge_entries, gateway_route_entries
from srfabric.rules.headers import (
    IPV6_ROUTES,
    PathletSteps,
    host_addresses,
    host_route_entries,
    pathlet_steps,
    route_group_ids,
    route_ingresses,
    sre_switches,
)
from srfabric.rules.pipeline import (
    ARP_ETHERTYPE,
    DECODE,
    DELIVER,
    HOST_IN,
    ICMPV6,
    IPV6_ETHERTYPE,
    LLDP_ETHERTYPE,
    ND_ADVERT,
    ND_SOLICIT,
    PORT_IN,
    PRIO_ARP,
    PRIO_CONTROL,
    PRIO_DECODE,
    PRIO_EXHAUSTED,
    PRIO_MISS,
    PRIO_PORT,
    PRIO_ROUTE,
    PRIO_SECURITY,
    RESERVED_MULTICAST,
    TERMINATE,
)
from srfabric.rules.proxy import (
    proxy_port_entries,
)
from srfabric.rules.tables import Tables, reported
from srfabric.rules.time_triggered import best_effort_first, tt_base_entries


def trusted_port_entry(port: int) -> FlowEntry:
    """Frames arriving on ``port`` carry a source-routing header (a fabric link or a service function's port)."""
    return FlowEntry(PORT_IN, PRIO_PORT, match(in_port=port), goto=DECODE, cookie=cookie(Kind.PORT))


def function_port_entries(fabric: Fabric, rules: CodecRules, tt_queue: int | None = None
                          ) -> list[tuple[int, FlowEntry]]:
    """SR-aware functions' ports are trusted: they hand back the frames the chain sent them, header and all.
    An SR-unaware function's ports are not (it hands back plain frames, as a host does); its ingress switch
    strips the header for it instead (``proxy``)."""
    proxied = fabric.proxied_ports()
    trusted = [(dpid, trusted_port_entry(port)) for (dpid, port) in sorted(fabric.function_ports())
               if dpid in fabric.switches and (dpid, port) not in proxied]
    return trusted + proxy_port_entries(fabric, rules, tt_queue)


def switch_base_entries(fabric: Fabric, dpid: int, rules: CodecRules, sre: bool) -> list[FlowEntry]:
    """Chain-independent entries: port roles, control, security, decode, restore, delivery.

    Service functions' ports are not among them (see ``function_port_entries``), so that these
    depend on switches, links and hosts only.
    """
    entries = [
        FlowEntry(
            PORT_IN, PRIO_CONTROL, match(eth_type=LLDP_ETHERTYPE), (ToController(),), cookie=cookie(Kind.CONTROL)
        ),
        # IEEE 802.1Q's reserved addresses (01-80-C2-00-00-00 to -0F: gPTP, STP, LLDP...) are for the port's own
        # protocol daemon, never forwarded: on a fabric link a gPTP frame would otherwise be decoded as a header.
        FlowEntry(PORT_IN, PRIO_CONTROL - 1, match(eth_dst=RESERVED_MULTICAST), cookie=cookie(Kind.SECURITY)),
        FlowEntry(PORT_IN, PRIO_MISS, (), goto=HOST_IN, cookie=cookie(Kind.PORT)),
        FlowEntry(HOST_IN, PRIO_ARP, match(eth_type=ARP_ETHERTYPE), (ToController(),), cookie=cookie(Kind.CONTROL)),
        *(FlowEntry(HOST_IN, PRIO_ARP, match(eth_type=IPV6_ETHERTYPE, ip_proto=ICMPV6, icmpv6_type=kind),
                    (ToController(),), cookie=cookie(Kind.CONTROL)) for kind in (ND_SOLICIT, ND_ADVERT)),
        FlowEntry(HOST_IN, PRIO_MISS, (), cookie=cookie(Kind.MISS)),
        FlowEntry(DECODE, PRIO_MISS, (), cookie=cookie(Kind.MISS)),
    ]
    for port in fabric.trusted_ports(dpid):
        entries.append(trusted_port_entry(port))
    for index, forged in enumerate(rules.forged()):
        # Distinct priorities: forged matches may overlap, and a switch must never choose at random.
        entries.append(FlowEntry(HOST_IN, PRIO_SECURITY - index, forged, cookie=cookie(Kind.SECURITY)))
    for step_match, actions in rules.decode_steps():
        entries.append(FlowEntry(DECODE, PRIO_DECODE, step_match, actions, cookie=cookie(Kind.DECODE)))
    exhausted_match, strip = rules.exhausted()
    if sre:
        entries.append(
            FlowEntry(DECODE, PRIO_EXHAUSTED, exhausted_match, strip, goto=TERMINATE, cookie=cookie(Kind.DECODE))
        )
        if (exhausted_ipv6 := rules.exhausted_ipv6()) is not None:
            entries.append(FlowEntry(DECODE, PRIO_EXHAUSTED + 1, exhausted_ipv6[0], exhausted_ipv6[1], goto=TERMINATE,
                                     cookie=cookie(Kind.DECODE)))
        entries.append(FlowEntry(TERMINATE, PRIO_MISS, (), goto=DELIVER, cookie=cookie(Kind.RESTORE)))
        entries.append(FlowEntry(DELIVER, PRIO_MISS, (), cookie=cookie(Kind.MISS)))
        if rules.rewrites_source_mac:
            for host in fabric.hosts.values():
                for source in host_addresses(host, "src"):
                    entries.append(FlowEntry(TERMINATE, PRIO_ROUTE, source, (SetField("eth_src", host.mac),),
                                             goto=DELIVER, cookie=cookie(Kind.RESTORE)))
        for host in fabric.hosts.values():
            if host.dpid == dpid:
                for destination in host_addresses(host, "dst"):
                    entries.append(FlowEntry(DELIVER, PRIO_ROUTE, destination,
                                             (SetField("eth_dst", host.mac), Output(host.port)),
                                             cookie=cookie(Kind.DELIVER)))
        entries += gateway_edge_entries(fabric, dpid, rules)
    else:
        entries.append(FlowEntry(DECODE, PRIO_EXHAUSTED, exhausted_match, (), cookie=cookie(Kind.MISS)))
    return entries


def crossed(fabric: Fabric, routes: list[Route]) -> frozenset[tuple[int, int]]:
    """The fabric links the routes cross, each as the port it leaves by (hops into functions are not links)."""
    return frozenset(end for route in routes for hop in route.hops
                     if (end := (hop.dpid, hop.port)) in fabric.links)


class SwitchRoutes:
    """The default routes' paths and headers by (ingress, destination switch), worked out once for all the hosts
    of a switch in one ``topology_tables`` call: their routes differ only in the port that delivers."""

    def __init__(self, rules: CodecRules, sre: set[int]) -> None:
        self.rules, self.sre = rules, sre
        self.found: dict[tuple[int, int], tuple[Route, PathletSteps, PathletSteps]] = {}

    def steps(self, fabric: Fabric, ingress: int, host: str, what: str) -> tuple[Route, PathletSteps, PathletSteps]:
        """``host``'s route from ``ingress``, and its headers for IPv4 and IPv6 frames (an error, naming
        ``what``, is raised for each host afresh)."""
        destination = fabric.hosts[host]
        key = (ingress, destination.dpid)
        found = self.found.get(key)
        if found is None:
            route = host_route(fabric, (ingress, 0), host)
            found = self.found[key] = (route, pathlet_steps(route, self.rules, self.sre, what),
                                       pathlet_steps(route, self.rules, self.sre, what, ipv6=True))
        route, v4, v6 = found
        return replace(route, delivery=(destination.dpid, destination.port)), v4, v6


@dataclass
class TopologyMemo:
    """What ``topology_tables`` worked out last time, kept while only links were lost since: each switch's
    fixed entries (while its trusted ports are the same) and each host route's entries (while every link it
    crosses is up). Losing a link makes no route shorter, so a kept route is still a shortest one."""

    growth_version: int = -1
    sre: frozenset[int] = frozenset()
    switch_entries: dict[int, tuple[tuple[int, ...], list[FlowEntry]]] = field(default_factory=dict)
    routes: dict[tuple[str, int], tuple[list[tuple[int, FlowEntry]], list[tuple[int, GroupEntry]],
                                        frozenset[tuple[int, int]]]] = field(default_factory=dict)

    def current(self, fabric: Fabric, sre: set[int]) -> None:
        if (fabric.growth_version, frozenset(sre)) != (self.growth_version, self.sre):
            self.growth_version, self.sre = fabric.growth_version, frozenset(sre)
            self.switch_entries.clear()
            self.routes.clear()


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
    tables = Tables(fabric.switches)
    for dpid in fabric.switches:
        trusted = tuple(fabric.trusted_ports(dpid))
        kept = memo.switch_entries.get(dpid)
        if kept is None or kept[0] != trusted:
            entries = switch_base_entries(fabric, dpid, rules, dpid in sre)
            if tt_queue is not None:
                entries = best_effort_first(entries + tt_base_entries(rules, dpid in sre, tt_queue))
            kept = memo.switch_entries[dpid] = (trusted, entries)
        tables.add_all([(dpid, entry) for entry in kept[1]], "fabric")
    ingress = sorted(route_ingresses(fabric) & fabric.switches.keys())
    group_ids = route_group_ids(fabric)
    shared = SwitchRoutes(rules, sre)
    for host in sorted(fabric.hosts.values(), key=lambda h: h.name):
        what = f"host {host.name}"
        dst, *dst6 = host_addresses(host, "dst")  # its IPv4 address, then its IPv6 ones
        placed: list[tuple[int, FlowEntry]] = []
        groups: list[tuple[int, GroupEntry]] = []
        # An ingress that cannot reach the host (a service leaf whose links are not known yet) is reported, and
        # every other ingress keeps its route to the host.
        unreachable: SrfabricError | None = None
        for dpid in ingress:
            found = memo.routes.get((host.name, dpid))
            if found is None or not found[2] <= fabric.links.keys():
                try:
                    route, v4_steps, v6_steps = shared.steps(fabric, dpid, host.name, what)
                    v4 = host_route_entries(route, [dst], rules, sre, group_ids[host.dpid], what, steps=v4_steps)
                    v6 = host_route_entries(route, dst6, rules, sre, group_ids[host.dpid] | IPV6_ROUTES, what,
                                            ipv6=True, steps=v6_steps)  # a group of its own: the MPLS header
                except SrfabricError as error:
                    if problems is None:
                        raise
                    unreachable = unreachable or error
                    continue
                found = memo.routes[(host.name, dpid)] = (v4[0] + v6[0], v4[1] + v6[1], crossed(fabric, [route]))
            placed += found[0]
            groups += found[1]
        with reported(problems, what):
            tables.add_all(placed, what, groups)
            if unreachable is not None:
                raise unreachable
    _add_gateway_routes(fabric, tables, ingress, rules, sre, group_ids, memo, problems)
    return tables


def _add_gateway_routes(fabric: Fabric, tables: Tables, ingress: list[int], rules: CodecRules, sre: set[int],
                        group_ids: dict[int, int], memo: TopologyMemo, problems: list[SrfabricError] | None) -> None:
    """Every ingress's route for addresses no host has, to the gateway (when the fabric has one)."""
    gateway = fabric.gateway()
    if gateway is None:
        return
    for dpid in ingress:
        with reported(problems, f"gateway from switch {dpid:#x}"):
            found = memo.routes.get(("", dpid))  # no host has an empty name: the route for every other address
            if found is None or not found[2] <= fabric.links.keys():
                placed, groups, route = gateway_route_entries(fabric, gateway, dpid, rules, sre,
                                                              group_ids[gateway.dpid])
                found = memo.routes[("", dpid)] = (placed, groups, crossed(fabric, [route]))
            tables.add_all(found[0], "gateway", found[1])
