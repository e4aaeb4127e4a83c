"""The soak's faults done to a running fabric, the supervisor that starts a dead instance again (as systemd
would), and the watchers: each switch's tables read back against what the leader compiled, and each instance's
memory and descriptors.

Every fault is undone when its time is up. After each undo, the time until every switch holds what the leader
compiled (``compiled.in_sync`` of the switch view, a read-back over OpenFlow) is its convergence; until then the
fault's window stays open (frames lost inside it are explained by it).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from srfabric.cli.client import ApiFailure, SfcClient
from srfabric.errors import SrfabricError
from srfabric_tools.bench.soak_plan import Fault, Window
from srfabric_tools.testbed.api_lab import ApiLab, ServeProcess
from srfabric_tools.testbed.listening import listen_on

CONVERGE_TIMEOUT_S = 60.0
POLL_S = 0.1


@dataclass
class Done:
    """What happened to one fault: when it was done and undone (seconds from the load's start), its convergence,
    and what went wrong doing it."""

    fault: Fault
    started_s: float = 0.0
    undone_s: float | None = None
    converged_s: float | None = None  # from the undo until every switch held the compiled state
    error: str = ""

    def window(self) -> Window:
        end = (self.undone_s or self.started_s) + (self.converged_s if self.converged_s is not None
                                                   else CONVERGE_TIMEOUT_S)
        return Window(self.started_s, end, (self.fault.kind, self.fault.target))

    def as_dict(self) -> dict[str, Any]:
        return {**self.fault.as_dict(), "started_s": round(self.started_s, 3),
                "undone_s": None if self.undone_s is None else round(self.undone_s, 3),
                "converged_s": None if self.converged_s is None else round(self.converged_s, 3), "error": self.error}


@dataclass
class Supervisor:
    """Starts an instance again when it has died and nobody holds it down (a killed one is held down until its
    fault is undone); samples each running instance's RSS and open descriptors."""

    servers: list[ServeProcess]
    held_down: set[int] = field(default_factory=set)  # indexes of servers a fault keeps down
    restarts: int = 0
    failed_starts: list[str] = field(default_factory=list)
    samples: list[dict[str, Any]] = field(default_factory=list)  # {"t", "pid", "rss_kib", "fds"}
    stop: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)  # held for a moment, never across a start
    wake: threading.Event = field(default_factory=threading.Event)  # set when a hold ends: started at once, as
    # systemd starts a unit the moment it may (a crash that nobody holds is seen on the next look, every 0.2 s)
    starting: set[int] = field(default_factory=set)  # indexes being started, each in a thread of its own

    def release(self, index: int) -> None:
        """The fault holding instance ``index`` down is over (never waits for another instance's start)."""
        with self.lock:
            self.held_down.discard(index)
        self.wake.set()

    def run(self, start: float, sample_every_s: float = 2.0) -> None:
        next_sample = 0.0
        while not self.stop.is_set():
            self.wake.wait(0.2)
            self.wake.clear()
            with self.lock:  # it follows the new leader; a deposed one exits, and is started again here
                due = [index for index, server in enumerate(self.servers) if index not in self.held_down
                       and index not in self.starting and not (server.process and server.process.poll() is None)]
                self.starting.update(due)
                self.restarts += len(due)
            for index in due:  # in parallel, as systemd starts units: one start does not hold back another
                threading.Thread(target=self._start, args=(index, start), daemon=True).start()
            if time.monotonic() >= next_sample:
                next_sample = time.monotonic() + sample_every_s
                self.samples += [sample(server, time.monotonic() - start) for server in self.servers
                                 if server.process is not None and server.process.poll() is None]

    def _start(self, index: int, start: float) -> None:
        try:
            self.servers[index].start()
        except SrfabricError as error:  # no database yet, or killed while starting: tried again on the next round
            with self.lock:
                self.failed_starts.append(f"{time.monotonic() - start:.1f} s: {error}"[:300])
        finally:
            with self.lock:
                self.starting.discard(index)


def sample(server: ServeProcess, at_s: float) -> dict[str, Any]:
    assert server.process is not None
    pid = server.process.pid
    rss = 0
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:  # it ended meanwhile
        fds = 0
    return {"t": round(at_s, 2), "pid": pid, "rss_kib": rss, "fds": fds}


def leader_of(servers: list[ServeProcess]) -> int | None:
    """The index of the instance that leads, as it says itself."""
    for index, server in enumerate(servers):
        if server.process is None or server.process.poll() is not None:
            continue
        try:
            with SfcClient(server.url, server.token, timeout=2) as client:
                lead = client.get("/v2.0/srfabric/fabric")["fabric"].get("leadership") or {}
        except (ApiFailure, SrfabricError, OSError):
            continue
        if lead.get("leading"):
            return index
    return None


class NoLeader(SrfabricError):
    """A fault on the leader found none leading (an overlapping fault deposed it meanwhile)."""


