"""Compile the fabric and its chains into the flow entries each switch should hold.

Pure: the same inputs always give the same entries, so the controller can
diff what a switch has against what it should have.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

from srfabric.errors import ModelError, RoutingError, SrfabricError
from srfabric.model.chain import Chain
from srfabric.model.fabric import Fabric
from srfabric.routing.paths import Route, chain_route, host_route, tap_route
from srfabric.rules.classify import classifier_matches
from srfabric.rules.codec_rules import CodecRules, rules_for
from srfabric.rules.entries import (
    Action,
    Bucket,
    EntryKey,
    FlowEntry,
    Group,
    GroupEntry,
    Kind,
    Match,
    Output,
    SetField,
    ToController,
    cookie,
    extended,
    ipv6_number,
    match,
    match_fields,
)
from srfabric.rules.exits import exit_entries
from srfabric.rules.gateway import gateway_edge_entries, gateway_exit_entries, gateway_route_entries
from srfabric.rules.headers import (
    IPV6_ROUTES,
    _ip,
    host_addresses,
    host_route_entries,
    pathlet_steps,
    route_group_ids,
    sre_switches,
    steps_entries,
)
from srfabric.rules.lb_split import split
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
    PRIO_CHAIN,
    PRIO_CONTROL,
    PRIO_DECODE,
    PRIO_EXHAUSTED,
    PRIO_MISS,
    PRIO_PORT,
    PRIO_ROUTE,
    PRIO_SECURITY,
    TERMINATE,
)
from srfabric.rules.proxy import (
    balanced_continuations,
    proxied_chain_entries,
    proxy_hint,
    proxy_port_entries,
    proxy_segments,
)
from srfabric.rules.time_triggered import best_effort_first, tt_base_entries


def matches_overlap(a: Match, b: Match) -> bool:
    """Whether some packet matches both: every field the two share agrees under both masks.

    >>> matches_overlap(match(udp_dst=5001), match(udp_dst=(5000, 0xFFF8)))
    True
    >>> matches_overlap(match(udp_dst=5001), match(udp_dst=5002))
    False
    """
    fields_a = match_fields(a)
    for name, value, mask in b:
        if name in fields_a:
            other_value, other_mask = fields_a[name]
            common = (mask if mask is not None else -1) & (other_mask if other_mask is not None else -1)
            if value & common != other_value & common:
                return False
    return True


class _Tables:
    """Collects entries and groups per switch and refuses two different ones with one key."""

    def __init__(self, dpids: Iterable[int]) -> None:
        self.entries: dict[int, dict[EntryKey, FlowEntry]] = {d: {} for d in dpids}
        self.groups: dict[int, dict[int, GroupEntry]] = {d: {} for d in dpids}

    def add_all(self, placed: list[tuple[int, FlowEntry]], what: str, groups: Sequence[tuple[int, GroupEntry]] = (),
                check_overlap: bool = True, hint: str = "") -> None:
        """Add entries (and the groups they use) all or nothing, so a conflicting chain leaves no half of itself.

        Two chain entries of one priority whose matches can both hit one packet
        would leave the choice to the switch: that is refused too, unless
        ``check_overlap`` is off (the caller checked when the chain was added).
        """
        for dpid, group in groups:
            old_group = self.groups[dpid].get(group.group_id)
            if old_group is not None and old_group != group:
                raise ModelError(what, f"group {group.group_id} on switch {dpid:#x} is taken by another chain")
        for dpid, entry in placed:
            old = self.entries[dpid].get(entry.key)
            if old is not None and old != entry:
                raise ModelError(what, f"conflicts with an existing entry on switch {dpid:#x} "
                                       f"(cookie {old.cookie:#x}){hint}")
            if entry.kind not in (Kind.CHAIN, Kind.STREAM) or not check_overlap:
                continue
            for other in self.entries[dpid].values():
                if (other.kind == entry.kind and other.cookie != entry.cookie and other.table == entry.table
                        and other.priority == entry.priority and matches_overlap(other.match, entry.match)):
                    raise ModelError(what, f"its classifier overlaps another {entry.kind.name.lower()}'s "
                                           f"(cookie {other.cookie:#x}) "
                                           f"on switch {dpid:#x}; make them disjoint{hint}")
        for dpid, entry in placed:
            self.entries[dpid][entry.key] = entry
        for dpid, group in groups:
            self.groups[dpid][group.group_id] = group

    def sorted(self) -> dict[int, list[FlowEntry]]:
        """Each switch's entries by (table, priority, match): the same inputs give the same lists."""
        return {dpid: sorted(entries.values(), key=entry_order) for dpid, entries in self.entries.items()}

    def copy(self) -> _Tables:
        other = _Tables(())
        other.entries = {dpid: dict(entries) for dpid, entries in self.entries.items()}
        other.groups = {dpid: dict(groups) for dpid, groups in self.groups.items()}
        return other

    def sorted_groups(self) -> dict[int, list[GroupEntry]]:
        return {dpid: [groups[i] for i in sorted(groups)] for dpid, groups in self.groups.items() if groups}


