"""An srfabric fabric built in a ``NetLab``: OVS bridges on the controller, hosts, kernel VNFs, VXLAN links.

Unlike the Mininet testbed, service functions here forward in the kernel (tc
mirred from one interface to the other, the frame untouched), so throughput
measures the fabric rather than a Python forwarder; and a link can be a VXLAN
tunnel between two underlay namespaces, like the study's compute nodes.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from srfabric.codecs.macaddr import mac_to_str
from srfabric.controller.controller import Controller
from srfabric.controller.runner import ControllerThread
from srfabric.model.chain import Chain
from srfabric.model.topo import LinkSpec, TopoSpec
from srfabric_tools.lab.netlab import CommandError, NetLab
from srfabric_tools.lab.topologies import NamespaceChain
from srfabric_tools.testbed.net import (
    FABRIC_MTU,
    controller_config,
    ipv6_off_by_default,
    learning_pings,
    start_controller,
    wait_for_discovery,
    wait_for_hosts,
)

UNDERLAY_MTU = FABRIC_MTU + 100  # room for VXLAN's 50 bytes
NO_IPV6 = ["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1"]


def mirred_commands(a: str, b: str) -> list[list[str]]:
    """A bump-in-the-wire VNF: every frame in on ``a`` leaves on ``b`` and back, unchanged.

    >>> " ".join(mirred_commands("eth0", "eth1")[1])
    'tc filter add dev eth0 ingress protocol all u32 match u32 0 0 action mirred egress redirect dev eth1'
    """
    commands = []
    for src, dst in ((a, b), (b, a)):
        commands.append(["tc", "qdisc", "add", "dev", src, "clsact"])
        # u32 matching zero bits catches every frame (this kernel has no matchall classifier)
        commands.append(["tc", "filter", "add", "dev", src, "ingress", "protocol", "all", "u32", "match", "u32", "0",
                         "0", "action", "mirred", "egress", "redirect", "dev", dst])
    return commands


class LabFabric:
    """Build ``spec`` in ``lab`` with the controller in a thread; ``tunnels`` makes every link VXLAN;
    ``reactive`` sets each host-to-host flow up on its first packet instead of routing ahead. ``peer``, an
    OpenFlow target such as ``tcp:127.0.0.1:6653``, connects the switches to another controller instead (a peer
    under the same benchmark): the fabric is built the same, and ready once every switch holds the peer's first
    entries and every host has pinged once; ``peer_ready``, if given, is waited for before the hosts ping (a peer
    that learns hosts must know its links first, or it takes a host's ARP, sent on, for a host on a fabric
    port)."""

    def __init__(self, lab: NetLab, spec: TopoSpec, codec: str = "mac-nibble", steering: str = "source-routing",
                 tunnels: bool = False, reactive: bool = False, clock: Callable[[], int] | None = None,
                 peer: str | None = None, peer_ready: Callable[[], None] | None = None) -> None:
        self.lab, self.spec, self.tunnels, self.peer, self.peer_ready = lab, spec, tunnels, peer, peer_ready
        config = controller_config(spec, codec)
        config.steering = steering
        config.reactive = reactive
        if clock is not None:  # e.g. CLOCK_REALTIME, to set the controller's stamps beside the kernel's
            config.clock = clock
        self.runner = ControllerThread(config)
        self.namespaces: dict[str, str] = {}
        self.bridges: dict[str, str] = {}

    @property
    def controller(self) -> Controller:
        assert self.runner.controller is not None
        return self.runner.controller

    def __enter__(self) -> LabFabric:
        try:
            self.start()
        except BaseException:
            self.runner.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.runner.stop()

    def port_name(self, switch: str, port: int) -> str:
        """The root-namespace interface of ``switch``'s OpenFlow port ``port``."""
        return f"{self.lab.prefix}{switch}p{port}"

    def _ns(self, name: str) -> str:
        ns = self.lab.add_ns(name)
        self.lab.run(NO_IPV6, ns=ns)
        self.namespaces[name] = ns
        return ns

    def _attach(self, ns: str, ifname: str, switch: str, port: int, mtu: int) -> None:
        root = self.port_name(switch, port)
        self.lab.veth(ns, ifname, None, root, mtu=FABRIC_MTU)
        self.lab.link_up(ns, ifname, mtu)
        self.lab.ovs_port(self.bridges[switch], root, port)

    def start(self) -> None:
        target = self.peer or f"tcp:127.0.0.1:{start_controller(self.runner, self.spec)}"
        with ipv6_off_by_default():
            for sw in self.spec.switches.values():
                self.bridges[sw.name] = self.lab.ovs_bridge(sw.name, target, sw.dpid)
            for host in self.spec.hosts.values():
                ns = self._ns(host.name)
                self._attach(ns, "eth0", host.switch, host.port, 1500)
                self.lab.run(["ip", "link", "set", "eth0", "address", mac_to_str(host.mac)], ns=ns)
                self.lab.addr(ns, "eth0", f"{host.ip}/8")
                self.lab.offloads_off(ns, "eth0")
            for fn in self.spec.functions.values():
                ns = self._ns(fn.name)
                self._attach(ns, "eth0", fn.switch, fn.ingress_port, FABRIC_MTU)
                self._attach(ns, "eth1", fn.switch, fn.egress_port, FABRIC_MTU)
                for args in mirred_commands("eth0", "eth1"):
                    self.lab.run(args, ns=ns)
            for index, link in enumerate(self.spec.links):
                (self._tunnel if self.tunnels else self._veth_link)(index, link)
        if self.peer is None:
            wait_for_discovery(self.runner, self.spec)
        else:
            self._wait_for_peer()
            if self.peer_ready is not None:
                self.peer_ready()
        # All at once: a ping only has to make its host speak (its ARP request); one after another, each waited
        # for its reply or its timeout.
        self.lab.run_together([(["ping", "-c1", "-W1", address], self.namespaces[name])
                               for name, address in learning_pings(self.spec)])
        if self.peer is None:
            wait_for_hosts(self.runner, self.spec)

    def _wait_for_peer(self, timeout_s: float = 60.0) -> None:
        """Until every bridge holds an entry of the peer's (its table-miss entry, sent once it connected)."""
        deadline = time.monotonic() + timeout_s
        waiting = list(self.bridges.values())
        while waiting:
            waiting = [bridge for bridge in waiting
                       if "priority=" not in self.lab.run(["ovs-ofctl", "-O", "OpenFlow13", "dump-flows", bridge],
                                                          check=False)]
            if waiting and time.monotonic() > deadline:
                raise CommandError("peer", f"{self.peer}: no entry on {', '.join(waiting)} after {timeout_s:g} s")
            time.sleep(0.1)

    def _veth_link(self, index: int, link: LinkSpec) -> None:
        a, b = self.port_name(link.a, link.a_port), self.port_name(link.b, link.b_port)
        self.lab.veth(None, a, None, b, mtu=FABRIC_MTU)
        self.lab.ovs_port(self.bridges[link.a], a, link.a_port)
        self.lab.ovs_port(self.bridges[link.b], b, link.b_port)

    def _tunnel(self, index: int, link: LinkSpec) -> None:
        """Each end is a VXLAN device moved into the root namespace; its underlay stays in a namespace."""
        under = [self._ns(f"u{index}a"), self._ns(f"u{index}b")]
        self.lab.veth(under[0], "under", under[1], "under", mtu=UNDERLAY_MTU)
        ips = [f"192.168.{index}.1", f"192.168.{index}.2"]
        for side, (switch, port) in enumerate(((link.a, link.a_port), (link.b, link.b_port))):
            self.lab.addr(under[side], "under", f"{ips[side]}/24")
            name = self.port_name(switch, port)
            self.lab.run(["ip", "link", "add", name, "type", "vxlan", "id", str(100 + index), "local", ips[side],
                          "remote", ips[1 - side], "dstport", "4789", "nolearning", "dev", "under"], ns=under[side])
            self.lab.run(["ip", "link", "set", name, "netns", str(os.getpid())], ns=under[side])
            self.lab.root_links.append(name)
            Path(f"/proc/sys/net/ipv6/conf/{name}/disable_ipv6").write_text("1")
            self.lab.link_up(None, name, FABRIC_MTU)
            self.lab.ovs_port(self.bridges[switch], name, port)

    def endpoints(self, source: str, destination: str) -> NamespaceChain:
        """Where traffic from host ``source`` to host ``destination`` starts and ends, for iperf3."""
        server_ip = self.spec.hosts[destination].ip
        return NamespaceChain(self.namespaces[source], [], self.namespaces[destination], server_ip)

    def set_chains(self, chains: list[Chain]) -> float:
        """Replace the installed chains; returns the seconds until the switches confirmed."""
        begin = time.monotonic()
        for name in list(self.controller.chains):
            self.runner.call(self.controller.remove_chain(name))
        for chain in chains:
            self.runner.call(self.controller.add_chain(chain))
        return time.monotonic() - begin

    def entries_per_switch(self) -> dict[str, int]:
        """Flow entries each switch reports over OpenFlow."""
        names = {sw.dpid: sw.name for sw in self.spec.switches.values()}
        return {names[dpid]: len(self.runner.call(self.controller.channels.entry_stats(dpid)))
                for dpid in sorted(self.controller.switches)}
