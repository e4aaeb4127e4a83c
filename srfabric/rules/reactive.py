"""Reactive flow setup: default routes are not installed ahead; a flow's first packet goes to the
controller, which installs an entry for that one flow and sends the packet on.

Under source routing only the ingress switch learns about the flow: one exact
5-tuple entry that writes the whole path into the header (plus one per later
pathlet, if the path needs several). Under hop-by-hop rules every switch on the
path gets an entry, which is what the control-traffic comparison is about.
"""

from __future__ import annotations

from srfabric.controller.packets import FiveTuple
from srfabric.errors import RoutingError
from srfabric.model.fabric import Endpoint, Fabric, Host
from srfabric.routing.paths import Route, host_route
from srfabric.rules.codec_rules import rules_for
from srfabric.rules.compile import route_entries, sre_switches
from srfabric.rules.entries import FlowEntry, Kind, Match, Output, ToController, cookie, ipv4_number, match
from srfabric.rules.pipeline import HOST_IN, IPV4_ETHERTYPE, PORT_IN, PRIO_FLOW, PRIO_ROUTE


def flow_match(flow: FiveTuple, in_port: int) -> Match:
    """The exact match of one flow arriving on ``in_port``.

    >>> dict((name, value) for name, value, _ in flow_match(FiveTuple("10.0.0.1", "10.0.0.2", 1), 3))
    {'eth_type': 2048, 'in_port': 3, 'ip_proto': 1, 'ipv4_dst': 167772162, 'ipv4_src': 167772161}
    """
    fields: dict[str, int | tuple[int, int]] = {
        "in_port": in_port, "eth_type": IPV4_ETHERTYPE, "ip_proto": flow.proto,
        "ipv4_src": ipv4_number(flow.src), "ipv4_dst": ipv4_number(flow.dst),
    }
    if flow.proto in (6, 17):
        prefix = "tcp" if flow.proto == 6 else "udp"
        fields[f"{prefix}_src"], fields[f"{prefix}_dst"] = flow.sport, flow.dport
    return match(**fields)


def reactive_tables(tables: dict[int, list[FlowEntry]], steering: str) -> dict[int, list[FlowEntry]]:
    """Compiled tables with the default routes taken out and unmatched IPv4 from hosts sent to the controller.

    Chains stay proactive. Under source routing the punt sits in HOST_IN, which only
    host ports reach; under hop-by-hop rules it sits in PORT_IN of every switch.
    """
    table = PORT_IN if steering == "hop-by-hop" else HOST_IN
    punt = FlowEntry(table, PRIO_ROUTE, match(eth_type=IPV4_ETHERTYPE), (ToController(),), cookie=cookie(Kind.CONTROL))
    return {dpid: [e for e in entries if e.kind != Kind.ROUTE] + [punt] for dpid, entries in tables.items()}


class RouteCache:
    """Routes by (entry, destination host), hosts by address and the SRE switches, kept while the fabric's
    switch graph stays put.

    Flows between the same two places share one route, so only the first pays
    for the shortest-path search. A change of switches, links or hosts makes a
    new graph object, which empties the cache.
    """

    def __init__(self) -> None:
        self._graph: object = None
        self._routes: dict[tuple[Endpoint, str, Endpoint], Route] = {}
        self._hosts: dict[str, Host] = {}
        self._sre: set[int] = set()

    def _current(self, fabric: Fabric) -> None:
        graph = fabric.graph()
        if graph is not self._graph:
            self._graph, self._routes = graph, {}
            self._hosts = {}
            for host in fabric.hosts.values():
                self._hosts.setdefault(host.ip, host)  # the first one, as ``Fabric.host_by_ip`` finds it
            self._sre = sre_switches(fabric)

    def host_by_ip(self, fabric: Fabric, ip: str) -> Host | None:
        self._current(fabric)
        return self._hosts.get(ip)

    def sre(self, fabric: Fabric) -> set[int]:
        self._current(fabric)
        return self._sre

    def route(self, fabric: Fabric, entry: Endpoint, destination: Host) -> Route:
        self._current(fabric)
        key = (entry, destination.name, (destination.dpid, destination.port))
        found = self._routes.get(key)
        if found is None:
            found = self._routes[key] = host_route(fabric, entry, destination.name)
        return found


def flow_entries(
    fabric: Fabric, flow: FiveTuple, entry: Endpoint, codec: str, steering: str, routes: RouteCache | None = None
) -> list[tuple[int, FlowEntry]]:
    """The entries that carry ``flow`` from ``entry`` (switch, port) to its destination host.

    The entry at the ingress switch comes last, so that a switch later on the
    path never sees the flow before its own entry was sent. ``routes`` keeps
    routes between calls.

    Examples
    --------
    >>> from srfabric.model.topo import fat_tree
    >>> fabric = fat_tree(4).to_fabric()
    >>> h1, h16 = fabric.hosts["h1"], fabric.hosts["h16"]
    >>> flow = FiveTuple(h1.ip, h16.ip, 17, 4000, 5000)
    >>> len(flow_entries(fabric, flow, (h1.dpid, h1.port), "mac-nibble", "source-routing"))
    1
    >>> len(flow_entries(fabric, flow, (h1.dpid, h1.port), "mac-nibble", "hop-by-hop"))
    5
    """
    routes = routes if routes is not None else RouteCache()
    destination = routes.host_by_ip(fabric, flow.dst)
    if destination is None:
        raise RoutingError("ipv4_dst", f"{flow.dst} is not a known host")
    route = routes.route(fabric, entry, destination)
    what = f"flow {flow.src}->{flow.dst}"
    if steering == "hop-by-hop":
        placed = [(dpid, FlowEntry(PORT_IN, PRIO_FLOW, flow_match(flow, in_port), (Output(out_port),),
                                   cookie=cookie(Kind.FLOW)))
                  for dpid, in_port, out_port in route.visits()]
    else:
        # The flow's match already names both addresses, so later pathlets need no extra endpoints.
        placed = route_entries(route, [flow_match(flow, entry[1])], rules_for(codec), routes.sre(fabric),
                               Kind.FLOW, 0, what)
    # Both lists start with the ingress switch's entry (the first visit, the first pathlet): move it last.
    return placed[1:] + placed[:1]