def entry_order(entry: FlowEntry) -> tuple[int, int, Match]:
    """How a switch's entries are listed: by table, then highest priority first, then match."""
    return entry.table, -entry.priority, entry.match


@contextmanager
def _reported(problems: list[SrfabricError] | None, what: str) -> Iterator[None]:
    """Run a block that places one host's or chain's entries; an error in it is raised, or, with
    ``problems`` given, recorded under ``what`` so that the rest still compiles."""
    try:
        yield
    except SrfabricError as error:
        if problems is None:
            raise
        problems.append(type(error)(what, error.message if error.field == what else str(error)))


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


@dataclass
class SwitchState:
    """What every switch should hold: flow entries sorted by (table, priority, match), and groups by id."""

    entries: dict[int, list[FlowEntry]]
    groups: dict[int, list[GroupEntry]] = field(default_factory=dict)


@dataclass(frozen=True)
class Placement:
    """One chain's part of the tables: entries and groups by switch, and the fabric links its routes cross
    (each as the port it leaves by): while all of them are up and no link is added, it stays right."""

    entries: list[tuple[int, FlowEntry]]
    groups: list[tuple[int, GroupEntry]]
    links: frozenset[tuple[int, int]] = frozenset()


def group_ids(chain_id: int) -> tuple[int, int]:
    """The chain's select group (load balancing) and all group (tap copies)."""
    return chain_id * 4 + 1, chain_id * 4 + 2


def tap_group_id(chain_id: int, path: int) -> int:
    """The all group (tap copies) of one path of a chain balanced on ``lb_fields``: one per path, apart
    from ``group_ids``'s numbers (chain ids have 24 bits, paths at most 64).

    >>> hex(tap_group_id(1, 2))
    '0x40000042'
    """
    return 1 << 30 | chain_id << 6 | path


