"""Namespaces, veth pairs and Open vSwitch bridges for one experiment, removed by name afterwards.

``NetLab`` runs every command through one place, so the exact commands of a run
can be written next to its results, and remembers what it made: namespaces,
interfaces left in the root namespace, bridges and processes (by pid). Leaving
the context removes all of them, also after an error or Ctrl-C. Names carry a
per-run prefix, so two runs never touch each other's objects.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from types import TracebackType

from srfabric.errors import SrfabricError
from srfabric_tools.procs import terminate

OVS_DATAPATH = "netdev"  # no OVS kernel module here: the userspace datapath


class CommandError(SrfabricError):
    pass


class NetLab:
    """A scratch network; every name it makes starts with ``prefix``.

    Examples
    --------
    >>> lab = NetLab("t1", dry_run=True)
    >>> lab.add_ns("a"); lab.add_ns("b")
    't1-a'
    't1-b'
    >>> lab.veth("t1-a", "eth0", "t1-b", "eth0")
    >>> lab.commands[-3:]
    ['ip link add eth0 netns t1-a type veth peer name eth0 netns t1-b', 'ip -n t1-a link set eth0 up', \
'ip -n t1-b link set eth0 up']
    """

    def __init__(self, prefix: str | None = None, dry_run: bool = False) -> None:
        self.prefix = prefix or f"l{os.getpid() % 100000}"
        self.dry_run = dry_run
        self.commands: list[str] = []
        self.namespaces: list[str] = []
        self.root_links: list[str] = []
        self.bridges: list[str] = []
        self.processes: list[subprocess.Popen[bytes]] = []

    def __enter__(self) -> NetLab:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    # -- running commands --------------------------------------------------------------
    @staticmethod
    def inside(args: list[str], ns: str | None) -> list[str]:
        """``args`` run inside namespace ``ns`` (as they are when None).

        >>> NetLab.inside(["ip", "link"], "l1h1"), NetLab.inside(["ip", "link"], None)
        (['ip', 'netns', 'exec', 'l1h1', 'ip', 'link'], ['ip', 'link'])
        """
        return ["ip", "netns", "exec", ns, *args] if ns else args

    def run(self, args: list[str], check: bool = True, ns: str | None = None) -> str:
        """Run a command (inside ``ns`` if given), log it, return its stdout."""
        full = self.inside(args, ns)
        self.commands.append(" ".join(full))
        if self.dry_run:
            return ""
        done = subprocess.run(full, capture_output=True, text=True, check=False)
        if check and done.returncode != 0:
            raise CommandError(args[0], f"`{' '.join(full)}` exited {done.returncode}: {done.stderr.strip()[:300]}")
        return done.stdout

    def spawn(self, args: list[str], ns: str | None = None) -> subprocess.Popen[bytes]:
        """Start a background process, remembered by pid for the clean-up."""
        full = self.inside(args, ns)
        self.commands.append(" ".join(full) + " &")
        process = subprocess.Popen(full, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.processes.append(process)
        return process

    def run_together(self, commands: list[tuple[list[str], str | None]], timeout_s: float = 5.0) -> None:
        """Run ``commands`` (each with its namespace, or None) at once and wait for all of them, at most
        ``timeout_s`` in all: what is still running then is stopped. Their output and codes are not read."""
        if self.dry_run:
            self.commands += [" ".join(self.inside(args, ns)) for args, ns in commands]
            return
        processes = [self.spawn(args, ns) for args, ns in commands]
        deadline = time.monotonic() + timeout_s
        for process in processes:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
            self.stop(process)

    def stop(self, process: subprocess.Popen[bytes], timeout: float = 5.0) -> None:
        terminate(process, timeout=timeout)
        if process in self.processes:
            self.processes.remove(process)

    # -- building ------------------------------------------------------------------------
    def name(self, suffix: str) -> str:
        return f"{self.prefix}-{suffix}"

    def add_ns(self, suffix: str) -> str:
        ns = self.name(suffix)
        self.run(["ip", "netns", "add", ns])
        self.namespaces.append(ns)
        self.run(["ip", "link", "set", "lo", "up"], ns=ns)
        return ns

    def veth(self, a_ns: str | None, a_if: str, b_ns: str | None, b_if: str, mtu: int | None = None,
             queues: int = 1) -> None:
        """A veth pair; an end with namespace ``None`` stays in the root namespace; ``queues`` TX/RX queues
        on each end (taprio needs several)."""
        many = ["numtxqueues", str(queues), "numrxqueues", str(queues)] if queues > 1 else []
        args = ["ip", "link", "add", a_if, *many]
        args += ["netns", a_ns] if a_ns else []
        args += ["type", "veth", "peer", "name", b_if, *many]
        args += ["netns", b_ns] if b_ns else []
        self.run(args)
        for ns, name in ((a_ns, a_if), (b_ns, b_if)):
            if ns is None:
                self.root_links.append(name)
            self.link_up(ns, name, mtu)

    def link_up(self, ns: str | None, name: str, mtu: int | None = None) -> None:
        where = ["-n", ns] if ns else []
        self.run(["ip", *where, "link", "set", name, *(["mtu", str(mtu)] if mtu else []), "up"])

    def addr(self, ns: str, name: str, cidr: str) -> None:
        self.run(["ip", "-n", ns, "addr", "add", cidr, "dev", name])

    def route(self, ns: str, prefix: str, via: str) -> None:
        self.run(["ip", "-n", ns, "route", "add", prefix, "via", via])

    def forwarding(self, ns: str) -> None:
        self.run(["sysctl", "-qw", "net.ipv4.ip_forward=1"], ns=ns)

    def offloads_off(self, ns: str | None, name: str) -> None:
        """The userspace datapath forwards frames without finishing offloaded checksums."""
        self.run(["ethtool", "-K", name, "tx", "off", "tso", "off", "gso", "off"], ns=ns, check=False)

    def ovs_bridge(self, suffix: str, controller: str | None = None, dpid: int | None = None,
                   datapath: str = OVS_DATAPATH) -> str:
        """A bridge; ``controller``: its OpenFlow targets, separated by spaces; ``datapath`` ``system`` is the
        kernel's (openvswitch.ko, in the kernel lab)."""
        bridge = self.name(suffix)
        args = ["ovs-vsctl", "--may-exist", "add-br", bridge, "--", "set", "bridge", bridge,
                f"datapath_type={datapath}"]
        if controller:
            args += ["protocols=OpenFlow13", "fail_mode=secure", "other-config:disable-in-band=true"]
        if dpid is not None:
            args += [f"other-config:datapath-id={dpid:016x}"]
        self.bridges.append(bridge)
        self.run(args)
        if controller:
            self.run(["ovs-vsctl", "set-controller", bridge, *controller.split()])  # one target or several
        return bridge

    def ovs_remove_bridge(self, bridge: str) -> None:
        """Remove one bridge before the lab closes (its veth ends stay)."""
        self.run(["ovs-vsctl", "--if-exists", "del-br", bridge], check=False)
        if bridge in self.bridges:
            self.bridges.remove(bridge)

    def ovs_port(self, bridge: str, name: str, ofport: int | None = None) -> None:
        args = ["ovs-vsctl", "add-port", bridge, name]
        if ofport is not None:
            args += ["--", "set", "interface", name, f"ofport_request={ofport}"]
        self.run(args)

    def ovs_patch(self, a: str, b: str, a_port: str, b_port: str) -> None:
        """Two bridges joined by a patch port pair (inside OVS, no kernel device)."""
        self.run(["ovs-vsctl", "add-port", a, a_port, "--", "set", "interface", a_port, "type=patch",
                  f"options:peer={b_port}", "--", "add-port", b, b_port, "--", "set", "interface", b_port,
                  "type=patch", f"options:peer={a_port}"])

    def ovs_normal(self, bridge: str) -> None:
        """Plain learning switch behaviour, the OVS default for a bridge without a controller."""
        self.run(["ovs-ofctl", "del-flows", bridge])
        self.run(["ovs-ofctl", "add-flow", bridge, "actions=NORMAL"])

    def wait_listening(self, ns: str, port: int, proto: str = "tcp", timeout: float = 5.0) -> None:
        """Wait until a server in ``ns`` listens on ``port``."""
        flag = "-Htln" if proto == "tcp" else "-Huln"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            out = subprocess.run(self.inside(["ss", flag, f"sport = :{port}"], ns),
                                 capture_output=True, text=True, check=False).stdout
            if out.strip():
                return
            time.sleep(0.02)
        raise CommandError("server", f"nothing listens on {proto} port {port} in {ns} after {timeout} s")

    # -- clean-up ------------------------------------------------------------------------
    def close(self) -> None:
        """Remove everything this lab made: processes, bridges, root links, namespaces."""
        if self.dry_run:
            return
        for process in reversed(self.processes[:]):
            with contextlib.suppress(Exception):
                self.stop(process)
        # One transaction and one ``ip -batch`` each (-force: on past a name already gone), not a command a name.
        deletes = [word for bridge in reversed(self.bridges) for word in ("--", "--if-exists", "del-br", bridge)]
        if deletes:
            subprocess.run(["ovs-vsctl", "--timeout=30", *deletes], capture_output=True, check=False)
        lines = [f"link del {name}" for name in self.root_links]
        lines += [f"netns del {ns}" for ns in reversed(self.namespaces)]
        if lines:
            subprocess.run(["ip", "-force", "-batch", "-"], input="\n".join(lines) + "\n", capture_output=True,
                           text=True, check=False)
        self.bridges.clear()
        self.root_links.clear()
        self.namespaces.clear()
