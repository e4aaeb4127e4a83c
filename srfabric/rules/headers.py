"""Headers along a route: split it into pathlets, encode each one's header, and place the entries that
write them (the first at the ingress, later ones where the previous header runs out).

Pure, like the rest of ``rules``; ``compile``, reactive setup, streams and the views share it.
"""

from __future__ import annotations

import ipaddress
from dataclasses import replace
from functools import lru_cache

from srfabric.errors import RoutingError
from srfabric.model.fabric import Fabric, Host
from srfabric.routing.pathlets import Pathlet, split_pathlets
from srfabric.routing.paths import Route
from srfabric.rules.codec_rules import CodecRules
from srfabric.rules.entries import (
    Action,
    Bucket,
    DigestParts,
    FlowEntry,
    Group,
    GroupEntry,
    Kind,
    Match,
    Output,
    cookie,
    extended,
    ipv6_number,
    match,
)
from srfabric.rules.pipeline import (
    HOST_IN,
    IPV4_ETHERTYPE,
    IPV6_ETHERTYPE,
    PRIO_CHAIN,
    PRIO_FLOW,
    PRIO_REENCAP,
    PRIO_ROUTE,
    TERMINATE,
)


def _ip(text: str) -> int:
    return int(ipaddress.IPv4Address(text))


def host_addresses(host: Host, side: str) -> list[Match]:
    """Matches of a host's addresses as source or destination (``side`` "src" or "dst"): IPv4, then each IPv6.

    >>> [dict((n, v) for n, v, _ in m)["eth_type"] for m in host_addresses(Host("h", 1, "10.0.0.1", 1, 1,
    ...                                                                                 ("fd00::1",)), "dst")]
    [2048, 34525]
    """
    return [match(eth_type=IPV4_ETHERTYPE, **{f"ipv4_{side}": _ip(host.ip)}),
            *(match(eth_type=IPV6_ETHERTYPE, **{f"ipv6_{side}": ipv6_number(a)}) for a in host.ip6)]


def _check_ports(route: Route, rules: CodecRules, what: str) -> None:
    for index, hop in enumerate(route.hops):
        if not 1 <= hop.port <= rules.max_port:
            raise RoutingError(
                what,
                f"hop {index} leaves switch {hop.dpid:#x} through port {hop.port}, "
                f"outside 1..{rules.max_port} that {rules.name} can encode",
            )


PathletSteps = list[tuple[Pathlet, tuple[Action, ...]]]
"""Each pathlet of a route with the actions that write its header and send it on."""


def pathlet_steps(route: Route, rules: CodecRules, sre: set[int], what: str, ipv6: bool = False) -> PathletSteps:
    """Split ``route`` into pathlets and encode each one's header (none for a route without hops): what
    every match steered along the route shares, so a caller may keep it (reactive setup does, per route).
    ``ipv6``: the headers are for IPv6 frames."""
    _check_ports(route, rules, what)
    pathlets: list[Pathlet] = split_pathlets(route, rules.capacity, lambda dpid: dpid in sre)
    return [(pathlet, rules.encapsulate(pathlet.encoded, pathlet.first_port, ipv6)) for pathlet in pathlets]


def route_entries(
    route: Route,
    matches: list[Match],
    rules: CodecRules,
    sre: set[int],
    kind: Kind,
    owner: int,
    what: str,
    endpoints: dict[str, int] | None = None,
    raise_by: int = 0,
    ipv6: bool = False,
) -> list[tuple[int, FlowEntry]]:
    """Entries that steer ``matches`` (all IPv4, or with ``ipv6`` all IPv6) along ``route``: one header per
    pathlet, at its start.

    The first pathlet is written in HOST_IN (``matches`` carry the ingress
    port when it matters); later pathlets in TERMINATE at the switch where the
    previous header ran out, matched on the port the packet arrives on and on
    ``endpoints`` (the route's source and destination addresses), so that
    other traffic whose header runs out on that port is never pulled in.
    """
    return steps_entries(route, pathlet_steps(route, rules, sre, what, ipv6), matches, kind, owner, endpoints,
                         raise_by)


def steps_entries(
    route: Route,
    steps: PathletSteps,
    matches: list[Match],
    kind: Kind,
    owner: int,
    endpoints: dict[str, int] | None = None,
    raise_by: int = 0,
    idle_timeout: int = 0,
) -> list[tuple[int, FlowEntry]]:
    """``route_entries`` with the route's ``pathlet_steps`` already worked out; ``idle_timeout`` (seconds) for
    entries that go when unused (reactive flows)."""
    priority = {Kind.CHAIN: PRIO_CHAIN, Kind.FLOW: PRIO_FLOW}.get(kind, PRIO_ROUTE) + raise_by
    # Above the TERMINATE restore entries (PRIO_ROUTE), which would otherwise tie with route boundaries.
    boundary_priority = (PRIO_CHAIN if kind == Kind.CHAIN else PRIO_REENCAP) + raise_by
    if not route.hops:
        return [
            (route.entry[0], FlowEntry(HOST_IN, priority, m, (Output(route.delivery[1]),), cookie=cookie(kind, owner),
                                       idle_timeout=idle_timeout))
            for m in matches
        ]
    placed = []
    for index, (pathlet, actions) in enumerate(steps):
        for m in matches:
            if index == 0:
                placed.append((pathlet.start[0], FlowEntry(HOST_IN, priority, m, actions, cookie=cookie(kind, owner),
                                                           idle_timeout=idle_timeout)))
            else:
                boundary = extended(m, **(endpoints or {}), in_port=pathlet.start[1])
                entry = FlowEntry(TERMINATE, boundary_priority, boundary, actions, cookie=cookie(kind, owner),
                                  idle_timeout=idle_timeout)
                placed.append((pathlet.start[0], entry))
    return placed


