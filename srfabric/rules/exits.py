"""Where a chain without a destination goes after its last function: on by destination address, chosen at the
switch that function hands the frame back to.

The chain's header runs out when its last function hands the frame back. That
switch must be able to write headers (an edge, i.e. a switch with hosts, or an
SRE switch). For the function's egress port it holds one entry per host of the
fabric that is not its own: the frame's destination address picks the header
of the default route to that host, the one every edge writes for frames from
its hosts. Its own hosts need no entry: the restore and delivery entries every
edge has hand the frame over. This is per-destination state at that one
switch, shared by every destination-less chain whose last function hangs off
it (the entries are equal, so two chains hold them once); transit switches
hold nothing for it. A destination that is no host of the fabric goes on to
the gateway when one is set (``gateway.gateway_exit_entries``), and is dropped
there otherwise.

Examples
--------
>>> from srfabric.model.topo import tsn_fig1
>>> from srfabric.model.fabric import ServiceFunction
>>> from srfabric.rules.codec_rules import rules_for
>>> from srfabric.rules.headers import sre_switches
>>> fabric = tsn_fig1().to_fabric()
>>> fabric.add_function(ServiceFunction("fw", (1, 8), (1, 9)))
>>> placed, routes = exit_entries(fabric, (1, 9), rules_for("mac-nibble"), sre_switches(fabric), "chain c")
>>> sorted({(dpid, entry.table) for dpid, entry in placed})  # all on switch 1, where fw hands frames back
[(1, 3)]
>>> len(placed) == len([h for h in fabric.hosts.values() if h.dpid != 1])
True
"""

from __future__ import annotations

from srfabric.errors import RoutingError
from srfabric.model.fabric import Endpoint, Fabric
from srfabric.routing.paths import Route, host_route
from srfabric.rules.codec_rules import CodecRules
from srfabric.rules.entries import FlowEntry, Kind, extended, match_fields
from srfabric.rules.headers import host_addresses, route_entries
from srfabric.rules.pipeline import HOST_IN, PRIO_REENCAP, TERMINATE


def exit_entries(fabric: Fabric, egress: Endpoint, rules: CodecRules, sre: set[int],
                 what: str) -> tuple[list[tuple[int, FlowEntry]], list[Route]]:
    """The entries that send frames handed back at ``egress`` (a function's egress port) on to each host by
    destination address, and the routes they follow."""
    dpid, port = egress
    if dpid not in sre:
        raise RoutingError(what, f"its last function hands frames back at switch {dpid:#x}, which cannot write "
                                 "headers: a chain without a destination goes on from there by destination "
                                 "address, so that switch must have hosts or be an SRE")
    placed: list[tuple[int, FlowEntry]] = []
    routes = []
    for host in sorted(fabric.hosts.values(), key=lambda h: h.name):
        if host.dpid == dpid:
            continue  # delivered by the edge's own restore and delivery entries
        route = host_route(fabric, egress, host.name)
        routes.append(route)
        for destination in host_addresses(host, "dst"):
            ipv6 = "ipv6_dst" in match_fields(destination)
            for at, entry in route_entries(route, [destination], rules, sre, Kind.ROUTE, 0,
                                           f"{what} to host {host.name}", ipv6=ipv6):
                if entry.table == HOST_IN:  # the route's first header: written where the function hands frames back
                    entry = FlowEntry(TERMINATE, PRIO_REENCAP, extended(destination, in_port=port), entry.actions,
                                      cookie=entry.cookie)
                placed.append((at, entry))
    return placed, routes
