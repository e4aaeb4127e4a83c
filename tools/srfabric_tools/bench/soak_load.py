"""The soak's load: numbered UDP on every chain, through its functions, and API churn beside it.

The sender (on h1) sends each chain's frames in turn, each carrying its chain's port, its number and when it was
sent; the receiver (on h2) notes, per chain, every run of numbers it lacks with the send times of the frames on
either side (``soak_plan.Gap``), and frames that came back in time order (a number below one already seen).
The functions count the frames they forward by the mark of the function they came from (``testbed.vnf``): a
frame seen by a function outside its chain, or coming from any function but the one before in its chain, is
misdelivered.

The churn makes, changes and deletes chains of its own (no traffic on them) at a steady pace through whichever
instance answers, and remembers what was acknowledged (a 2xx answer: the change is committed and on the switches)
and what was not (no answer: either outcome is right).
"""

from __future__ import annotations

import itertools
import json
import random
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from srfabric.cli.client import ApiFailure, SfcClient
from srfabric.errors import SrfabricError
from srfabric_tools.bench.soak_plan import Gap
from srfabric_tools.testbed.api_chains import FUNCTIONS
from srfabric_tools.testbed.api_lab import ApiLab, ServeProcess

SEND = """
import socket, struct, time
ports, rate, seconds, out = {ports}, {rate}, {seconds}, "{out}"
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sent = dict.fromkeys(ports, 0)
start = time.time()
n = 0
while time.time() - start < seconds:
    for port in ports:
        s.sendto(struct.pack("!IId", port, sent[port], time.time()) + b"x" * 48, ("{dst}", port))
        sent[port] += 1
    n += 1
    time.sleep(max(0.0, start + n / rate - time.time()))
open(out, "w").write(__import__("json").dumps({{"start": start, "sent": sent}}))
"""
RECEIVE = """
import json, selectors, socket, struct, time
ports, out, quiet, until = {ports}, "{out}", {quiet}, time.time() + {seconds}
sel = selectors.DefaultSelector()
for port in ports:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
    s.bind(("0.0.0.0", port))
    s.setblocking(False)
    sel.register(s, selectors.EVENT_READ)
want = dict.fromkeys(ports, 0)
last = dict.fromkeys(ports, None)
got = dict.fromkeys(ports, 0)
gaps, backwards, heard = [], 0, time.time()
while time.time() < until or time.time() - heard < quiet:  # a fault may silence every chain for seconds
    for key, _ in sel.select(0.5):
        while True:
            try:
                data = key.fileobj.recv(2048)
            except BlockingIOError:
                break
            port, seq, sent = struct.unpack_from("!IId", data)
            heard = time.time()
            got[port] += 1
            if seq > want[port]:
                gaps.append([port, want[port], seq - 1, last[port], sent])
            if seq < want[port]:
                backwards += 1
            else:
                want[port], last[port] = seq + 1, sent
open(out, "w").write(json.dumps({{"got": got, "want": want, "last": last, "gaps": gaps, "backwards": backwards}}))
"""
QUIET_S = 4.0  # the receiver stops once nothing came for this long after the sender's end


@dataclass
class SoakChain:
    port: int
    functions: tuple[str, ...]  # in order
    ident: str = ""


