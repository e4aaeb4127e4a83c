"""Build a Mininet network from a ``TopoSpec`` with Open vSwitch in userspace.

Port numbers come from the spec, so the controller discovers exactly the
fabric the spec describes. ``Testbed`` is a context manager: leaving it (also
on Ctrl-C or an error) stops every process it started, by pid, and then
Mininet, which removes the namespaces, links and bridges it made.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
from collections.abc import Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from srfabric.codecs.macaddr import mac_to_str
from srfabric.controller.config import ControllerConfig
from srfabric.controller.runner import ControllerThread
from srfabric.model.fabric import ServiceFunction
from srfabric.model.topo import TopoSpec
from srfabric_tools.procs import terminate
from srfabric_tools.testbed.records import Record, remove_dead
from srfabric_tools.testbed.running import Running


class ControllerTarget:
    """Where the switches find a controller: the part of Mininet's ``RemoteController`` they use, without its
    node. ``RemoteController`` starts a shell and checks the port with telnet, reading its pty with no timeout
    (a fresh-clone test run hung there); srfabric waits on its own controller's view of the switches instead."""

    protocol = "tcp"

    def __init__(self, name: str, ip: str = "127.0.0.1", port: int = 6653) -> None:
        self.name, self.ip, self.port = name, ip, port

    def IP(self) -> str:  # noqa: N802  (Mininet's name)
        return self.ip

    def start(self) -> None:
        """Nothing to start: the controller runs outside Mininet."""

    def stop(self) -> None:
        """Nothing to stop."""


class TlsControllerTarget(ControllerTarget):
    """The same, over TLS: Open vSwitch connects with ``ssl:`` and the daemon's certificate (``use_tls``)."""

    protocol = "ssl"


def use_tls(pki: Path, name: str, dpids: Sequence[int], listens: bool = False) -> None:
    """Give this machine's Open vSwitch daemon a certificate of ``pki``'s CA naming ``dpids`` (one certificate
    serves all its bridges: ``ovs-vsctl set-ssl``), made once per name; with ``listens``, a TLS server's, for
    bridges the controller dials (``listening``)."""
    from srfabric.security.pki import Issued, make_certificate

    ca = Issued(pki / "ca-cert.pem", pki / "ca-privkey.pem")
    made = make_certificate(pki, ca, name, dpids=dpids, listens=listens)
    subprocess.run(["ovs-vsctl", "--timeout=10", "set-ssl", str(made.key), str(made.cert), str(ca.cert)],
                   check=True, capture_output=True)


def xdp_certificates(pki: Path, dpids: dict[str, int]) -> None:
    """A certificate ``xdp-<switch>`` of ``pki``'s CA for each XDP switch, naming its one dpid."""
    from srfabric.security.pki import Issued, make_certificate

    ca = Issued(pki / "ca-cert.pem", pki / "ca-privkey.pem")
    for name, dpid in dpids.items():
        make_certificate(pki, ca, f"xdp-{name}", dpids=[dpid])


def ovs_running() -> bool:
    """True when ovs-vswitchd answers (the bootstrap starts it; a reboot stops it)."""
    try:
        done = subprocess.run(["ovs-vsctl", "--timeout=5", "show"], capture_output=True)
    except FileNotFoundError:
        return False
    return done.returncode == 0


@contextlib.contextmanager
def ipv6_off_by_default() -> Iterator[None]:
    path = Path("/proc/sys/net/ipv6/conf/default/disable_ipv6")
    old = path.read_text().strip() if path.exists() else None
    if old is not None:
        path.write_text("1")
    try:
        yield
    finally:
        if old is not None:
            path.write_text(old)


FABRIC_MTU = 1600


DATAPATHS = ("user", "kernel")


