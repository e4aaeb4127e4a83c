"""Topologies as data, with every port number fixed before anything runs.

A ``TopoSpec`` says which switches, hosts and service functions exist and
which port of which switch each link uses. The Mininet testbed builds it; unit
tests turn it straight into the ``Fabric`` the controller would discover.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

from srfabric.errors import ModelError
from srfabric.model.fabric import Fabric, Host, Role, ServiceFunction, Switch


@dataclass(frozen=True)
class SwitchSpec:
    name: str
    dpid: int
    role: Role


@dataclass(frozen=True)
class HostSpec:
    name: str
    ip: str
    mac: int
    switch: str
    port: int
    ip6: str | None = None  # a dual-stack host's IPv6 address (``TopoSpec.ipv6``)


@dataclass(frozen=True)
class FunctionSpec:
    """A service function node with interface 0 (ingress) and interface 1 (egress)."""

    name: str
    switch: str
    ingress_port: int
    egress_port: int


@dataclass(frozen=True)
class LinkSpec:
    a: str
    a_port: int
    b: str
    b_port: int


@dataclass
class TopoSpec:
    """Build a topology step by step; ports are numbered from 1 per switch unless given.

    Examples
    --------
    >>> t = TopoSpec()
    >>> t.add_switch("s1"); t.add_switch("s2")
    >>> t.add_link("s1", "s2")
    >>> t.add_host("h1", "s1").port
    2
    """

    switches: dict[str, SwitchSpec] = field(default_factory=dict)
    hosts: dict[str, HostSpec] = field(default_factory=dict)
    functions: dict[str, FunctionSpec] = field(default_factory=dict)
    links: list[LinkSpec] = field(default_factory=list)
    gateway: str | None = None  # the host that takes IPv4 to no host of the fabric (an uplink router)
    ipv6: bool = False  # hosts added from now on are dual-stack: fd00::<n>/64 beside 10.0.0.<n>
    _used: dict[str, set[int]] = field(default_factory=dict)

    def add_switch(self, name: str, role: Role = "edge", dpid: int | None = None) -> None:
        if name in self.switches:
            raise ModelError("switch", f"{name!r} exists already")
        dpid = dpid if dpid is not None else len(self.switches) + 1
        if (other := next((sw.name for sw in self.switches.values() if sw.dpid == dpid), None)) is not None:
            raise ModelError("dpid", f"{dpid:#x} of {name!r} is {other!r}'s already: every switch needs its own")
        self.switches[name] = SwitchSpec(name, dpid, role)
        self._used[name] = set()

    def _port(self, switch: str, port: int | None) -> int:
        if switch not in self.switches:
            raise ModelError("switch", f"{switch!r} is unknown")
        used = self._used[switch]
        if port is None:
            port = 1
            while port in used:
                port += 1
        if port in used:
            raise ModelError("port", f"port {port} of {switch} is taken")
        used.add(port)
        return port

    def add_link(self, a: str, b: str, a_port: int | None = None, b_port: int | None = None) -> None:
        self.links.append(LinkSpec(a, self._port(a, a_port), b, self._port(b, b_port)))

    def add_host(self, name: str, switch: str, port: int | None = None) -> HostSpec:
        number = len(self.hosts) + 1
        # 10.0.0.<n> up to 255 hosts, counting on into 10.0.1.0 and beyond for larger fabrics
        host = HostSpec(name, str(ipaddress.IPv4Address(0x0A000000 + number)), number, switch, self._port(switch, port),
                        f"fd00::{number:x}" if self.ipv6 else None)
        self.hosts[name] = host
        return host

    def add_function(self, name: str, switch: str) -> FunctionSpec:
        function = FunctionSpec(name, switch, self._port(switch, None), self._port(switch, None))
        self.functions[name] = function
        return function

    def dpid(self, switch: str) -> int:
        return self.switches[switch].dpid

    def port_ends(self) -> dict[str, dict[int, tuple[str, int | None]]]:
        """Each switch's ports and what is at their other end: (peer switch, its port) on a link, (host, None).

        >>> t = TopoSpec(); t.add_switch("s1"); t.add_switch("s2"); t.add_link("s1", "s2")
        >>> _ = t.add_host("h1", "s2"); t.port_ends()
        {'s1': {1: ('s2', 1)}, 's2': {1: ('s1', 1), 2: ('h1', None)}}
        """
        ends: dict[str, dict[int, tuple[str, int | None]]] = {name: {} for name in self.switches}
        for link in self.links:
            ends[link.a][link.a_port] = (link.b, link.b_port)
            ends[link.b][link.b_port] = (link.a, link.a_port)
        for host in self.hosts.values():
            ends[host.switch][host.port] = (host.name, None)
        return ends

    def to_fabric(self) -> Fabric:
        """The fabric a controller has once discovery is complete."""
        fabric = Fabric()
        for spec in self.switches.values():
            fabric.add_switch(Switch(spec.dpid, spec.name, spec.role))
        for link in self.links:
            fabric.add_link((self.dpid(link.a), link.a_port), (self.dpid(link.b), link.b_port))
        for host in self.hosts.values():
            fabric.add_host(Host(host.name, host.mac, host.ip, self.dpid(host.switch), host.port,
                                 (host.ip6,) if host.ip6 else ()))
        for fn in self.functions.values():
            dpid = self.dpid(fn.switch)
            fabric.add_function(ServiceFunction(fn.name, (dpid, fn.ingress_port), (dpid, fn.egress_port)))
        if self.gateway is not None:
            fabric.set_gateway(self.hosts[self.gateway].ip)
        return fabric


def tsn_fig1() -> TopoSpec:
    """The five-switch, four-host network of the TSN paper's Fig. 1.

    Ports are those the paper names: TSN-1 reaches TSN-2 through port 3, TSN-2
    reaches TSN-5 through port 2 and TSN-5 reaches host 3 through port 4.
    """
    topo = TopoSpec()
    for index in range(1, 6):
        topo.add_switch(f"s{index}", "edge")
    topo.add_host("h1", "s1", 1)
    topo.add_host("h2", "s1", 2)
    topo.add_link("s1", "s2", 3, 1)
    topo.add_link("s1", "s3", 4, 1)
    topo.add_link("s2", "s5", 2, 1)
    topo.add_link("s3", "s4", 2, 1)
    topo.add_link("s4", "s5", 2, 2)
    topo.add_host("h3", "s5", 4)
    topo.add_host("h4", "s4", 3)
    return topo


def tsn_fig7(pairs: int = 2) -> TopoSpec:
    """The coupling paper's Fig. 7: a primary (s1-s2-s4) and a secondary (s1-s3-s4) path between bridges
    1 and 4, talkers ``t1..tN`` on s1 and their listeners ``l1..lN`` on s4.

    >>> topo = tsn_fig7(2)
    >>> sorted(topo.hosts), topo.hosts["t1"].port, topo.hosts["l2"].port
    (['l1', 'l2', 't1', 't2'], 3, 4)
    """
    if not 1 <= pairs <= 60:
        raise ModelError("pairs", f"must be within 1..60, got {pairs}")
    topo = TopoSpec()
    for index in range(1, 5):
        topo.add_switch(f"s{index}", "edge")
    topo.add_link("s1", "s2", 1, 1)
    topo.add_link("s1", "s3", 2, 1)
    topo.add_link("s2", "s4", 2, 1)
    topo.add_link("s3", "s4", 2, 2)
    for pair in range(1, pairs + 1):
        topo.add_host(f"t{pair}", "s1", 2 + pair)
        topo.add_host(f"l{pair}", "s4", 2 + pair)
    return topo


MAX_FAT_TREE_K = 360  # (k/2) * k switches of a role within 0x10000


def fat_tree(k: int) -> TopoSpec:
    """A k-ary fat-tree (Al-Fares et al.): (k/2)^2 cores, k pods of k/2 aggregation and k/2 edge
    switches, k/2 hosts per edge.

    Edge ports 1..k/2 go up to the pod's aggregation switches, k/2+1..k down to
    hosts; aggregation ports 1..k/2 go down, k/2+1..k up; core port p leads to pod p.

    >>> t = fat_tree(4)
    >>> len(t.switches), len(t.hosts), len(t.links)
    (20, 16, 32)
    >>> hex(t.dpid("e1")), hex(fat_tree(24).dpid("e1")), len({sw.dpid for sw in fat_tree(24).switches.values()})
    ('0x101', '0x10001', 720)
    """
    if k < 2 or k % 2 or k > MAX_FAT_TREE_K:
        raise ModelError("k", f"a fat-tree needs an even k within 2..{MAX_FAT_TREE_K}, got {k}")
    half = k // 2
    # Each role's dpids in a range of their own: 0x100s, 0x200s, 0x300s while every role has fewer than 256
    # switches (k <= 22), else 0x10000s, 0x20000s, 0x30000s, so no two switches share a dpid.
    role = 0x100 if half * k < 0x100 else 0x10000
    topo = TopoSpec()
    for index in range(half * half):
        topo.add_switch(f"c{index + 1}", "core", dpid=3 * role + index + 1)
    for pod in range(k):
        for index in range(half):
            topo.add_switch(f"a{pod * half + index + 1}", "aggregation", dpid=2 * role + pod * half + index + 1)
            topo.add_switch(f"e{pod * half + index + 1}", "edge", dpid=role + pod * half + index + 1)
    for pod in range(k):
        for e in range(half):
            edge = f"e{pod * half + e + 1}"
            for a in range(half):
                topo.add_link(edge, f"a{pod * half + a + 1}", a + 1, e + 1)
    for pod in range(k):
        for a in range(half):
            agg = f"a{pod * half + a + 1}"
            for c in range(half):
                topo.add_link(agg, f"c{a * half + c + 1}", half + c + 1, pod + 1)
    for pod in range(k):
        for e in range(half):
            edge = f"e{pod * half + e + 1}"
            for h in range(half):
                topo.add_host(f"h{len(topo.hosts) + 1}", edge, half + h + 1)
    return topo


def leaf_spine(spines: int, leaves: int, hosts_per_leaf: int) -> TopoSpec:
    """A two-tier Clos: every leaf linked to every spine, hosts on the leaves.

    Leaf ports 1..spines go up to the spines, the next ``hosts_per_leaf`` down to hosts; spine port p leads to
    leaf p.

    >>> t = leaf_spine(4, 16, 8)
    >>> len(t.switches), len(t.hosts), len(t.links), t.switches["l1"].role, t.switches["s1"].role
    (20, 128, 64, 'edge', 'core')
    """
    if not (1 <= spines <= 250 and 1 <= leaves <= 250 and 1 <= hosts_per_leaf <= 250 - spines):
        raise ModelError("leaf_spine", f"{spines} spines, {leaves} leaves and {hosts_per_leaf} hosts a leaf: each "
                                       "must be within 1..250, and a leaf's spines and hosts 250 ports at most")
    topo = TopoSpec()
    for index in range(spines):
        topo.add_switch(f"s{index + 1}", "core", dpid=0x300 + index + 1)
    for index in range(leaves):
        topo.add_switch(f"l{index + 1}", "edge", dpid=0x100 + index + 1)
    for leaf in range(leaves):
        for spine in range(spines):
            topo.add_link(f"l{leaf + 1}", f"s{spine + 1}", spine + 1, leaf + 1)
        for h in range(hosts_per_leaf):
            topo.add_host(f"h{len(topo.hosts) + 1}", f"l{leaf + 1}", spines + h + 1)
    return topo


def tree(depth: int, fanout: int) -> TopoSpec:
    """Mininet's ``TreeTopo``: switches ``depth`` levels deep, each with ``fanout`` children, switches or (under
    the last level) hosts. It has no loop, so a learning switch that floods (os-ken's ``simple_switch_13``) runs
    on it as it is.

    >>> t = tree(3, 2)
    >>> len(t.switches), len(t.hosts), len(t.links)
    (7, 8, 6)
    >>> t.switches["s1"].role, t.switches["s3"].role, t.hosts["h1"].switch
    ('core', 'edge', 's3')
    """
    if depth < 1 or fanout < 1 or fanout ** depth > 250:
        raise ModelError("tree", f"depth {depth} and fanout {fanout} must be >= 1 with at most 250 hosts")
    topo = TopoSpec()

    def grow(level: int) -> str:
        name = f"s{len(topo.switches) + 1}"
        topo.add_switch(name, "core" if level == 1 else "edge" if level == depth else "aggregation")
        for _ in range(fanout):
            if level == depth:
                topo.add_host(f"h{len(topo.hosts) + 1}", name)
            else:
                topo.add_link(name, grow(level + 1))
        return name

    grow(1)
    return topo
