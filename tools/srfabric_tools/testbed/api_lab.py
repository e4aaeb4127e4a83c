"""``srfabric serve`` in its own process, a Mininet fabric connected to it, and the API told about it.

Used by the API's integration tests and by ``srfabric bench deploy``. Everything
started is remembered by process id and stopped on leaving (also on errors);
Mininet removes the namespaces, links and bridges it made.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from srfabric.cli.client import SfcClient
from srfabric.errors import SrfabricError
from srfabric.model.topo import TopoSpec
from srfabric_tools.procs import terminate
from srfabric_tools.testbed.net import Testbed, function_args, learning_pings
from srfabric_tools.testbed.running import Running


def line_spec(functions: int, placed_on: tuple[str, ...] = ("s2",), dpid_base: int = 0x100,
              ipv6: bool = False) -> TopoSpec:
    """h1 - s1 - s2 - s3 - h2, with functions v1..vN dealt in turn to the switches ``placed_on`` (dual-stack
    hosts with ``ipv6``)."""
    spec = TopoSpec(ipv6=ipv6)
    for name in ("s1", "s2", "s3"):
        spec.add_switch(name, "edge", dpid=dpid_base + int(name[1]))
    spec.add_link("s1", "s2")
    spec.add_link("s2", "s3")
    spec.add_host("h1", "s1")
    spec.add_host("h2", "s3")
    for index in range(functions):
        spec.add_function(f"v{index + 1}", placed_on[index % len(placed_on)])
    return spec


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ServeProcess:
    """``srfabric serve`` on free ports; ``kill()`` ends it with SIGKILL, ``start()`` starts it again."""

    def __init__(self, db: str, token: str = "srfabric-test", codec: str = "mac-nibble",
                 extra_args: tuple[str, ...] = (), patience: float = 1.0, tls: Path | None = None,
                 activation: bool = False, netns: str | None = None, host: str = "127.0.0.1") -> None:
        self.db, self.token, self.codec = db, token, codec
        # In a namespace of its own (``netns``, at ``host``): the switches and the API reach it over TCP only.
        self.netns, self.host = netns, host
        # Socket activation: this object holds the OpenFlow port and hands it to each process it starts, as a
        # supervisor (systemd) does, so that the port stays open across a restart.
        self.listener = socket.create_server(("127.0.0.1", 0), backlog=1024) if activation else None
        self.tls = tls  # the pki folder switches connect with over TLS (``srfabric pki``); None: plain TCP
        self.extra_args = extra_args
        self.patience = patience  # every wait is this many times longer (an emulated CPU is slower)
        self.port = free_port()
        self.openflow_port = int(self.listener.getsockname()[1]) if self.listener else free_port()
        self.process: subprocess.Popen[str] | None = None
        self.spawned_at = 0.0
        self.log = Path(tempfile.mkstemp(prefix="srfabric-serve-", suffix=".log")[1])

    @property
    def url(self) -> str:
        return f"{'https' if '--api-tls' in self.extra_args else 'http'}://{self.host}:{self.port}"

    def client(self) -> SfcClient:
        return SfcClient(self.url, self.token)

    def start(self, timeout: float = 30.0) -> None:
        args = [sys.executable, "-m", "srfabric", "serve", "--port", str(self.port), "--openflow-host", self.host,
                "--openflow-port", str(self.openflow_port), "--db", self.db, "--codec", self.codec, *self.extra_args,
                *(("--openflow-tls", str(self.tls)) if self.tls else ("--openflow-insecure",)),
                *(("--host", self.host) if self.host != "127.0.0.1" else ())]
        if self.netns is not None:
            args = ["ip", "netns", "exec", self.netns, *args]
        env = {**os.environ, "SRFABRIC_TOKEN": self.token}
        offset = self.log.stat().st_size  # a restart appends to the same log
        handing: dict[str, Any] = {}
        if self.listener is not None:  # as descriptor 3, LISTEN_PID being the process's own (sd_listen_fds)
            listener = self.listener.fileno()
            args = ["/bin/sh", "-c", 'LISTEN_PID=$$ exec "$@"', "sh", *args]
            env["LISTEN_FDS"] = "1"
            handing = {"pass_fds": (3,), "preexec_fn": lambda: os.dup2(listener, 3)}
        self.spawned_at = time.monotonic()  # when the process was started (a benchmark's clock)
        with self.log.open("a") as log:
            self.process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, text=True, env=env, **handing)
        timeout *= self.patience
        deadline = time.monotonic() + timeout
        while "API on" not in self._since(offset):  # looked for often: a restart's time is measured by it
            if self.process.poll() is not None:
                raise SrfabricError("serve", f"exited with {self.process.returncode}: {self.log.read_text()[-800:]}")
            if time.monotonic() > deadline:
                raise SrfabricError("serve", f"not listening within {timeout} s")
            time.sleep(0.01)

    def _since(self, offset: int) -> str:
        with self.log.open("rb") as log:
            log.seek(offset)
            return log.read().decode(errors="replace")

    def kill(self) -> None:
        """SIGKILL: no chance to clean up, as in a crash."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)
        self.process = None

    def stop(self) -> None:
        if self.process is not None:
            terminate(self.process)
            self.process = None

    def output(self) -> str:
        return self.log.read_text()

    def __enter__(self) -> ServeProcess:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
        if self.listener is not None:
            self.listener.close()
        self.log.unlink(missing_ok=True)