ROUTE_GROUPS = 0x80000000
"""Default routes' groups: apart from chains' (``compile.group_ids``, below 2**26) and taps' (2**30 and up)."""
IPV6_ROUTES = 0x10000000
"""Added to a switch's route group id for its IPv6 hosts' group (``route_group_ids`` use the 28 bits below)."""


def route_group_ids(fabric: Fabric) -> dict[int, int]:
    """The indirect group each switch with hosts has at every ingress for the way to it (``host_route_entries``):
    ``ROUTE_GROUPS`` plus the switch's datapath id's low 28 bits, or, for a switch whose low bits another has
    taken (rare: ids that differ only above them), the next free number after them; so a switch's group keeps
    its id when other switches come and go, unless they collide with it.

    >>> from srfabric.model.topo import fat_tree
    >>> hex(route_group_ids(fat_tree(4).to_fabric())[0x101])
    '0x80000101'
    """
    ids: dict[int, int] = {}
    later: list[int] = []
    for dpid in sorted({host.dpid for host in fabric.hosts.values()}):  # the lowest id keeps its own bits
        if (dpid & 0x0FFFFFFF) in ids.values():
            later.append(dpid)
        else:
            ids[dpid] = dpid & 0x0FFFFFFF
    taken = set(ids.values())
    for dpid in later:  # only after every switch has its own bits: none is pushed off them
        value = dpid & 0x0FFFFFFF
        while value in taken:
            value = (value + 1) & 0x0FFFFFFF
        taken.add(value)
        ids[dpid] = value
    return {dpid: ROUTE_GROUPS | value for dpid, value in ids.items()}


def host_route_entries(
    route: Route, dsts: list[Match], rules: CodecRules, sre: set[int], group_id: int, what: str, raise_by: int = 0,
    ipv6: bool = False, steps: PathletSteps | None = None,
) -> tuple[list[tuple[int, FlowEntry]], list[tuple[int, GroupEntry]]]:
    """A default route's entries: at the ingress, each of the host's matches (``dsts``: its IPv4 address, or
    with ``ipv6`` its IPv6 ones) hands the frame to an indirect group that writes the first header, one group
    per destination switch (and family); the group is what changes when the way there does, so a repair
    rewrites one group per (ingress, destination switch), not one entry per host.

    Every host of a switch shares its group: the header ends at that switch, which delivers by address. So do
    its route's ``pathlet_steps``: a caller that routes many hosts may pass them (``steps``) instead of having
    them worked out for each host.
    """
    if steps is None:
        steps = pathlet_steps(route, rules, sre, what, ipv6)
    if len(steps) == 1 and route.hops and dsts:  # one header to the destination switch: what most routes are
        # (steps_entries' entries at the ingress, made here at once with the group's action: a fabric of a
        # thousand hosts has a hundred thousand routes)
        (pathlet, actions), = steps
        ingress, priority = pathlet.start[0], PRIO_ROUTE + raise_by
        handed, kept, parts = _route_parts(group_id, priority)
        return ([(ingress, parts.entry(HOST_IN, priority, m, handed, kept, 0)) for m in dsts],
                [(ingress, GroupEntry(group_id, "indirect", (Bucket(actions),)))])
    placed = steps_entries(route, steps, dsts, Kind.ROUTE, 0, raise_by=raise_by)
    if not route.hops or not dsts:
        return placed, []
    ingress, first = placed[0]
    group = GroupEntry(group_id, "indirect", (Bucket(first.actions),))
    return [(at, replace(entry, actions=(Group(group_id),)) if entry.table == HOST_IN else entry)
            for at, entry in placed], [(ingress, group)]


@lru_cache(maxsize=65536)
def _route_parts(group_id: int, priority: int) -> tuple[tuple[Action, ...], int, DigestParts]:
    """A default route's ingress actions (to group ``group_id``), cookie and digest but for the match: the same
    for every host of a destination switch, from every ingress."""
    handed: tuple[Action, ...] = (Group(group_id),)
    kept = cookie(Kind.ROUTE, 0)
    return handed, kept, DigestParts.of(HOST_IN, priority, handed, None, kept)


def route_ingresses(fabric: Fabric) -> set[int]:
    """Switches that hold default routes (to every host, and to the gateway): those with hosts, and service
    leaves, where an SR-unaware function hands frames back as a host would. Transit switches hold none.

    >>> from srfabric.model.topo import tsn_fig1
    >>> from srfabric.model.fabric import ServiceFunction
    >>> fabric = tsn_fig1().to_fabric()
    >>> hosts = route_ingresses(fabric)
    >>> fabric.add_function(ServiceFunction("nat", (2, 8), (2, 9), proxy=True))
    >>> sorted(route_ingresses(fabric) - hosts)
    [2]
    """
    return {host.dpid for host in fabric.hosts.values()} | {
        function.egress[0] for function in fabric.functions.values() if function.proxy}


def sre_switches(fabric: Fabric) -> set[int]:
    """Switches that may write headers: SRE-marked ones and every switch with hosts."""
    with_hosts = {host.dpid for host in fabric.hosts.values()}
    return {dpid for dpid, sw in fabric.switches.items() if sw.can_encapsulate} | with_hosts
