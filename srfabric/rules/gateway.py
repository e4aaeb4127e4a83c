"""The gateway: where IPv4 to no host of the fabric goes ("everything else", e.g. an uplink router).

The gateway is a host of the fabric (learned like any other), named by address
(``Fabric.set_gateway``). Every edge sends IPv4 that no host route matches to it,
one priority below the host routes, with the header of its switch's group (the
way to that switch is the way to its hosts); the gateway's switch delivers what
no host takes to it. Frames that come in from the gateway carry addresses of no
host, so under ``mac-nibble`` (which writes the path into the source MAC) the
egress edge restores the gateway's own MAC, the one such frames arrived with.
A chain without a destination goes on to the gateway from the switch its last
function hands frames back to (``gateway_exit_entries``). State: one entry per
edge, one delivery entry, under ``mac-nibble`` one restore entry per edge, and
one exit entry per function egress that ends such chains; nothing on transit
switches.

Examples
--------
>>> from srfabric.model.topo import tsn_fig1
>>> from srfabric.rules.codec_rules import rules_for
>>> topo = tsn_fig1(); topo.gateway = "h4"
>>> fabric = topo.to_fabric()
>>> [(e.table, e.priority) for e in gateway_edge_entries(fabric, fabric.gateway().dpid, rules_for("mac-nibble"))]
[(3, 99), (4, 99)]
"""

from __future__ import annotations

from srfabric.errors import RoutingError
from srfabric.model.fabric import Endpoint, Fabric, Host
from srfabric.routing.paths import Route, host_route
from srfabric.rules.codec_rules import CodecRules
from srfabric.rules.entries import FlowEntry, GroupEntry, Kind, Output, SetField, cookie, extended, match
from srfabric.rules.headers import host_route_entries, route_entries
from srfabric.rules.pipeline import (
    DELIVER,
    HOST_IN,
    IPV4_ETHERTYPE,
    PRIO_GATEWAY,
    PRIO_ROUTE,
    TERMINATE,
)

EVERYTHING = match(eth_type=IPV4_ETHERTYPE)
BELOW_HOSTS = PRIO_GATEWAY - PRIO_ROUTE  # raise_by for a route entry one priority below the host routes

def gateway_edge_entries(fabric: Fabric, dpid: int, rules: CodecRules) -> list[FlowEntry]:
    """An edge's fixed entries for the gateway: restore the gateway's MAC on frames from it (codecs that write
    the source MAC), and on the gateway's own switch, hand it what no host takes."""
    gateway = fabric.gateway()
    if gateway is None:
        return []
    entries = []
    if rules.rewrites_source_mac:
        entries.append(FlowEntry(TERMINATE, PRIO_GATEWAY, EVERYTHING, (SetField("eth_src", gateway.mac),),
                                 goto=DELIVER, cookie=cookie(Kind.RESTORE)))
    if gateway.dpid == dpid:
        entries.append(FlowEntry(DELIVER, PRIO_GATEWAY, EVERYTHING,
                                 (SetField("eth_dst", gateway.mac), Output(gateway.port)), cookie=cookie(Kind.DELIVER)))
    return entries


def _one_header(placed: list[tuple[int, FlowEntry]], what: str) -> None:
    """A way to the gateway must fit one header: a second one would be written where the first runs out, matched
    on the arrival port alone (the gateway takes any address), and would take that switch's own hosts' frames."""
    for dpid, entry in placed:
        if entry.table != HOST_IN:
            raise RoutingError(what, f"its way to the gateway needs a second header at switch {dpid:#x}, "
                                     "which the route for every other address cannot have")


def gateway_route_entries(fabric: Fabric, gateway: Host, dpid: int, rules: CodecRules, sre: set[int],
                          group_id: int) -> tuple[list[tuple[int, FlowEntry]], list[tuple[int, GroupEntry]], Route]:
    """The ingress ``dpid``'s route for everything else to ``gateway``, through the group of its switch."""
    route = host_route(fabric, (dpid, 0), gateway.name)
    what = f"gateway from switch {dpid:#x}"
    placed, groups = host_route_entries(route, [EVERYTHING], rules, sre, group_id, what, raise_by=BELOW_HOSTS)
    _one_header(placed, what)
    return placed, groups, route


def gateway_exit_entries(fabric: Fabric, egress: Endpoint, rules: CodecRules, sre: set[int], what: str
                         ) -> tuple[list[tuple[int, FlowEntry]], list[Route]]:
    """A destination-less chain's exit for everything else: frames handed back at ``egress`` that no host takes
    go on to the gateway (``exits.exit_entries`` holds the hosts' exits).

    The entry sits in the delivery table, below the switch's own hosts, matched on the port the frame came
    back on: a frame gets there only after its source was restored and no host's exit or delivery took it. A
    gateway on this very switch needs none (its delivery entry for everything else takes the frame).
    """
    gateway = fabric.gateway()
    if gateway is None or gateway.dpid == egress[0]:
        return [], []
    route = host_route(fabric, egress, gateway.name)
    placed = route_entries(route, [EVERYTHING], rules, sre, Kind.ROUTE, 0, f"{what} to the gateway",
                           raise_by=BELOW_HOSTS)
    _one_header(placed, f"{what} to the gateway")
    (at, first), = placed
    return [(at, FlowEntry(DELIVER, PRIO_GATEWAY, extended(EVERYTHING, in_port=egress[1]), first.actions,
                           cookie=first.cookie))], [route]