def chain_placement(fabric: Fabric, chain: Chain, codec: str, sre: set[int] | None = None) -> Placement:
    """Where a chain's entries go: one header per pathlet, and at its ingress a group when it is
    load-balanced (a select group whose buckets write different paths) or tapped (an all group
    whose extra buckets send a copy into each tap function, where it ends).

    Examples
    --------
    >>> from srfabric.model import Alternative, Chain, FlowClassifier
    >>> from srfabric.model.topo import tsn_fig1
    >>> from srfabric.model.fabric import ServiceFunction
    >>> fabric = tsn_fig1().to_fabric()
    >>> fabric.add_function(ServiceFunction("a", (1, 8), (1, 9)))
    >>> fabric.add_function(ServiceFunction("b", (1, 10), (1, 11)))
    >>> chain = Chain("c", FlowClassifier(), (), "h1", "h3", chain_id=7,
    ...               alternatives=(Alternative(("a",), 1), Alternative(("b",), 3)))
    >>> placed = chain_placement(fabric, chain, "mac-nibble")
    >>> [(g.type, [b.weight for b in g.buckets]) for _, g in placed.groups]
    [('select', [1, 3])]
    """
    rules = rules_for(codec)
    sre = sre_switches(fabric) if sre is None else sre
    what = f"chain {chain.name}"
    chain.validate(set(fabric.hosts), set(fabric.functions))
    chain = without_dead_functions(fabric, chain)
    placement = _steering(fabric, chain, rules, sre, what)
    if chain.destination is not None:
        return placement
    # No destination: the chain ends at its last function, whose switch sends frames on by destination address.
    exits: list[tuple[int, FlowEntry]] = []
    routes: list[Route] = []
    # An SR-unaware last function hands frames back as a host would: the default routes take them from there.
    with_hosts = {host.dpid for host in fabric.hosts.values()}
    for path in chain.paths():
        last = fabric.functions[path.functions[-1]]
        if last.proxy and last.egress[0] not in with_hosts:
            raise RoutingError(what, f"its last function {last.name} is SR-unaware and hands frames back to switch "
                                     f"{last.egress[0]:#x}, which holds no default routes (no host is attached "
                                     "to it); give the chain a destination, or attach the function to an edge")
    for egress in sorted({last.egress for path in chain.paths()
                          if not (last := fabric.functions[path.functions[-1]]).proxy}):
        for placed, exit_routes in (exit_entries(fabric, egress, rules, sre, what),
                                    gateway_exit_entries(fabric, egress, rules, sre, what)):
            exits += placed
            routes += exit_routes
    return Placement(placement.entries + exits, placement.groups, placement.links | crossed(fabric, routes))


