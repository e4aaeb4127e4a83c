"""The controller's view of the network: switches, directed links, hosts, service functions.

Everything here is plain data. Discovery (LLDP, ARP) fills a ``Fabric``;
routing and rule compilation read it.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Literal

import networkx as nx

from srfabric.errors import ModelError

Endpoint = tuple[int, int]
"""A switch port: (datapath id, port number)."""

Role = Literal["edge", "aggregation", "core", "switch"]
PortRole = Literal["fabric", "function", "host"]



def _ipv4(field_name: str, text: str) -> ipaddress.IPv4Address:
    try:
        return ipaddress.IPv4Address(text)
    except ValueError:
        raise ModelError(field_name, f"{text!r} is not an IPv4 address") from None

def check_ipv6(field_name: str, text: str) -> ipaddress.IPv6Address:
    """An IPv6 address a host may be reached at across the fabric: not link-local, multicast or unspecified.

    >>> check_ipv6("ip6", "fe80::1")
    Traceback (most recent call last):
    srfabric.errors.ModelError: ip6: fe80::1 is no address to route to (link-local, multicast or unspecified)
    """
    try:
        address = ipaddress.IPv6Address(text)
    except ValueError:
        raise ModelError(field_name, f"{text!r} is not an IPv6 address") from None
    if address.is_link_local or address.is_multicast or address.is_unspecified or address.is_loopback:
        raise ModelError(field_name, f"{text} is no address to route to (link-local, multicast or unspecified)")
    return address


def is_routable_ipv6(text: object) -> bool:
    """Whether ``text`` is an IPv6 address ``check_ipv6`` takes (anything else, not even text: False)."""
    try:
        check_ipv6("ip6", str(text))
    except ModelError:
        return False
    return True


@dataclass(frozen=True)
class Switch:
    """A switch; ``sre`` says whether it may (re-)encapsulate (edges by default)."""

    dpid: int
    name: str
    role: Role = "edge"
    sre: bool | None = None

    @property
    def can_encapsulate(self) -> bool:
        return self.role == "edge" if self.sre is None else self.sre


@dataclass(frozen=True)
class Host:
    """An end host attached to one switch port: its IPv4 address, and for a dual-stack host its IPv6 ones
    (global or unique-local; link-local addresses never leave the link)."""

    name: str
    mac: int
    ip: str
    dpid: int
    port: int
    ip6: tuple[str, ...] = ()


REWRITABLE = ("ip_src", "ip_dst", "l4_src", "l4_dst")
"""Flow fields an SR-unaware function may declare it changes (MAC addresses and TTL need no declaration: the
proxy never reads them)."""


@dataclass(frozen=True)
class ServiceFunction:
    """A service function: traffic enters through ``ingress`` and comes back at ``egress``.

    An SR-aware function (``proxy`` False) returns each frame with its header untouched. An SR-unaware one
    (networking-sfc's correlation None) gets the frame without a header, addressed to ``mac`` (its ingress
    port's; a router takes no other), and may route, rewrite MAC addresses, decrement the TTL and change the
    fields named in ``rewrites``: the switch it hands frames back to writes the rest of the path, choosing it by
    the fields the function kept (see ``rules.proxy``).
    """

    name: str
    ingress: Endpoint
    egress: Endpoint
    proxy: bool = False
    mac: int | None = None
    rewrites: frozenset[str] = frozenset()


@dataclass(frozen=True)
class FarEnd:
    """What a frame sent out of a switch port meets.

    ``arrival`` is the switch port it enters next: across a link, or back from a
    service function (which returns frames unchanged on its egress port). A host
    ends the frame's way.
    """

    arrival: Endpoint | None
    function: str | None = None
    host: str | None = None


@dataclass
class Fabric:
    """A network as the controller knows it.

    Examples
    --------
    >>> f = Fabric()
    >>> f.add_switch(Switch(1, "s1")); f.add_switch(Switch(2, "s2"))
    >>> f.add_link((1, 3), (2, 1))
    >>> f.port_role(1, 3), f.port_role(1, 4)
    ('fabric', 'host')
    """

    switches: dict[int, Switch] = field(default_factory=dict)
    links: dict[Endpoint, Endpoint] = field(default_factory=dict)
    hosts: dict[str, Host] = field(default_factory=dict)
    functions: dict[str, ServiceFunction] = field(default_factory=dict)
    functions_down: set[str] = field(default_factory=set)
    """Functions with a port whose carrier is down: chains take their group's other pairs meanwhile."""
    dormant: dict[Endpoint, Endpoint] = field(default_factory=dict)
    """Links whose carrier went down: no path uses them, but their ports stay trusted fabric ports, so that a
    link failure changes nothing on the switches at its ends (only the edges' headers change)."""
    gateway_ip: str | None = None
    """The address of the host that takes "everything else": IPv4 to no host of the fabric (an uplink router)."""
    _graph: nx.DiGraph | None = field(default=None, repr=False, compare=False)
    # Functions' ports and hosts' ports, each worked out again only after a change of its own kind: LLDP asks
    # per frame, also while a starting fabric learns its hosts one by one.
    _function_ports: tuple[int, dict[Endpoint, ServiceFunction]] | None = field(default=None, repr=False,
                                                                                 compare=False)
    _host_ports: tuple[int, dict[Endpoint, Host]] | None = field(default=None, repr=False, compare=False)
    _distances: dict[int, dict[int, int]] = field(default_factory=dict, repr=False, compare=False)
    _trusted: tuple[int, dict[int, list[int]]] | None = field(default=None, repr=False, compare=False)
    _by_name: tuple[int, dict[str, int]] | None = field(default=None, repr=False, compare=False)
    version: int = field(default=0, compare=False)
    """Counts changes, so compiled tables can be kept until the fabric changes."""
    topology_version: int = field(default=0, compare=False)
    """Counts changes of switches, links and hosts only: routes between hosts stay valid while functions change."""
    growth_version: int = field(default=0, compare=False)
    """Counts the topology changes that are not a link going down: a route whose links are all still up is still a
    shortest one until this changes (losing a link makes no path shorter)."""

    def _changed(self, topology: bool = True, link_lost: bool = False) -> None:
        if topology:
            self._graph = None
            self._distances = {}
        self.version += 1
        self.topology_version += topology
        self.growth_version += topology and not link_lost

    def add_switch(self, switch: Switch) -> None:
        if self.switches.get(switch.dpid) != switch:
            self.switches[switch.dpid] = switch
            self._changed()

    def add_link(self, a: Endpoint, b: Endpoint) -> None:
        """Add a full-duplex link between two switch ports."""
        for end in (a, b):
            if end[0] not in self.switches:
                raise ModelError("link", f"switch {end[0]:#x} is unknown")
        for end in (a, b):  # a recabled port forgets its old partner
            for known in (self.links, self.dormant):
                old = known.pop(end, None)
                if old is not None:
                    known.pop(old, None)
        self.links[a] = b
        self.links[b] = a
        self._changed()

    def remove_link(self, a: Endpoint) -> None:
        """Forget the link at ``a`` (live or dormant): its ports are host ports again."""
        for known in (self.links, self.dormant):
            b = known.pop(a, None)
            if b is not None:
                known.pop(b, None)
                self._changed(link_lost=True)

    def suspend_link(self, a: Endpoint) -> None:
        """The link at ``a`` lost its carrier: no path uses it, its ports stay trusted (``dormant``) until the
        link comes back (``add_link``) or is forgotten (``remove_link``)."""
        b = self.links.pop(a, None)
        if b is not None:
            self.links.pop(b, None)
            self.dormant[a], self.dormant[b] = b, a
            self._changed(link_lost=True)

    def trusted_ports(self, dpid: int) -> list[int]:
        """The switch's fabric ports, live or dormant, in order."""
        if self._trusted is None or self._trusted[0] != self.version:  # every switch's at once, once a version
            ports: dict[int, set[int]] = {}
            for d, port in (*self.links, *self.dormant):
                ports.setdefault(d, set()).add(port)
            self._trusted = (self.version, {d: sorted(found) for d, found in ports.items()})
        return list(self._trusted[1].get(dpid, ()))

    def dpids_by_name(self) -> dict[str, int]:
        """Switch name -> datapath id, kept until the fabric changes (shared: callers must not change it)."""
        if self._by_name is None or self._by_name[0] != self.version:
            self._by_name = (self.version, {switch.name: dpid for dpid, switch in self.switches.items()})
        return self._by_name[1]

    def add_host(self, host: Host) -> None:
        if self.hosts.get(host.name) == host and host.dpid in self.switches:
            return  # known already (and checked when it was added): the API places every host on every change
        if host.dpid not in self.switches:
            raise ModelError("host.switch", f"switch {host.dpid:#x} of host {host.name} is unknown")
        address = _ipv4("host.ip", host.ip)
        if address.is_unspecified or address.is_multicast or address == ipaddress.IPv4Address("255.255.255.255"):
            raise ModelError("host.ip", f"{host.ip} is no host's address (unspecified, multicast or broadcast)")
        for text in host.ip6:
            check_ipv6("host.ip6", text)
        self.hosts[host.name] = host
        self._changed()

    def declared(self, function: ServiceFunction) -> bool:
        """Whether ``function`` is known already, as it is, and neither of its ports has become a fabric link:
        adding it again would change nothing (the API declares every function on every change)."""
        known = self.functions.get(function.name)
        return (known is function or known == function) and function.ingress not in self.links \
            and function.egress not in self.links

    def add_function(self, function: ServiceFunction) -> None:
        if self.declared(function):
            return  # checked when it was added
        unknown = sorted(function.rewrites - set(REWRITABLE))
        if unknown:
            raise ModelError(f"{function.name}.rewrites", f"{', '.join(unknown)} not among {', '.join(REWRITABLE)}")
        if function.rewrites and not function.proxy:
            raise ModelError(f"{function.name}.rewrites", "only an SR-unaware function (correlation None) may "
                                                          "rewrite the flow: an SR-aware one returns it untouched")
        for other in self.functions.values():
            shared = {function.ingress, function.egress} & {other.ingress, other.egress}
            if other.name != function.name and shared and other.proxy != function.proxy:
                raise ModelError(f"{function.name}.correlation", f"port {min(shared)} is also a port of "
                                 f"{other.name}, which is SR-{'un' if other.proxy else ''}aware: a port's frames "
                                 "come back with a header or without one, not both")
        # The switch may connect later; only a port already known as a fabric link is refused.
        for which, end in (("ingress", function.ingress), ("egress", function.egress)):
            if end in self.links:
                raise ModelError(f"{function.name}.{which}", f"port {end[1]} of {end[0]:#x} is a fabric link")
        if self.functions.get(function.name) != function:
            self.functions[function.name] = function
            self._changed(topology=False)

    def remove_function(self, name: str) -> None:
        self.functions_down.discard(name)
        if self.functions.pop(name, None) is not None:
            self._changed(topology=False)

    def set_function_up(self, name: str, up: bool) -> None:
        """Note a function's ports going down (or coming back); a change of functions, not of the topology."""
        if (name not in self.functions_down) != up:
            (self.functions_down.discard if up else self.functions_down.add)(name)
            self._changed(topology=False)

    def remove_host(self, name: str) -> None:
        if self.hosts.pop(name, None) is not None:
            self._changed()

    def set_gateway(self, ip: str | None) -> None:
        """Send IPv4 to no host of the fabric to the host with address ``ip`` (once it is known), or nowhere."""
        if ip is not None:
            _ipv4("gateway", ip)
        if ip != self.gateway_ip:
            self.gateway_ip = ip
            self._changed()

    def gateway(self) -> Host | None:
        """The gateway host, when one is set and known."""
        return self.host_by_ip(self.gateway_ip) if self.gateway_ip is not None else None

    def host_by_ip6(self, ip6: str) -> Host | None:
        for host in self.hosts.values():
            if ip6 in host.ip6:
                return host
        return None

    def host_by_ip(self, ip: str) -> Host | None:
        for host in self.hosts.values():
            if host.ip == ip:
                return host
        return None

    def function_ports(self) -> dict[Endpoint, ServiceFunction]:
        """Each service function's ports (kept until the functions change: callers must not change it)."""
        # Every change that is not the topology's is one of functions (added, removed, their ports down or up).
        functions_version = self.version - self.topology_version
        if self._function_ports is None or self._function_ports[0] != functions_version:
            functions = {}
            for function in self.functions.values():
                functions[function.ingress] = function
                functions[function.egress] = function
            self._function_ports = (functions_version, functions)
        return self._function_ports[1]

    def host_at(self, end: Endpoint) -> Host | None:
        """The host learned on port ``end``, if any.

        >>> f = Fabric(); f.add_switch(Switch(1, "s1")); f.add_host(Host("h1", 0x2, "10.0.0.1", 1, 3))
        >>> f.host_at((1, 3)).name, f.host_at((1, 4))
        ('h1', None)
        """
        if self._host_ports is None or self._host_ports[0] != self.topology_version:
            hosts: dict[Endpoint, Host] = {}
            for host in self.hosts.values():  # a port with several hosts (a hub): the first learned
                hosts.setdefault((host.dpid, host.port), host)
            self._host_ports = (self.topology_version, hosts)
        return self._host_ports[1].get(end)

    def proxied_ports(self) -> dict[Endpoint, ServiceFunction]:
        """The ports of SR-unaware functions: frames come back from them without a header, as from a host."""
        return {end: f for end, f in self.function_ports().items() if f.proxy}

    def far_end(self, end: Endpoint) -> FarEnd | None:
        """Where a frame leaving through ``end`` goes next; None for a port that leads nowhere known."""
        if end in self.links:
            return FarEnd(self.links[end])
        for function in self.functions.values():
            if function.ingress == end:
                return FarEnd(function.egress, function=function.name)
        host = self.host_at(end)
        return FarEnd(None, host=host.name) if host is not None else None

    def port_role(self, dpid: int, port: int) -> PortRole:
        """Fabric ports carry source-routed frames; host ports are untrusted."""
        if (dpid, port) in self.links or (dpid, port) in self.dormant:
            return "fabric"
        if (dpid, port) in self.function_ports():
            return "function"
        return "host"

    def distances_to(self, dpid: int) -> dict[int, int]:
        """Links to cross from each switch that can reach switch ``dpid`` (kept until the topology changes)."""
        found = self._distances.get(dpid)
        if found is None:
            graph = self.graph()
            reverse = graph.reverse(copy=False)  # distances *to* dpid: follow links backwards from it
            found = dict(nx.single_source_shortest_path_length(reverse, dpid)) if dpid in graph else {}
            self._distances[dpid] = found
        return found

    def graph(self) -> nx.DiGraph:
        """Directed switch graph; each edge holds the egress ``port``."""
        if self._graph is None:
            graph = nx.DiGraph()
            graph.add_nodes_from(sorted(self.switches))
            graph.add_edges_from((a, b, {"port": a_port}) for (a, a_port), (b, _b_port) in sorted(self.links.items()))
            self._graph = graph
        return self._graph
