"""Reactive flow setup: default routes are not installed ahead; a flow's first packet goes to the
controller, which installs an entry for that one flow and sends the packet on.

Under source routing only the ingress switch learns about the flow: one exact
5-tuple entry that writes the whole path into the header (plus one per later
pathlet, if the path needs several). Under hop-by-hop rules every switch on the
path gets an entry, which is what the control-traffic comparison is about.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from srfabric.errors import RoutingError
from srfabric.model.fabric import Endpoint, Fabric, Host
from srfabric.model.flow import FiveTuple
from srfabric.routing.paths import Route, host_route
from srfabric.rules.codec_rules import CodecRules, rules_for
from srfabric.rules.entries import (
    Action,
    DigestParts,
    FlowEntry,
    GroupEntry,
    Kind,
    Match,
    Output,
    ToController,
    cookie,
    ipv4_number,
    match,
)
from srfabric.rules.headers import ROUTE_GROUPS, PathletSteps, pathlet_steps, sre_switches, steps_entries
from srfabric.rules.pipeline import HOST_IN, IPV4_ETHERTYPE, NEW_FLOW, PORT_IN, PRIO_FLOW, PRIO_MISS, PRIO_ROUTE

PORT_FIELDS = {6: ("tcp_dst", "tcp_src"), 17: ("udp_dst", "udp_src")}  # (destination, source): sorted by name


def flow_match(flow: FiveTuple, in_port: int) -> Match:
    """The exact match of one flow arriving on ``in_port``: what ``match`` makes of its fields, built
    already sorted (every new flow needs one).

    >>> dict((name, value) for name, value, _ in flow_match(FiveTuple("10.0.0.1", "10.0.0.2", 1), 3))
    {'eth_type': 2048, 'in_port': 3, 'ip_proto': 1, 'ipv4_dst': 167772162, 'ipv4_src': 167772161}
    >>> flow = FiveTuple("10.0.0.1", "10.0.0.2", 6, 4000, 80)
    >>> flow_match(flow, 3) == match(in_port=3, eth_type=IPV4_ETHERTYPE, ip_proto=6, ipv4_src=167772161,
    ...                              ipv4_dst=167772162, tcp_src=4000, tcp_dst=80)
    True
    """
    fields: Match = (("eth_type", IPV4_ETHERTYPE, None), ("in_port", in_port, None), ("ip_proto", flow.proto, None),
                     ("ipv4_dst", ipv4_number(flow.dst), None), ("ipv4_src", ipv4_number(flow.src), None))
    ports = PORT_FIELDS.get(flow.proto)
    if ports is None:
        return fields
    return (*fields, (ports[0], flow.dport, None), (ports[1], flow.sport, None))


_MATCH_TEXT = (f"(('eth_type', {IPV4_ETHERTYPE}, None), ('in_port', %d, None), ('ip_proto', %d, None), "
               "('ipv4_dst', %d, None), ('ipv4_src', %d, None)")
_PORTS_TEXT = {proto: f", ('{dst}', %d, None), ('{src}', %d, None)" for proto, (dst, src) in PORT_FIELDS.items()}


def flow_match_text(flow: FiveTuple, in_port: int) -> tuple[Match, str]:
    """``flow_match`` and its ``repr``, written from a template: an entry's digest is taken over that text,
    and every new flow's entry needs one.

    >>> for proto in (1, 6, 17):
    ...     fields, text = flow_match_text(FiveTuple("10.0.0.1", "10.0.0.2", proto, 4000, 80), 3)
    ...     assert text == repr(fields), (text, repr(fields))
    """
    fields = flow_match(flow, in_port)
    values = (in_port, flow.proto, fields[3][1], fields[4][1])
    ports = _PORTS_TEXT.get(flow.proto)
    if ports is None:
        return fields, _MATCH_TEXT % values + ")"
    return fields, (_MATCH_TEXT + ports) % (*values, flow.dport, flow.sport) + ")"


def reactive_tables(tables: dict[int, list[FlowEntry]], steering: str) -> dict[int, list[FlowEntry]]:
    """Compiled tables with the default routes taken out and unmatched IPv4 from hosts sent to the controller.

    Chains stay proactive. Under source routing the punt sits in HOST_IN, which only
    host ports reach; under hop-by-hop rules it sits in PORT_IN of every switch. It goes on to NEW_FLOW, whose
    table-miss entry sends the frame up: a table miss, which only the switch's MASTER hears.
    """
    table = PORT_IN if steering == "hop-by-hop" else HOST_IN
    punt = [FlowEntry(table, PRIO_ROUTE, match(eth_type=IPV4_ETHERTYPE), goto=NEW_FLOW, cookie=cookie(Kind.CONTROL)),
            FlowEntry(NEW_FLOW, PRIO_MISS, (), (ToController(),), cookie=cookie(Kind.CONTROL))]
    return {dpid: [e for e in entries if e.kind != Kind.ROUTE] + punt for dpid, entries in tables.items()}


def reactive_groups(groups: dict[int, list[GroupEntry]]) -> dict[int, list[GroupEntry]]:
    """Compiled groups without the default routes' (``reactive_tables`` takes out the entries that use them)."""
    return {dpid: [g for g in held if not g.group_id & ROUTE_GROUPS] for dpid, held in groups.items()}