def _steering(fabric: Fabric, chain: Chain, rules: CodecRules, sre: set[int], what: str) -> Placement:
    """``chain_placement`` up to the chain's end: its destination, or its last function."""
    source = fabric.hosts[chain.source]
    # Past the ingress the chain's frames are known by their addresses too: one set of entries per pair of
    # them (a dual-stack host may have several IPv6 addresses; IPv4 hosts have one).
    ends = ("source", "destination") if chain.destination is not None else ("source",)
    variants = [dict(pair) for pair in itertools.product(*(chain_addresses(fabric, chain, end) for end in ends))]
    matches = chain_matches(fabric, chain)

    def entries_along(route: Route) -> list[tuple[int, FlowEntry]]:
        return [placed for endpoints in variants
                for placed in chain_route_entries(fabric, route, chain, matches, rules, sre, what, endpoints)]

    if not chain.grouped:
        route = chain_route(fabric, chain, chain.paths()[0].functions)
        return Placement(entries_along(route), [], crossed(fabric, [route]))
    later: list[tuple[int, FlowEntry, int]] = []  # past the ingress: (switch, entry, its way's weight)
    routes: list[Route] = []

    def header_actions(route: Route, weight: int = 1) -> tuple[Action, ...]:
        """The ingress entry's actions for ``route``; the later pathlets' entries are kept in ``later``."""
        first: tuple[Action, ...] = ()
        routes.append(route)
        for dpid, entry in entries_along(route):
            if entry.table == HOST_IN and match_fields(entry.match)["in_port"][0] == source.port \
                    and dpid == source.dpid:  # not a continuation after an SR-unaware function
                first = entry.actions
            else:
                later.append((dpid, entry, weight))
        return first

    select_id, all_id = group_ids(chain.chain_id)
    paths = chain.paths()
    headers = [header_actions(chain_route(fabric, chain, p.functions), p.weight) for p in paths]
    copies: list[Bucket] = []
    for tap in chain.taps:
        copies.append(Bucket(header_actions(tap_route(fabric, chain, tap))))
    # Ways that share an SR-unaware function and part after it are balanced again where it hands frames back.
    placed, groups = balanced_continuations(fabric, chain, later, what)
    for tap in chain.taps:
        egress = fabric.functions[tap].egress
        # A tap returns its copy on its egress port: the copy ends there.
        placed.append((egress[0], FlowEntry(PORT_IN, PRIO_PORT + 1, match(in_port=egress[1]), (),
                                            cookie=cookie(Kind.MISS))))

    def with_copies(main: tuple[Action, ...], group_id: int) -> tuple[Action, ...]:
        """``main``, or with taps an all group that also sends each tap its copy."""
        if not copies:
            return main
        groups.append((source.dpid, GroupEntry(group_id, "all", (Bucket(main), *copies))))
        return (Group(group_id),)

    ingress_cookie = cookie(Kind.CHAIN, chain.chain_id)
    # IPv6: the select group's hash spreads the flows (the split works on IPv4's fields).
    balanced = len(paths) > 1 and bool(chain.lb_fields) and not chain.classifier.ipv6
    splits = [balanced_split(m, chain, _ip(source.ip), [p.weight for p in paths]) for m in matches] if balanced else []
    if splits and all(parts is not None for parts in splits):
        # The named fields pick the path: one masked entry per value of their low bits (see ``lb_split``).
        actions: dict[int, tuple[Action, ...]] = {}
        for parts in splits:
            for part, index in parts or ():
                if index not in actions:
                    actions[index] = with_copies(headers[index], tap_group_id(chain.chain_id, index))
                placed.append((source.dpid, FlowEntry(HOST_IN, PRIO_CHAIN + chain.priority, part, actions[index],
                                                      cookie=ingress_cookie)))
        return Placement(placed, groups, crossed(fabric, routes))
    if len(paths) > 1:
        buckets = tuple(Bucket(header, p.weight) for header, p in zip(headers, paths, strict=True))
        groups.append((source.dpid, GroupEntry(select_id, "select", buckets)))
        main: tuple[Action, ...] = (Group(select_id),)
    else:
        main = headers[0]
    ingress_actions = with_copies(main, all_id)
    for m in matches:
        placed.append((source.dpid, FlowEntry(HOST_IN, PRIO_CHAIN + chain.priority, m, ingress_actions,
                                              cookie=ingress_cookie)))
    return Placement(placed, groups, crossed(fabric, routes))


def balanced_split(m: Match, chain: Chain, source_ip: int, weights: list[int]) -> list[tuple[Match, int]] | None:
    """``lb_split.split`` of an ingress match, with the source's address taken as fixed (as the destination's
    is, in the match): all of a host's frames have it, so it cannot spread them, and a symmetric chain's two
    directions then split on the same fields. The address is not matched: a source port may carry others."""
    if "ipv4_src" in match_fields(m):
        return split(m, chain.lb_fields, weights)
    parts = split(extended(m, ipv4_src=source_ip), chain.lb_fields, weights)
    return None if parts is None else [(tuple(f for f in part if f[0] != "ipv4_src"), index) for part, index in parts]


def chain_matches(fabric: Fabric, chain: Chain, in_port: int | None = None) -> list[Match]:
    """What the chain's ingress matches: its classifier on the source's port (or ``in_port``: hop-by-hop rules
    match every switch visit alike) and, for a chain with a destination whose classifier names no destination
    prefix, the destination's address (networking-sfc's ``logical_destination_port`` selects traffic to that
    port)."""
    port = fabric.hosts[chain.source].port if in_port is None else in_port
    matches = classifier_matches(chain.classifier, in_port=port)
    if chain.destination is None or chain.classifier.destination_ip_prefix:
        return matches
    return [extended(m, **{name: value}) for m in matches
            for name, value in chain_addresses(fabric, chain, "destination")]


