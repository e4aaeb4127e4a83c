"""Where one chain's entries go: its route through its functions, cut into pathlets whose headers the switches
read, with groups for load balancing and taps, and exits for chains without a destination. Pure: no I/O.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from functools import partial

from srfabric.errors import RoutingError
from srfabric.model.chain import Chain
from srfabric.model.fabric import Fabric, Host
from srfabric.routing.paths import Route, chain_route, tap_route
from srfabric.rules.base import crossed
from srfabric.rules.classify import classifier_matches
from srfabric.rules.codec_rules import CodecRules, rules_for
from srfabric.rules.entries import (
    Action,
    Bucket,
    FlowEntry,
    Group,
    GroupEntry,
    Kind,
    Match,
    cookie,
    extended,
    ipv4_number,
    ipv6_number,
    match,
    match_fields,
)
from srfabric.rules.exits import exit_entries
from srfabric.rules.gateway import gateway_exit_entries
from srfabric.rules.headers import (
    pathlet_steps,
    sre_switches,
    steps_entries,
)
from srfabric.rules.lb_split import split
from srfabric.rules.pipeline import (
    HOST_IN,
    PORT_IN,
    PRIO_CHAIN,
    PRIO_PORT,
)
from srfabric.rules.proxy import (
    balanced_continuations,
    proxied_chain_entries,
    proxy_segments,
)


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
    # An SR-unaware last function hands frames back as a host would: the default routes its switch holds
    # (``route_ingresses``: a service leaf's too) take them from there.
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

    paths = chain.paths()
    if not chain.grouped:
        route = chain_route(fabric, chain, paths[0].functions)
        return Placement(entries_along(route), [], crossed(fabric, [route]))
    # Each way (a path, then a tap's copy) cut at the ingress: the header its bucket writes, and the entries
    # past the ingress with the way's weight.
    ways = [(partial(chain_route, fabric, chain, p.functions), p.weight) for p in paths]
    ways += [(partial(tap_route, fabric, chain, tap), 1) for tap in chain.taps]
    routes: list[Route] = []
    headers: list[tuple[Action, ...]] = []
    later: list[tuple[int, FlowEntry, int]] = []
    for route_of, weight in ways:
        routes.append(route_of())
        header, past = at_ingress(source, entries_along(routes[-1]), weight)
        headers.append(header)
        later += past
    # Ways that share an SR-unaware function and part after it are balanced again where it hands frames back.
    placed, groups = balanced_continuations(fabric, chain, later, what)
    for tap in chain.taps:
        egress = fabric.functions[tap].egress
        # A tap returns its copy on its egress port: the copy ends there.
        placed.append((egress[0], FlowEntry(PORT_IN, PRIO_PORT + 1, match(in_port=egress[1]), (),
                                            cookie=cookie(Kind.MISS))))
    entries, ingress_groups = ingress_entries(chain, source, matches, headers[:len(paths)],
                                              tuple(Bucket(header) for header in headers[len(paths):]))
    return Placement(placed + entries, groups + ingress_groups, crossed(fabric, routes))


def at_ingress(source: Host, placed: list[tuple[int, FlowEntry]], weight: int
               ) -> tuple[tuple[Action, ...], list[tuple[int, FlowEntry, int]]]:
    """One way's entries cut at the chain's ingress: the ingress entry's actions (the header the way's bucket
    writes), and the entries past it with the way's ``weight``."""
    first: tuple[Action, ...] = ()
    later = []
    for dpid, entry in placed:
        if entry.table == HOST_IN and match_fields(entry.match)["in_port"][0] == source.port \
                and dpid == source.dpid:  # not a continuation after an SR-unaware function
            first = entry.actions
        else:
            later.append((dpid, entry, weight))
    return first, later


def ingress_entries(chain: Chain, source: Host, matches: list[Match], headers: list[tuple[Action, ...]],
                    copies: tuple[Bucket, ...]) -> tuple[list[tuple[int, FlowEntry]], list[tuple[int, GroupEntry]]]:
    """The chain's entries at its ingress, and their groups: a select group over the ways (or, with
    ``lb_fields``, one masked entry per value of their low bits: ``lb_split``), each in an all group that also
    sends every tap its copy when the chain has taps."""
    groups: list[tuple[int, GroupEntry]] = []

    def with_copies(main: tuple[Action, ...], group_id: int) -> tuple[Action, ...]:
        if not copies:
            return main
        groups.append((source.dpid, GroupEntry(group_id, "all", (Bucket(main), *copies))))
        return (Group(group_id),)

    paths = chain.paths()
    ingress_cookie = cookie(Kind.CHAIN, chain.chain_id)
    placed: list[tuple[int, FlowEntry]] = []
    # IPv6: the select group's hash spreads the flows (the split works on IPv4's fields).
    balanced = len(paths) > 1 and bool(chain.lb_fields) and not chain.classifier.ipv6
    weights = [p.weight for p in paths]
    splits = [balanced_split(m, chain, ipv4_number(source.ip), weights) for m in matches] if balanced else []
    if splits and all(parts is not None for parts in splits):
        actions: dict[int, tuple[Action, ...]] = {}
        for parts in splits:
            for part, index in parts or ():
                if index not in actions:
                    actions[index] = with_copies(headers[index], tap_group_id(chain.chain_id, index))
                placed.append((source.dpid, FlowEntry(HOST_IN, PRIO_CHAIN + chain.priority, part, actions[index],
                                                      cookie=ingress_cookie)))
        return placed, groups
    select_id, all_id = group_ids(chain.chain_id)
    if len(paths) > 1:
        buckets = tuple(Bucket(header, p.weight) for header, p in zip(headers, paths, strict=True))
        groups.append((source.dpid, GroupEntry(select_id, "select", buckets)))
        main: tuple[Action, ...] = (Group(select_id),)
    else:
        main = headers[0]
    ingress_actions = with_copies(main, all_id)
    placed += [(source.dpid, FlowEntry(HOST_IN, PRIO_CHAIN + chain.priority, m, ingress_actions,
                                       cookie=ingress_cookie)) for m in matches]
    return placed, groups


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
        return [(f"ipv4_{side}", ipv4_number(host.ip))]
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