def make_chains(client: SfcClient, lab: ApiLab, groups: list[str], count: int, first_port: int,
                copies: int, functions: tuple[str, ...] = FUNCTIONS) -> list[SoakChain]:
    """``count`` chains from h1 to h2 over distinct orders of the groups (``make_groups``: ``copies`` per
    function of ``functions``, in that order), each on its own UDP port."""
    orders = itertools.chain(itertools.permutations(range(len(groups)), 3),
                             itertools.permutations(range(len(groups)), 4))
    made: list[SoakChain] = []
    for order in orders:
        if len(made) == count:
            break
        through = tuple(functions[g // copies] for g in order)
        if len(set(through)) < len(through):
            continue  # a function twice in one chain: its order check would be ambiguous
        port = first_port + len(made)
        fc = client.create("flow_classifiers", {"protocol": "udp", "destination_port_range_min": port,
                                                "destination_port_range_max": port,
                                                "logical_source_port": lab.ports["h1"],
                                                "logical_destination_port": lab.ports["h2"]})
        chain = client.create("port_chains", {"port_pair_groups": [groups[g] for g in order],
                                              "flow_classifiers": [fc["id"]]})
        made.append(SoakChain(port, through, chain["id"]))
    return made


class Frames:
    """The sender on h1 and the receiver on h2, for ``seconds`` at ``rate`` frames per second per chain and per
    best-effort flow (a UDP port no chain classifies: it goes by the fabric's default routes)."""

    def __init__(self, lab: ApiLab, chains: list[SoakChain], rate: float, seconds: float,
                 best_effort: tuple[int, ...] = ()) -> None:
        self.lab, self.ports = lab, [c.port for c in chains] + list(best_effort)
        self.sent_file, self.received_file = lab.workdir / "soak.sent", lab.workdir / "soak.received"
        send, receive = lab.workdir / "soak-send.py", lab.workdir / "soak-receive.py"
        receive.write_text(RECEIVE.format(ports=self.ports, out=self.received_file, quiet=QUIET_S, seconds=seconds))
        send.write_text(SEND.format(ports=self.ports, rate=rate, seconds=seconds, out=self.sent_file,
                                    dst=lab.spec.hosts["h2"].ip))
        lab.cmd("h2", f"python3 {receive} &")
        for port in self.ports:
            lab.wait_listening("h2", port)
        lab.cmd("h1", f"python3 {send} &")

    def results(self, timeout: float) -> tuple[dict[str, Any], dict[str, Any]]:
        """(what was sent, what was received) once both ends are done."""
        deadline = time.monotonic() + timeout
        while not (self.sent_file.exists() and self.received_file.exists()):
            if time.monotonic() > deadline:
                raise SrfabricError("soak", "the sender or the receiver did not finish")
            time.sleep(0.5)
        return json.loads(self.sent_file.read_text()), json.loads(self.received_file.read_text())


def gaps_of(sent: dict[str, Any], received: dict[str, Any], end_s: float) -> list[Gap]:
    """Every run of frames lost, in seconds from the load's start; frames lost at the very end run to ``end_s``."""
    start = sent["start"]
    gaps = [Gap(port, first, last, (after or start) - start, before - start)
            for port, first, last, after, before in received["gaps"]]
    for port, count in sent["sent"].items():
        wanted = received["want"].get(port, 0)
        if wanted < count:
            gaps.append(Gap(int(port), wanted, count - 1, (received["last"].get(port) or start) - start, end_s))
    return gaps


def misdelivered(before: dict[str, Any], after: dict[str, Any], chains: list[SoakChain],
                 functions: tuple[str, ...] = FUNCTIONS, best_effort: tuple[int, ...] = ()) -> dict[str, int]:
    """Frames a function got during the run that it should never have seen (per function): on a chain it is not
    in, coming from any function but the one before it in the chain, or on its egress port; and any frame of
    the best-effort flows (ports ``best_effort``), which no chain classifies. ``functions`` in the order of
    their marks (the lab's)."""
    marks = {name: functions.index(name) + 1 for name in functions}
    by_port = {chain.port: chain for chain in chains} | {port: SoakChain(port, (), "") for port in best_effort}
    wrong: dict[str, int] = {}
    for name in functions:
        for direction, flows in after.get(name, {}).get("flows", {}).items():
            was = before.get(name, {}).get("flows", {}).get(direction, {})
            for key, counts in flows.items():
                chain = by_port.get(int(key.split(":")[1])) if key.startswith("udp:") else None
                if chain is None:
                    continue  # not one of the soak's flows (the churn's chains carry nothing)
                at = chain.functions.index(name) if name in chain.functions else -1
                right = f"from_mark_{0 if at == 0 else marks[chain.functions[at - 1]]}" if at >= 0 else None
                for counter, value in counts.items():
                    bad = counter == "packets" if direction != "forward" else \
                        counter.startswith("from_mark_") and counter != right
                    seen = value - int(was.get(key, {}).get(counter, 0))
                    if bad and seen:
                        wrong[name] = wrong.get(name, 0) + seen
    return wrong


@dataclass
class Churn:
    """API writes at a steady pace on chains of the churn's own, through whichever instance answers."""

    servers: list[ServeProcess]
    groups: list[str]
    ends: tuple[str, str]  # the source's and the destination's port ids
    seed: int
    first_port: int
    pace_s: float = 1.0
    acknowledged: dict[str, dict[str, Any]] = field(default_factory=dict)  # chain id -> its last acked body
    deleted: set[str] = field(default_factory=set)  # acknowledged deletes
    unsure: set[str] = field(default_factory=set)  # chains a write went to without an answer
    writes: int = 0
    failed: int = 0
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        rng, number = random.Random(self.seed), 0
        while not self.stop.wait(self.pace_s):
            live = sorted(self.acknowledged)
            kind = rng.choice(["create", "create", "update", "delete"]) if live else "create"
            number += 1
            target = rng.choice(live) if live else ""
            try:
                self._write(kind, target, number, rng)
            except (ApiFailure, SrfabricError, OSError):
                self.failed += 1
                if target:
                    self.unsure.add(target)

    def _write(self, kind: str, target: str, number: int, rng: random.Random) -> None:
        with self._client() as client:
            self.writes += 1
            if kind == "create":
                port = self.first_port + number
                fc = client.create("flow_classifiers", {"protocol": "udp", "destination_port_range_min": port,
                                                        "destination_port_range_max": port,
                                                        "logical_source_port": self.ends[0],
                                                        "logical_destination_port": self.ends[1]})
                body = {"name": f"churn{number}", "port_pair_groups": rng.sample(self.groups, 2),
                        "flow_classifiers": [fc["id"]]}
                made = client.create("port_chains", body)
                self.acknowledged[made["id"]] = {"name": body["name"], "port": port}
            elif kind == "update":
                client.update("port_chains", target, {"description": f"update {number}"})
                self.acknowledged[target] = {**self.acknowledged[target], "description": f"update {number}"}
            else:
                client.delete("port_chains", target)
                self.acknowledged.pop(target)
                self.deleted.add(target)

    def _client(self) -> SfcClient:
        """A client of the first instance that answers (a follower redirects to the leader)."""
        for server in self.servers:
            if server.process is not None and server.process.poll() is None:
                return SfcClient(server.url, server.token, timeout=5)
        raise SrfabricError("soak", "no instance is running")


def lost_writes(churn: Churn, chains_now: list[dict[str, Any]], tables: dict[str, list[str]]) -> list[str]:
    """Acknowledged writes the API or the switches do not show at the end (a chain whose last write had no answer
    is left out: either outcome is right)."""
    by_id = {chain["id"]: chain for chain in chains_now}
    lost = []
    for ident, body in churn.acknowledged.items():
        if ident in churn.unsure:
            continue
        shown = by_id.get(ident)
        if shown is None:
            lost.append(f"chain {body['name']} ({ident}) acknowledged, not listed")
        elif "description" in body and shown.get("description") != body["description"]:
            lost.append(f"chain {body['name']}: description {shown.get('description')!r}, not {body['description']!r}")
        elif not any(f"tp_dst={body['port']}" in line for line in tables.get("s1", [])):
            lost.append(f"chain {body['name']}: no entry for UDP port {body['port']} on s1")
    lost += [f"chain {ident} deleted, still listed" for ident in churn.deleted
             if ident in by_id and ident not in churn.unsure]
    return lost


def write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=1, sort_keys=True))