class RouteCache:
    """Routes by (entry, destination host), their encoded pathlets by codec, hosts by address and the
    SRE switches, kept while the fabric's switch graph stays put.

    Flows between the same two places share one route, so only the first pays
    for the shortest-path search and the header. A change of switches, links or
    hosts makes a new graph object, which empties the cache.
    """

    def __init__(self) -> None:
        self._graph: object = None
        self._routes: dict[tuple[Endpoint, str, Endpoint], Route] = {}
        self._steps: dict[tuple[Endpoint, str, Endpoint, str], PathletSteps] = {}
        self._plans: dict[tuple[Endpoint, str, int, int, str, str], FlowPlan] = {}
        self._hosts: dict[str, Host] = {}
        self._sre: set[int] = set()
        self.misses = 0  # routes searched for (not found kept), since the cache was made

    def _current(self, fabric: Fabric) -> None:
        graph = fabric.graph()
        if graph is not self._graph:
            self._graph, self._routes, self._steps, self._plans = graph, {}, {}, {}
            self._hosts = {}
            for host in fabric.hosts.values():
                self._hosts.setdefault(host.ip, host)  # the first one, as ``Fabric.host_by_ip`` finds it
            self._sre = sre_switches(fabric)

    def host_by_ip(self, fabric: Fabric, ip: str) -> Host | None:
        self._current(fabric)
        return self._hosts.get(ip)

    def destination(self, fabric: Fabric, ip: str) -> Host | None:
        """The host a flow to ``ip`` goes to: the one with that address, else the gateway (when known)."""
        found = self.host_by_ip(fabric, ip)
        if found is None and fabric.gateway_ip is not None:
            found = self._hosts.get(fabric.gateway_ip)
        return found

    def sre(self, fabric: Fabric) -> set[int]:
        self._current(fabric)
        return self._sre

    def route(self, fabric: Fabric, entry: Endpoint, destination: Host) -> Route:
        self._current(fabric)
        key = (entry, destination.name, (destination.dpid, destination.port))
        found = self._routes.get(key)
        if found is None:
            self.misses += 1
            found = self._routes[key] = host_route(fabric, entry, destination.name)
        return found

    def steps(self, fabric: Fabric, entry: Endpoint, destination: Host, rules: CodecRules, what: str
              ) -> tuple[Route, PathletSteps]:
        """The route from ``entry`` to ``destination``, with its pathlets and their header actions under
        ``rules``; kept for later calls (a route that cannot be encoded raises each time, naming ``what``)."""
        route = self.route(fabric, entry, destination)
        key = (entry, destination.name, (destination.dpid, destination.port), rules.name)
        found = self._steps.get(key)
        if found is None:
            found = self._steps[key] = pathlet_steps(route, rules, self._sre, what)
        return route, found

    def plan(self, fabric: Fabric, flow: FiveTuple, entry: Endpoint, codec: str, steering: str) -> FlowPlan:
        """The plan of new flows like ``flow`` entering at ``entry``: kept per destination host (flows to any
        address beyond the gateway share the gateway's), so a cached flow's setup is two lookups."""
        destination = self.destination(fabric, flow.dst)
        if destination is None:
            raise RoutingError("ipv4_dst", f"{flow.dst} is not a known host, and no gateway is known")
        key = (entry, destination.name, destination.dpid, destination.port, codec, steering)
        found = self._plans.get(key)
        if found is None:
            what = f"flow {flow.src}->{flow.dst}"
            found = self._plans[key] = flow_plan(fabric, entry, destination, codec, steering, self, what)
        return found