class ApiLab(Running):
    """A Mininet fabric (Open vSwitch in userspace) on a running ``serve``, its hosts learned and the
    functions' ports created through the API (named ``<function>-in`` / ``-out``, device_id the function)."""

    def __init__(self, spec: TopoSpec, serve: ServeProcess, datapath: str = "user", tx_queues: int = 1,
                 switch: str = "ovs", others: Sequence[ServeProcess] = (), declare_functions: bool = True) -> None:
        self.spec = spec
        self.declare_functions = declare_functions  # False: another system (Neutron) makes the functions' ports
        self.serve = serve
        self.others = list(others)  # more instances on the same database: the switches connect to each
        self.switch = switch
        self.datapath, self.tx_queues = datapath, tx_queues
        self.testbed: Testbed | None = None
        self.workdir = Path(tempfile.mkdtemp(prefix="srfabric-lab-"))
        self.vnfs: dict[str, subprocess.Popen[bytes]] = {}
        self.ports: dict[str, str] = {}  # port name -> id

    def start(self) -> None:
        self.testbed = Testbed(self.spec, [self.serve.openflow_port, *(o.openflow_port for o in self.others)],
                               self.switch, self.serve.codec, self.datapath, self.tx_queues, tls=self.serve.tls,
                               controller_ip=self.serve.host)
        self.testbed.start()
        with self.serve.client() as client:
            for name, fn in self.spec.functions.items() if self.declare_functions else ():
                dpid = self.spec.dpid(fn.switch)
                for side, port in (("in", fn.ingress_port), ("out", fn.egress_port)):
                    made = client.create("ports", {"name": f"{name}-{side}", "device_id": name,
                                                   "device_owner": "network:sf",
                                                   "binding:profile": {"switch": dpid, "port": port}})
                    self.ports[made["name"]] = made["id"]
            self.wait_for_discovery(client)
        self.learn_hosts()
        for index, name in enumerate(self.spec.functions, start=1):
            self.start_function(name, index)

    def wait_for_discovery(self, client: SfcClient, timeout: float = 30.0) -> None:
        """Until the controller knows every link both ways (before hosts ARP: a frame flooded over a link
        not yet known would teach the controller a host in the wrong place)."""
        timeout *= self.serve.patience
        deadline = time.monotonic() + timeout
        while True:
            fabric = client.get("/v2.0/srfabric/fabric")["fabric"]
            if len(fabric["links"]) == 2 * len(self.spec.links) and all(s["connected"] for s in fabric["switches"]) \
                    and len(fabric["switches"]) == len(self.spec.switches):
                return
            if time.monotonic() > deadline:
                raise SrfabricError("discovery", f"{len(fabric['links'])} of {2 * len(self.spec.links)} link "
                                                 f"directions known after {timeout} s")
            time.sleep(0.2)

    def learn_hosts(self, timeout: float = 30.0) -> None:
        """Hosts ARP (a ping each) until the API lists every one of them as a port (found by address:
        the controller names learned hosts itself)."""
        assert self.testbed is not None
        timeout *= self.serve.patience
        deadline = time.monotonic() + timeout
        with self.serve.client() as client:
            while True:
                by_ip = {ip["ip_address"]: p["id"] for p in client.list("ports") for ip in p["fixed_ips"]}
                if all(host.ip in by_ip and (host.ip6 is None or host.ip6 in by_ip)
                       for host in self.spec.hosts.values()):
                    self.ports.update({name: by_ip[host.ip] for name, host in self.spec.hosts.items()})
                    return
                if time.monotonic() > deadline:
                    raise SrfabricError("hosts", f"not all of {sorted(self.spec.hosts)} learned within {timeout} s")
                for name, peer in learning_pings(self.spec):
                    # Dual-stack hosts ping over IPv6 once they are known: Neighbour Discovery adds the address.
                    self.testbed.node(name).cmd(f"ping -c1 -W1 {peer} >/dev/null 2>&1 &")
                time.sleep(1.0)

    def start_function(self, name: str, mark: int) -> None:
        assert self.testbed is not None
        self.vnfs[name] = self.testbed.popen(name, function_args(name, mark, self.workdir / f"{name}.json"))
        deadline = time.monotonic() + 15
        while not (self.workdir / f"{name}.json").exists():
            if time.monotonic() > deadline:
                raise SrfabricError(name, "service function not ready within 15 s")
            time.sleep(0.02)

    def function_stats(self, settle: float = 0.8) -> dict[str, dict[str, Any]]:
        """What each function counted (it writes every half second)."""
        time.sleep(settle)
        return {name: json.loads((self.workdir / f"{name}.json").read_text()) for name in self.vnfs}

    def cmd(self, node: str, command: str) -> str:
        assert self.testbed is not None
        return str(self.testbed.node(node).cmd(command))

    def wait_listening(self, node: str, port: int, timeout: float = 15.0) -> None:
        """Until a UDP socket on ``node`` is bound to ``port``: a receiver started in the background must be
        listening before its sender's first frame (a fixed sleep was too short on a loaded machine)."""
        deadline = time.monotonic() + timeout
        while not self.cmd(node, f"ss -Hlun 'sport = :{port}'").strip():
            if time.monotonic() > deadline:
                raise SrfabricError(node, f"nothing listening on UDP port {port} within {timeout} s")
            time.sleep(0.05)

    def dump_flows(self) -> dict[str, list[str]]:
        """Every switch's entries and groups as Open vSwitch prints them, counters and ages removed, sorted (a
        default route's header is in its group)."""
        tables = {}
        for name in self.spec.switches:
            done = subprocess.run(["ovs-ofctl", "-O", "OpenFlow13", "--no-stats", "dump-flows", name],
                                  capture_output=True, text=True, check=False)
            groups = subprocess.run(["ovs-ofctl", "-O", "OpenFlow13", "dump-groups", name],
                                    capture_output=True, text=True, check=False)
            tables[name] = sorted([line.strip() for line in done.stdout.splitlines() if "cookie=" in line]
                                  + [line.strip() for line in groups.stdout.splitlines() if "group_id=" in line])
        return tables

    def stop(self) -> None:
        try:
            if self.testbed is not None:
                self.testbed.stop()
        finally:
            self.testbed = None
            self.vnfs.clear()
            shutil.rmtree(self.workdir, ignore_errors=True)