def multi_queue_link(queues: int) -> Any:
    """A Mininet link class whose veth ends have ``queues`` transmit and receive queues (taprio needs several)."""
    from mininet.link import Link
    from mininet.util import quietRun

    class MultiQueueLink(Link):
        @classmethod
        def makeIntfPair(cls, intfname1: str, intfname2: str, addr1: str | None = None,  # noqa: N802
                         addr2: str | None = None, node1: Any = None, node2: Any = None,
                         deleteIntfs: bool = True) -> None:  # noqa: N803
            run1 = node1.cmd if node1 else quietRun
            run2 = node2.cmd if node2 else quietRun
            if deleteIntfs:
                run1(f"ip link del {intfname1}")
                run2(f"ip link del {intfname2}")
            many = f"numtxqueues {queues} numrxqueues {queues}"
            where = 1 if not node2 else node2.pid
            first = f"{intfname1} {many}" + (f" address {addr1}" if addr1 else "")
            second = f"{intfname2} {many}" + (f" address {addr2}" if addr2 else "")
            output = run1(f"ip link add name {first} type veth peer name {second} netns {where}")
            if output:
                raise RuntimeError(f"veth pair ({intfname1}, {intfname2}): {output}")

    return MultiQueueLink


class Testbed(Running):
    """``switch`` is ``ovs`` (Open vSwitch) or ``xdp`` (srfabric's XDP programs); Open vSwitch runs its
    ``datapath`` in userspace (this machine has no openvswitch.ko) or in the kernel (in the kernel lab);
    ``tx_queues`` above 1 gives every veth that many queues, as taprio needs."""

    def __init__(self, spec: TopoSpec, controller_port: int | Sequence[int], switch: str = "ovs",
                 codec: str = "mac-nibble", datapath: str = "user", tx_queues: int = 1, tls: Path | None = None,
                 controller_ip: str = "127.0.0.1") -> None:
        self.spec = spec
        self.controller_ip = controller_ip  # another namespace's address: the controller reached over TCP only
        self.tls = tls  # the pki folder (``srfabric pki``): switches connect over TLS with certificates of it
        # Several ports: every switch connects to every controller (instances of ``serve`` sharing a database).
        self.controller_ports = [controller_port] if isinstance(controller_port, int) else list(controller_port)
        self.controller_port = self.controller_ports[0]
        self.switch_kind = switch
        self.codec = codec
        self.datapath = datapath
        self.tx_queues = tx_queues
        self.net: Any = None
        self.processes: list[subprocess.Popen[bytes]] = []
        self.record = Record()

    def start(self) -> None:
        from mininet.log import setLogLevel
        from mininet.net import Mininet
        from mininet.node import OVSSwitch

        setLogLevel("error")
        remove_dead()  # what a killed testbed left would clash with these links' names
        self.record.write(list(self.spec.switches))
        if self.switch_kind == "xdp":
            from srfabric_tools.testbed.xdp_switch import XdpSwitch

            switch: Any = partial(XdpSwitch, codec=self.codec, tls=str(self.tls) if self.tls else None)
        else:
            switch = partial(OVSSwitch, datapath=self.datapath, protocols="OpenFlow13", failMode="secure")
        extra: dict[str, Any] = {"link": multi_queue_link(self.tx_queues)} if self.tx_queues > 1 else {}
        net = Mininet(topo=None, switch=switch, controller=None, build=False, autoSetMacs=False,
                      autoStaticArp=False, waitConnected=False, **extra)
        self.net = net
        target = ControllerTarget
        if self.tls is not None and self.switch_kind == "xdp":
            xdp_certificates(self.tls, {sw.name: sw.dpid for sw in self.spec.switches.values()})
            target = TlsControllerTarget
        elif self.tls is not None:
            use_tls(self.tls, "ovs-testbed", [sw.dpid for sw in self.spec.switches.values()])
            target = TlsControllerTarget
        for index, port in enumerate(self.controller_ports):
            net.addController(f"c{index}", controller=target, ip=self.controller_ip, port=port)
        for sw in self.spec.switches.values():
            net.addSwitch(sw.name, dpid=f"{sw.dpid:016x}")
        for host in self.spec.hosts.values():
            net.addHost(host.name, ip=f"{host.ip}/8", mac=mac_to_str(host.mac))
        for fn in self.spec.functions.values():
            net.addHost(fn.name, ip=None)
        for link in self.spec.links:
            net.addLink(link.a, link.b, port1=link.a_port, port2=link.b_port)
        for host in self.spec.hosts.values():
            net.addLink(host.name, host.switch, port1=0, port2=host.port)
        for fn in self.spec.functions.values():
            net.addLink(fn.name, fn.switch, port1=0, port2=fn.ingress_port)
            net.addLink(fn.name, fn.switch, port1=1, port2=fn.egress_port)
        # Interfaces made in the root namespace (switch ports, bridges) must not send IPv6
        # router solicitations into the fabric: there they would read as source-routing headers.
        with ipv6_off_by_default():
            net.build()
            self._remember_nodes()
            self._prepare_nodes()
            net.start()
            self._remember_nodes()

    def _remember_nodes(self) -> None:
        nodes = {node.name: node.pid for node in self.net.hosts}
        agents = [sw.agent.pid for sw in self.net.switches if getattr(sw, "agent", None) is not None]
        started = [process.pid for process in self.processes if process.poll() is None]
        self.record.write(list(self.spec.switches), nodes, processes=agents + started)

    def _prepare_nodes(self) -> None:
        switch_ports = [intf.name for sw in self.net.switches for intf in sw.intfList() if intf.name != "lo"]
        for name in switch_ports:
            knob = Path(f"/proc/sys/net/ipv6/conf/{name}/disable_ipv6")
            with contextlib.suppress(OSError):
                knob.write_text("1")
            # A header may add bytes (VLAN + MPLS: 8); like a DC fabric, links inside it carry a larger MTU
            # than hosts use, so full-size host frames still fit once encapsulated.
            subprocess.run(["ip", "link", "set", "dev", name, "mtu", str(FABRIC_MTU)], check=False)
        for name in self.spec.functions:
            node = self.net.get(name)
            for intf in node.intfList():
                node.cmd(f"ip link set dev {intf.name} mtu {FABRIC_MTU}")
        for name in [*self.spec.hosts, *self.spec.functions]:
            node = self.net.get(name)
            # No IPv6 chatter (router solicitations, MLD) on the fabric; checksums filled in by the sender,
            # since the userspace datapath forwards veth frames without completing offloaded checksums.
            node.cmd("sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1")
            # XDP switches redirect frames straight into these veths, which takes NAPI on the receiving
            # end: GRO on turns it on (OVS needs it off).
            gro = "on" if self.switch_kind == "xdp" else "off"
            for intf in node.intfList():
                node.cmd(f"ethtool -K {intf.name} tx off rx off tso off gso off gro {gro} >/dev/null 2>&1")
        for host in self.spec.hosts.values():
            if host.ip6 is not None:  # dual-stack: its global address only (no link-local chatter, no DAD)
                intf = self.net.get(host.name).defaultIntf().name
                node = self.net.get(host.name)
                node.cmd(f"sysctl -qw net.ipv6.conf.{intf}.addr_gen_mode=1 net.ipv6.conf.{intf}.accept_ra=0 "
                         f"net.ipv6.conf.{intf}.disable_ipv6=0")
                node.cmd(f"ip -6 addr add {host.ip6}/64 dev {intf} nodad")

    def node(self, name: str) -> Any:
        return self.net.get(name)

    def popen(self, name: str, args: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:
        """Start a process inside a node's namespace and remember it for cleanup."""
        process: subprocess.Popen[bytes] = self.node(name).popen(args, **kwargs)
        self.processes.append(process)
        self._remember_nodes()  # a node's process outlives its shell when this process is killed
        return process

    def stop_process(self, process: subprocess.Popen[bytes], sig: int = signal.SIGTERM, timeout: float = 5) -> None:
        terminate(process, sig, timeout)

    def stop(self) -> None:
        for process in reversed(self.processes):
            with contextlib.suppress(Exception):
                self.stop_process(process)
        self.processes.clear()
        if self.net is not None:
            net, self.net = self.net, None
            net.stop()
        self.record.remove()
        if self.tls is not None and self.switch_kind == "ovs":  # the daemon's certificate was this testbed's
            subprocess.run(["ovs-vsctl", "--timeout=10", "del-ssl"], check=False, capture_output=True)


def controller_config(spec: TopoSpec, codec: str) -> ControllerConfig:
    """Names for what the controller will discover, so reports speak the spec's language."""
    return ControllerConfig(
        codec=codec,
        switch_names={sw.dpid: (sw.name, sw.role) for sw in spec.switches.values()},
        host_names={host.mac: host.name for host in spec.hosts.values()},
        gateway=spec.hosts[spec.gateway].ip if spec.gateway is not None else None,
    )


def function_args(name: str, mark: int, stats: Path) -> list[str]:
    """The command that runs service function ``name`` between its two interfaces, writing counters to ``stats``."""
    return [sys.executable, "-m", "srfabric_tools.testbed.vnf", "--name", name, "--ingress", f"{name}-eth0",
            "--egress", f"{name}-eth1", "--mark", str(mark), "--stats", str(stats)]


def spec_functions(spec: TopoSpec) -> list[ServiceFunction]:
    return [
        ServiceFunction(fn.name, (spec.dpid(fn.switch), fn.ingress_port), (spec.dpid(fn.switch), fn.egress_port))
        for fn in spec.functions.values()
    ]


def start_controller(runner: ControllerThread, spec: TopoSpec) -> int:
    """Start the controller and declare the spec's service functions; returns its OpenFlow port."""
    port = runner.start()
    controller = runner.controller
    assert controller is not None
    for function in spec_functions(spec):
        runner.loop.call_soon_threadsafe(controller.add_function, function)
    return port


def wait_for_discovery(runner: ControllerThread, spec: TopoSpec) -> None:
    """Until the controller knows every switch and both directions of every link of ``spec``."""
    controller = runner.controller
    assert controller is not None
    links, switches = 2 * len(spec.links), len(spec.switches)
    runner.call(controller.wait_until(
        lambda: len(controller.switches) == switches and len(controller.fabric.links) == links,
        30, f"discovery of {switches} switches and {links // 2} links"))


def learning_pings(spec: TopoSpec) -> list[tuple[str, str]]:
    """Each host and the address it pings once, so that its ARP request tells the controller where it is;
    a dual-stack host also pings another one's IPv6 address (its Neighbour Solicitation adds its own).

    >>> from srfabric.model.topo import TopoSpec
    >>> t = TopoSpec(ipv6=True); t.add_switch("s1"); _ = t.add_host("h1", "s1"); _ = t.add_host("h2", "s1")
    >>> learning_pings(t)
    [('h1', '10.0.0.2'), ('h2', '10.0.0.1'), ('h1', 'fd00::2'), ('h2', 'fd00::1')]
    """
    names = list(spec.hosts)
    pings = [(name, spec.hosts[names[(index + 1) % len(names)]].ip) for index, name in enumerate(names)]
    six = [name for name in names if spec.hosts[name].ip6]
    return pings + [(name, str(spec.hosts[six[(index + 1) % len(six)]].ip6)) for index, name in enumerate(six)]


def wait_for_hosts(runner: ControllerThread, spec: TopoSpec) -> None:
    controller = runner.controller
    assert controller is not None
    runner.call(controller.wait_until(
        lambda: len(controller.fabric.hosts) == len(spec.hosts), 20, f"learning of {len(spec.hosts)} hosts"))