@dataclass(frozen=True, eq=False)
class FlowStep:
    """One entry every flow along a route gets: the switch, table and priority, the port the flow arrives on
    there (its match's ``in_port``; the rest of the match is the flow's own) and the actions.

    Compared by identity: a plan's steps are made once and kept, and whatever is worked out per step (its
    digest's parts here, its instructions' bytes on the wire) is looked up by the step without hashing its
    actions.
    """

    dpid: int
    table: int
    priority: int
    in_port: int
    actions: tuple[Action, ...]

    @cached_property
    def parts(self) -> DigestParts:
        return DigestParts.of(self.table, self.priority, self.actions, None, FLOW_COOKIE)


@dataclass(frozen=True)
class FlowPlan:
    """What every new flow from one place to one host shares: its entries but for the flow's own fields, the
    ingress switch's last (see ``flow_entries``), and the fabric links they cross (a link lost drops them)."""

    steps: tuple[FlowStep, ...]
    links: frozenset[tuple[int, int]]
    switches: int  # how many switches get an entry

    def entries(self, flow: FiveTuple, idle_timeout: int = 0) -> list[tuple[int, FlowEntry]]:
        """``flow``'s entries: each step with the flow's exact match."""
        placed = []
        for step in self.steps:
            fields, text = flow_match_text(flow, step.in_port)
            placed.append((step.dpid, step.parts.entry(step.table, step.priority, fields, step.actions, FLOW_COOKIE,
                                                       idle_timeout, text)))
        return placed


FLOW_COOKIE = cookie(Kind.FLOW)


def flow_plan(fabric: Fabric, entry: Endpoint, destination: Host, codec: str, steering: str,
              routes: RouteCache, what: str) -> FlowPlan:
    """The plan of every flow from ``entry`` (switch, port) to ``destination``, with the route ``routes`` keeps;
    a route that cannot be encoded raises, naming ``what``."""
    if steering == "hop-by-hop":
        route = routes.route(fabric, entry, destination)
        steps = [FlowStep(dpid, PORT_IN, PRIO_FLOW, in_port, (Output(out_port),))
                 for dpid, in_port, out_port in route.visits()]
    else:
        route, pathlets = routes.steps(fabric, entry, destination, rules_for(codec), what)
        # Placed with a match of the ingress port alone, each later pathlet's entry naming its own in_port: a
        # flow's match names both addresses, so later pathlets need no extra endpoints.
        placed = steps_entries(route, pathlets, [match(in_port=entry[1])], Kind.FLOW, 0)
        steps = [FlowStep(dpid, e.table, e.priority, dict((n, v) for n, v, _ in e.match)["in_port"], e.actions)
                 for dpid, e in placed]
    # Both lists start with the ingress switch's entry (the first visit, the first pathlet): move it last.
    ordered = tuple(steps[1:] + steps[:1])
    return FlowPlan(ordered, frozenset((hop.dpid, hop.port) for hop in route.hops), len({s.dpid for s in ordered}))


def flow_entries(
    fabric: Fabric, flow: FiveTuple, entry: Endpoint, codec: str, steering: str, routes: RouteCache | None = None,
    idle_timeout: int = 0,
) -> list[tuple[int, FlowEntry]]:
    """The entries that carry ``flow`` from ``entry`` (switch, port) to its destination host.

    The entry at the ingress switch comes last, so that a switch later on the
    path never sees the flow before its own entry was sent. ``routes`` keeps
    routes (and their plans) between calls. With ``idle_timeout`` (seconds) each
    entry goes once no packet has matched it for that long.

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
    return routes.plan(fabric, flow, entry, codec, steering).entries(flow, idle_timeout)