def function_flows(stats: dict[str, Any], direction: str | None = None) -> dict[str, dict[str, int]]:
    """A function's counters per flow key, in one direction or summed over both."""
    merged: dict[str, dict[str, int]] = {}
    for way, flows in stats.get("flows", {}).items():
        if direction is not None and way != direction:
            continue
        for key, counts in flows.items():
            into = merged.setdefault(key, {})
            for name, value in counts.items():
                into[name] = into.get(name, 0) + value
    return merged


@contextlib.contextmanager
def postgres_cluster() -> Any:
    """``restartable_postgres``'s URL."""
    with restartable_postgres() as (url, _):
        yield url


@contextlib.contextmanager
def restartable_postgres() -> Any:
    """A throwaway PostgreSQL cluster (Debian's binaries, run as user postgres) on a free port, taking TLS only:
    its certificate is signed by a CA of its own (``security.pki``), and the URL it yields asks for
    ``sslmode=verify-full`` against that CA (plain TCP is refused by its pg_hba.conf). Yields the URL and a
    function that restarts the server (a fast shutdown, then a start, waiting for both)."""
    from srfabric.security.pki import make_ca, make_certificate

    bindir = sorted(Path("/usr/lib/postgresql").glob("*/bin"))
    if not bindir:
        raise SrfabricError("postgresql", "not installed (run `make bootstrap`)")
    pg = bindir[-1]
    root = Path(tempfile.mkdtemp(prefix="srfabric-pg-"))
    shutil.chown(root, "postgres")
    data, port = root / "data", free_port()
    pki = root / "pki"
    server = make_certificate(pki, make_ca(pki, "srfabric test database CA"), "postgres", hosts=["127.0.0.1"])
    for path in (pki, server.key, server.cert):
        shutil.chown(path, "postgres")  # the server reads its key only when it owns it (mode 0600)
    run_as = ["runuser", "-u", "postgres", "--"]
    subprocess.run([*run_as, str(pg / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres"], check=True,
                   capture_output=True)
    (data / "pg_hba.conf").write_text("local all all trust\nhostssl all all 127.0.0.1/32 trust\n")
    subprocess.run([*run_as, str(pg / "pg_ctl"), "-D", str(data), "-l", str(root / "log"), "-w", "-o",
                    f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off -c ssl=on "
                    f"-c ssl_cert_file={server.cert} -c ssl_key_file={server.key}", "start"], check=True,
                   capture_output=True)
    try:
        subprocess.run([*run_as, str(pg / "createdb"), "-h", str(root), "-p", str(port), "srfabric"], check=True,
                       capture_output=True)
        yield (f"postgresql://postgres@127.0.0.1:{port}/srfabric?sslmode=verify-full"
               f"&sslrootcert={pki / 'ca-cert.pem'}",
               # Its log as at the start: a server that inherited a pipe of ours would hold it open for good.
               lambda: subprocess.run([*run_as, str(pg / "pg_ctl"), "-D", str(data), "-l", str(root / "log"), "-m",
                                       "fast", "-w", "restart"], check=True, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    finally:
        subprocess.run([*run_as, str(pg / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"], check=False,
                       capture_output=True)
        shutil.rmtree(root, ignore_errors=True)