def wait_for_leader(servers: list[ServeProcess], timeout_s: float) -> int | None:
    """The index of the leading instance once there is one; None after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while (index := leader_of(servers)) is None and time.monotonic() < deadline:
        time.sleep(POLL_S)
    return index


def in_sync(servers: list[ServeProcess], dpids: list[int], links: int) -> bool:
    """Whether the fabric is whole again as the leader sees it (every switch connected, all ``links`` directions
    up, every function up, nothing unrouted) and every switch holds what the leader compiled, read back now."""
    index = leader_of(servers)
    if index is None:
        return False
    server = servers[index]
    try:
        with SfcClient(server.url, server.token, timeout=5) as client:
            fabric = client.get("/v2.0/srfabric/fabric")["fabric"]
            whole = (sum(link["state"] == "up" for link in fabric["links"]) == links and not fabric["unrouted"]
                     and all(f["up"] for f in fabric["functions"] if "up" in f)
                     and all(s["connected"] for s in fabric["switches"] if s["dpid"] in dpids))  # a peer
            # playing a switch (the hostile fault) stays listed a while after it went: it is none of the fabric's
            views = [client.get(f"/v2.0/srfabric/switches/{dpid}")["switch"] for dpid in dpids] if whole else []
    except (ApiFailure, SrfabricError, OSError, KeyError, TypeError):  # not answering, or not as expected yet
        return False
    return whole and all(view.get("connected") and view.get("compiled", {}).get("in_sync") for view in views)


class FaultRunner:
    """Does and undoes faults on the lab: ``do`` at the fault's start, ``undo`` when its time is up."""

    def __init__(self, lab: ApiLab, servers: list[ServeProcess], supervisor: Supervisor, restart_db: Any,
                 listening: dict[str, int] | None = None) -> None:
        self.lab, self.servers, self.supervisor = lab, servers, supervisor
        self.listening = listening or {}  # switch -> the port it listens on (the instances dial it); else it connects
        self.restart_db = restart_db  # restarts the database (blocks until it takes connections again)
        self.stopped: dict[int, int] = {}  # fault id -> the server index it stopped or killed

    def do(self, fault: Fault) -> None:
        kind, target = fault.kind, fault.target
        if kind == "link":
            a, b = target.split("-")
            self.lab.testbed.net.configLinkStatus(a, b, "down")  # type: ignore[union-attr]
        elif kind == "function":
            node = self.lab.testbed.node(target)  # type: ignore[union-attr]
            for intf in node.intfList():
                node.cmd(f"ip link set dev {intf.name} down")
        elif kind == "bridge":
            switch = self.lab.testbed.node(target)  # type: ignore[union-attr]
            subprocess.run(["ovs-vsctl", "--timeout=10", "del-br", switch.name], check=True, capture_output=True)
        elif kind in ("leader_kill", "api_stop"):
            index = leader_of(self.servers)
            if index is None:
                raise NoLeader("soak", "no instance leads")
            self.stopped[id(fault)] = index
            with self.supervisor.lock:
                self.supervisor.held_down.add(index)
                if kind == "leader_kill":
                    self.servers[index].kill()
                elif self.servers[index].process is not None:
                    self.servers[index].process.send_signal(signal.SIGSTOP)  # type: ignore[union-attr]
        elif kind == "postgres_restart":
            self.restart_db()
        elif kind == "hostile":  # its own loop in its own thread, for as long as the fault lasts
            threading.Thread(target=lambda: asyncio.run(_hostile(self.servers, fault.hold_s)), daemon=True).start()

    def undo(self, fault: Fault) -> None:
        kind, target = fault.kind, fault.target
        if kind == "link":
            a, b = target.split("-")
            self.lab.testbed.net.configLinkStatus(a, b, "up")  # type: ignore[union-attr]
        elif kind == "function":
            node = self.lab.testbed.node(target)  # type: ignore[union-attr]
            for intf in node.intfList():
                node.cmd(f"ip link set dev {intf.name} up")
        elif kind == "bridge":
            switch = self.lab.testbed.node(target)  # type: ignore[union-attr]
            if target in self.listening:  # made again listening on its port, for the instances to dial
                switch.start([])
                listen_on(switch.name, self.listening[target], tls=False)
            else:
                switch.start(self.lab.testbed.net.controllers)  # type: ignore[union-attr]
        elif kind in ("leader_kill", "api_stop"):
            index = self.stopped.pop(id(fault), None)
            if index is None:
                return
            server = self.servers[index]
            if kind == "api_stop" and server.process is not None:
                server.process.send_signal(signal.SIGCONT)
            self.supervisor.release(index)  # a killed one is started again by the supervisor


async def _hostile(servers: list[ServeProcess], hold_s: float) -> None:
    """Three peers on each instance's OpenFlow port for ``hold_s``: one playing a switch nobody knows, two
    sending rubbish."""
    from srfabric_tools.bench.hostile_peer import HostilePeer

    peers = []
    for server in servers:
        for number in range(3):
            peer = HostilePeer(server.openflow_port, None)
            if await peer.open(timeout=2) is None:
                if number == 0:
                    peer.play_switch(0xBAD0000 + number)
                else:
                    peer.send(bytes([4, 0xFF, 0, 64]) + os.urandom(60))
                peers.append(peer)
    await asyncio.sleep(hold_s)
    for peer in peers:
        await peer.close()


def converge(servers: list[ServeProcess], dpids: list[int], links: int, since: float) -> float | None:
    """Seconds from ``since`` (monotonic) until the fabric is whole and every switch holds the compiled state
    (``in_sync``); None past the timeout."""
    while time.monotonic() - since < CONVERGE_TIMEOUT_S:
        if in_sync(servers, dpids, links):
            return time.monotonic() - since
        time.sleep(POLL_S)
    return None
