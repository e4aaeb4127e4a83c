"""What a switch holds whatever chains and streams run: port roles, control and security entries, the decode
steps, restore and delivery at header-writing edges, and every host's default route. Depends on switches,
links and hosts only (service functions' ports apart), so the compile engine keeps it per topology version.
Pure: no I/O.
"""

from __future__ import annotations

from srfabric.model.fabric import Fabric, Host
from srfabric.routing.paths import Route, host_route
from srfabric.rules.arp_answers import GROUP_SENDER, PROBE
from srfabric.rules.codec_rules import CodecRules
from srfabric.rules.entries import (
    FlowEntry,
    Kind,
    Match,
    Output,
    SetField,
    ToController,
    cookie,
    match,
)
from srfabric.rules.gateway import gateway_edge_entries
from srfabric.rules.headers import (
    PathletSteps,
    host_addresses,
    pathlet_steps,
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
        PROBE,  # known hosts' addresses are answered at the edge (``arp_answers``), but never to a probe
        GROUP_SENDER,  # nor to a forged sender
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
    """The default routes' paths, headers and crossed links by (ingress, destination switch), and each host's
    addresses, worked out once for all the hosts of a switch in one ``topology_tables`` call: their routes differ
    only in the port that delivers."""

    def __init__(self, rules: CodecRules, sre: set[int]) -> None:
        self.rules, self.sre = rules, sre
        self.found: dict[tuple[int, int], tuple[Route, PathletSteps, PathletSteps, frozenset[tuple[int, int]]]] = {}
        self._addresses: dict[str, tuple[Host, list[Match]]] = {}

    def steps(self, fabric: Fabric, ingress: int, host: str, what: str
              ) -> tuple[Route, PathletSteps, PathletSteps, frozenset[tuple[int, int]]]:
        """``host``'s route from ``ingress``, its headers for IPv4 and IPv6 frames and the fabric links it
        crosses (an error, naming ``what``, is raised for each host afresh)."""
        destination = fabric.hosts[host]
        key = (ingress, destination.dpid)
        found = self.found.get(key)
        if found is None:
            route = host_route(fabric, (ingress, 0), host)
            found = self.found[key] = (route, pathlet_steps(route, self.rules, self.sre, what),
                                       pathlet_steps(route, self.rules, self.sre, what, ipv6=True),
                                       crossed(fabric, [route]))  # the delivering port is no link: all alike
        route, v4, v6, links = found
        return Route(route.entry, route.hops, (destination.dpid, destination.port)), v4, v6, links

    def addresses(self, host: Host) -> list[Match]:
        """``host_addresses(host, "dst")``, once per host (the very host object) in this call."""
        kept = self._addresses.get(host.name)
        if kept is None or kept[0] is not host:
            kept = self._addresses[host.name] = (host, host_addresses(host, "dst"))
        return kept[1]