def chain_addresses(fabric: Fabric, chain: Chain, end: str) -> list[tuple[str, int]]:
    """The match field and value of each address of the chain's ``end`` ("source" or "destination") host, of
    the classifier's family (a dual-stack host may have several IPv6 addresses)."""
    host = fabric.hosts[getattr(chain, end)]
    side = "src" if end == "source" else "dst"
    if not chain.classifier.ipv6:
        return [(f"ipv4_{side}", _ip(host.ip))]
    if not host.ip6:
        raise RoutingError(end, f"host {host.name} has no IPv6 address known yet (learned from its Neighbour "
                                "Discovery, or given in its port's fixed_ips), which an IPv6 classifier needs")
    return [(f"ipv6_{side}", ipv6_number(address)) for address in host.ip6]


def chain_route_entries(fabric: Fabric, route: Route, chain: Chain, matches: list[Match], rules: CodecRules,
                        sre: set[int], what: str, endpoints: dict[str, int]) -> list[tuple[int, FlowEntry]]:
    """``route_entries`` for a chain. A chain without a destination must fit one header, from its source to
    its last function: where a header runs out, the next one is chosen by matching the chain's classifier and
    source, and without a destination address that match would also take frames of other chains, or the
    chain's own frames on their way on from its last function, whose headers run out there too."""
    segments = proxy_segments(fabric, route, what)
    if len(segments) > 1:  # one run of headers per segment between SR-unaware functions
        return proxied_chain_entries(fabric, segments, chain, matches, rules, sre, what, endpoints)
    steps = pathlet_steps(route, rules, sre, what, chain.classifier.ipv6)
    if chain.destination is None and len(steps) > 1:
        raise RoutingError(what, f"a chain without a destination must fit one header: its {len(route.hops)} hops "
                                 f"from its source to its last function need {len(steps)} (at most "
                                 f"{rules.capacity} ports each, with {rules.name}); give it a destination, or "
                                 "place its functions closer")
    return steps_entries(route, steps, matches, Kind.CHAIN, chain.chain_id, endpoints, chain.priority)


def without_dead_functions(fabric: Fabric, chain: Chain) -> Chain:
    """The chain with its alternatives through a function whose port is down left out (the group's other port
    pairs take their flows); ``RoutingError`` when none is left."""
    if not fabric.functions_down:
        return chain
    live = tuple(a for a in chain.paths() if not fabric.functions_down.intersection(a.functions))
    if not live:
        down = sorted(fabric.functions_down.intersection(f for a in chain.paths() for f in a.functions))
        raise RoutingError(f"chain {chain.name}", f"every way through its functions crosses one that is down "
                                                  f"({', '.join(down)})")
    if len(live) == len(chain.paths()):
        return chain
    return replace(chain, alternatives=live)


def crossed(fabric: Fabric, routes: list[Route]) -> frozenset[tuple[int, int]]:
    """The fabric links the routes cross, each as the port it leaves by (hops into functions are not links)."""
    return frozenset(end for route in routes for hop in route.hops
                     if (end := (hop.dpid, hop.port)) in fabric.links)


