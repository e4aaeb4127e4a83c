"""Rule-based steering, the usual SFC approach, for comparison with source routing.

Every switch on a chain's route holds an entry for that chain (classifier plus
the port the packet arrives on, output to the next port), and every switch holds
a route to every host. Frames are never rewritten. A route that crosses one
switch twice through the same port cannot be told apart without a tag in the
packet (NSH, an MPLS label); such a chain is refused by name.
"""

from __future__ import annotations

from collections.abc import Sequence

from srfabric.errors import ModelError, RoutingError, SrfabricError
from srfabric.model.chain import Chain
from srfabric.model.fabric import Fabric
from srfabric.routing.paths import Route, chain_route, host_route
from srfabric.rules.entries import FlowEntry, Kind, Output, SetField, ToController, cookie, ipv4_number, match
from srfabric.rules.pipeline import (
    ARP_ETHERTYPE,
    IPV4_ETHERTYPE,
    LLDP_ETHERTYPE,
    PORT_IN,
    PRIO_ARP,
    PRIO_CHAIN,
    PRIO_CONTROL,
    PRIO_GATEWAY,
    PRIO_MISS,
    PRIO_ROUTE,
)
from srfabric.rules.placement import chain_matches, without_dead_functions
from srfabric.rules.tables import Tables, reported

STEERING_NAMES = ("source-routing", "hop-by-hop")


def _base_entries() -> list[FlowEntry]:
    return [
        FlowEntry(PORT_IN, PRIO_CONTROL, match(eth_type=LLDP_ETHERTYPE), (ToController(),),
                  cookie=cookie(Kind.CONTROL)),
        FlowEntry(PORT_IN, PRIO_ARP, match(eth_type=ARP_ETHERTYPE), (ToController(),), cookie=cookie(Kind.CONTROL)),
        FlowEntry(PORT_IN, PRIO_MISS, (), cookie=cookie(Kind.MISS)),
    ]


def _first_port(route: Route) -> int:
    return route.hops[0].port if route.hops else route.delivery[1]


def _chain_entries(fabric: Fabric, route: Route, chain: Chain) -> list[tuple[int, FlowEntry]]:
    """One entry per switch visit: (what source routing's ingress matches, arrival port) -> next port."""
    owner = cookie(Kind.CHAIN, chain.chain_id)
    # An SR-unaware function (a router) takes only frames addressed to its MAC.
    addressed = {f.ingress: (SetField("eth_dst", f.mac),) for f in fabric.functions.values()
                 if f.proxy and f.mac is not None}
    return [(dpid, FlowEntry(PORT_IN, PRIO_CHAIN, m, (*addressed.get((dpid, out_port), ()), Output(out_port)),
                             cookie=owner))
            for dpid, in_port, out_port in route.visits()
            for m in chain_matches(fabric, chain, in_port)]


def compile_hop_by_hop(
    fabric: Fabric, chains: Sequence[Chain], problems: list[SrfabricError] | None = None
) -> dict[int, list[FlowEntry]]:
    """Every entry every switch holds under rule-based steering, sorted like the compile engine's (``compile``).

    Examples
    --------
    >>> from srfabric.model.topo import fat_tree
    >>> tables = compile_hop_by_hop(fat_tree(4).to_fabric(), [])
    >>> sum(1 for e in tables[0x301] if e.kind == Kind.ROUTE)
    16
    """
    tables = Tables(fabric.switches)
    for dpid in fabric.switches:
        tables.add_all([(dpid, entry) for entry in _base_entries()], "fabric")
    for host in sorted(fabric.hosts.values(), key=lambda h: h.name):
        what = f"host {host.name}"
        dst = match(eth_type=IPV4_ETHERTYPE, ipv4_dst=ipv4_number(host.ip))
        with reported(problems, what):
            placed = [(dpid, FlowEntry(PORT_IN, PRIO_ROUTE, dst, (Output(_first_port(host_route(fabric, (dpid, 0),
                                                                                                   host.name))),),
                                       cookie=cookie(Kind.ROUTE))) for dpid in fabric.switches]
            tables.add_all(placed, what)
    gateway = fabric.gateway()
    if gateway is not None:  # everything else: each switch's next hop towards the gateway, below the hosts'
        with reported(problems, "gateway"):
            tables.add_all([(dpid, FlowEntry(PORT_IN, PRIO_GATEWAY, match(eth_type=IPV4_ETHERTYPE),
                                             (Output(_first_port(host_route(fabric, (dpid, 0), gateway.name))),),
                                             cookie=cookie(Kind.ROUTE))) for dpid in fabric.switches], "gateway")
    for chain in chains:
        what = f"chain {chain.name}"
        with reported(problems, what):
            chain.validate(set(fabric.hosts), set(fabric.functions))
            if chain.destination is None:
                raise ModelError("steering", f"chain {chain.name} has no destination: hop-by-hop rules follow a "
                                             "chain to its destination host (source routing steers chains without one)")
            rewriting = sorted({n for path in chain.paths() for n in path.functions if fabric.functions[n].rewrites})
            if rewriting:
                raise ModelError("steering", f"chain {chain.name} crosses {', '.join(rewriting)}, which rewrites "
                                             "the fields every switch after it matches: hop-by-hop rules cannot "
                                             "follow it (source routing's proxy can)")
            live = without_dead_functions(fabric, chain)  # the first live alternative when a function is down
            entries = _chain_entries(fabric, chain_route(fabric, chain,
                                                         None if live is chain else live.paths()[0].functions), chain)
            seen: dict[tuple[int, object], FlowEntry] = {}
            for dpid, entry in entries:
                old = seen.setdefault((dpid, entry.key), entry)
                if old != entry:
                    raise RoutingError(what, f"its route enters switch {dpid:#x} twice through one port and leaves "
                                              "differently; hop-by-hop rules cannot tell the visits apart")
            tables.add_all(entries, what)
    return tables.sorted()