def base_tables(fabric: Fabric, codec: str, problems: list[SrfabricError] | None = None) -> _Tables:
    """Every switch's chain-independent entries and its default routes to every host."""
    tables = topology_tables(fabric, codec, problems)
    tables.add_all(function_port_entries(fabric, rules_for(codec)), "service functions")
    return tables


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
                    tt_queue: int | None = None, memo: TopologyMemo | None = None) -> _Tables:
    """``base_tables`` without the service functions' ports: what only switches, links and hosts decide.

    With ``tt_queue`` every switch also puts time-triggered frames into that queue (``time_triggered``); with
    ``memo`` (the same codec and ``tt_queue`` every call) what is still right is not worked out again.
    """
    rules = rules_for(codec)
    sre = sre_switches(fabric)
    memo = memo if memo is not None else TopologyMemo()
    memo.current(fabric, sre)
    tables = _Tables(fabric.switches)
    for dpid in fabric.switches:
        trusted = tuple(fabric.trusted_ports(dpid))
        kept = memo.switch_entries.get(dpid)
        if kept is None or kept[0] != trusted:
            entries = switch_base_entries(fabric, dpid, rules, dpid in sre)
            if tt_queue is not None:
                entries = best_effort_first(entries + tt_base_entries(rules, dpid in sre, tt_queue))
            kept = memo.switch_entries[dpid] = (trusted, entries)
        tables.add_all([(dpid, entry) for entry in kept[1]], "fabric")
    ingress = sorted({host.dpid for host in fabric.hosts.values()})
    group_ids = route_group_ids(fabric)
    for host in sorted(fabric.hosts.values(), key=lambda h: h.name):
        what = f"host {host.name}"
        dst, *dst6 = host_addresses(host, "dst")  # its IPv4 address, then its IPv6 ones
        placed: list[tuple[int, FlowEntry]] = []
        groups: list[tuple[int, GroupEntry]] = []
        with _reported(problems, what):
            for dpid in ingress:
                found = memo.routes.get((host.name, dpid))
                if found is None or not found[2] <= fabric.links.keys():
                    route = host_route(fabric, (dpid, 0), host.name)
                    v4 = host_route_entries(route, [dst], rules, sre, group_ids[host.dpid], what)
                    v6 = host_route_entries(route, dst6, rules, sre, group_ids[host.dpid] | IPV6_ROUTES, what,
                                            ipv6=True)  # a group of its own: an MPLS header says which family
                    found = memo.routes[(host.name, dpid)] = (v4[0] + v6[0], v4[1] + v6[1],
                                                              crossed(fabric, [route]))
                placed += found[0]
                groups += found[1]
            tables.add_all(placed, what, groups)
    gateway = fabric.gateway()
    if gateway is not None:
        for dpid in ingress:
            with _reported(problems, f"gateway from switch {dpid:#x}"):
                found = memo.routes.get(("", dpid))  # no host has an empty name: the route for every other address
                if found is None or not found[2] <= fabric.links.keys():
                    placed, groups, route = gateway_route_entries(fabric, gateway, dpid, rules, sre,
                                                                  group_ids[gateway.dpid])
                    found = memo.routes[("", dpid)] = (placed, groups, crossed(fabric, [route]))
                tables.add_all(found[0], "gateway", found[1])
    return tables


def compile_state(
    fabric: Fabric, chains: Sequence[Chain], codec: str, problems: list[SrfabricError] | None = None
) -> SwitchState:
    """Every entry and group every switch should hold (see ``compile_fabric``)."""
    tables = base_tables(fabric, codec, problems)
    sre = sre_switches(fabric)
    for chain in chains:
        with _reported(problems, f"chain {chain.name}"):
            placement = chain_placement(fabric, chain, codec, sre)
            tables.add_all(placement.entries, f"chain {chain.name}", placement.groups,
                           hint=proxy_hint(fabric, chain))
    return SwitchState(tables.sorted(), tables.sorted_groups())


def compile_fabric(
    fabric: Fabric, chains: Sequence[Chain], codec: str, problems: list[SrfabricError] | None = None
) -> dict[int, list[FlowEntry]]:
    """Every entry every switch should hold, sorted by (table, priority, match).

    With ``problems`` given, a host or chain that cannot be routed (or conflicts)
    is left out and its error appended there; without it the first error is raised.
    The error's ``field`` names the culprit (``host h3``, ``chain SFP1``).
    Default routes (indirect groups per destination switch), load-balanced and tapped chains also need
    groups: see ``compile_state``.

    Examples
    --------
    >>> from srfabric.model.topo import fat_tree
    >>> tables = compile_fabric(fat_tree(4).to_fabric(), [], "mac-nibble")
    >>> sum(1 for e in tables[0x301] if e.kind == Kind.DECODE)
    11
    """
    return compile_state(fabric, chains, codec, problems).entries
