"""The streams half of ``bench scale``, inside the controller under test (``scale_controller``): its API service
(SQLite in a temporary folder) on the running controller, every host of the fat-tree a port, and time-triggered
streams between seeded random host pairs (periods of 1, 2 or 4 ms, 200 bytes).

``fill`` admits streams until ``count`` are held; ``admit`` times one more admission through the API (slot, path,
moves, the talker edge's entry to its barrier and every gated port's list), its removal, and the scheduler's
decision alone on the same planner (solve-only). Gate lists go to ``RecordingGates``: the host kernel has no
taprio, so they are computed and handed over, not run (the kernel lab runs them).

>>> body = StreamLoad.body({"h1": "p1", "h2": "p2"}, ["h1", "h2"], 3, __import__("random").Random(1))
>>> sorted(body), body["size_bytes"]
(['listener', 'period_ns', 'size_bytes', 'talker', 'udp_destination_port'], 200)
"""

from __future__ import annotations

import random
import resource
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from srfabric.api.errors import ApiError
from srfabric.api.service import SfcService
from srfabric.api.storage.database import open_database
from srfabric.api.storage.repository import Repository
from srfabric.codecs.macaddr import mac_to_str
from srfabric.controller.controller import Controller
from srfabric.model.topo import TopoSpec
from srfabric.southbound.gates import RecordingGates
from srfabric.tsn.model.network import Stream
from srfabric_tools.lab.stats import growth, median_of

PERIODS_MS = (1, 2, 4)
FIRST_PORT = 20_000  # UDP destination ports of the streams: one each


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class StreamLoad:
    """The API service of the controller under test, and the streams it holds."""

    def __init__(self, controller: Controller, spec: TopoSpec) -> None:
        self.folder = tempfile.TemporaryDirectory(prefix="srfabric-scale-")
        self.gates = RecordingGates()
        self.service = SfcService(Repository(open_database(f"sqlite:///{Path(self.folder.name) / 'api.db'}")),
                                  controller, gates=self.gates)
        self.spec = spec
        self.ports: dict[str, str] = {}  # host name -> port id
        self.held: list[str] = []  # stream ids
        self.made = 0
        self.refused = 0
        self.rng = random.Random(7)

    async def start(self) -> None:
        await self.service.start()
        for host in sorted(self.spec.hosts.values(), key=lambda h: h.name):
            switch = host.switch
            record = await self.service.create("ports", {
                "name": host.name, "mac_address": mac_to_str(host.mac), "fixed_ips": [{"ip_address": host.ip}],
                "binding_profile": {"switch": switch, "port": host.port}})
            self.ports[host.name] = record["id"]

    @staticmethod
    def body(ports: dict[str, str], hosts: list[str], number: int, rng: random.Random) -> dict[str, Any]:
        """The ``number``-th stream's request: a random pair, a random period, a UDP port of its own."""
        talker, listener = rng.sample(hosts, 2)
        return {"talker": ports[talker], "listener": ports[listener], "size_bytes": 200,
                "period_ns": rng.choice(PERIODS_MS) * 1_000_000, "udp_destination_port": FIRST_PORT + number}

    def _next(self) -> dict[str, Any]:
        self.made += 1
        return self.body(self.ports, sorted(self.ports), self.made, self.rng)

    async def fill(self, count: int) -> dict[str, Any]:
        """Admit streams until ``count`` are held (a refused one is counted and another drawn)."""
        begin = time.perf_counter()
        while len(self.held) < count:
            try:
                self.held.append((await self.service.create("streams", self._next()))["id"])
            except ApiError as error:
                if error.status != 409 or self.refused > 10 * count:
                    raise
                self.refused += 1
        return {"op": "fill", "streams": len(self.held), "refused": self.refused,
                "s": round(time.perf_counter() - begin, 3), "database_kib": self.database_kib()}

    def database_kib(self) -> float:
        """The API's SQLite database on disk (its write-ahead log too, when there is one)."""
        files = Path(self.folder.name).glob("api.db*")
        return round(sum(path.stat().st_size for path in files) / 1024, 1)

    async def admit(self) -> dict[str, Any]:
        """One admission and its removal through the API, each to its last barrier; the scheduler's decision
        alone (the planner's admission of the same request, undone at once) beside them."""
        body = self._next()
        snap = self.service.snapshot
        planner = self.service.streams.planner()
        names = {port: snap["ports"][port]["name"] for port in (body["talker"], body["listener"])}
        request = Stream("solve-only", names[body["talker"]], names[body["listener"]], body["period_ns"],
                         body["size_bytes"])
        begin = time.perf_counter()
        planner.admit_with_repair(request)
        solve_ms = (time.perf_counter() - begin) * 1000
        planner.remove(request.id)
        begin, cpu = time.perf_counter(), cpu_s()
        record = await self.service.create("streams", body)
        admit_ms, admit_cpu_ms = (time.perf_counter() - begin) * 1000, (cpu_s() - cpu) * 1000
        moved = len(self.service.streams.moved)  # admitted streams moved to make room
        regated = len(self.service.streams.last.regated)  # ports whose lists changed (the others run on)
        begin = time.perf_counter()
        await self.service.delete("streams", record["id"])
        remove_ms = (time.perf_counter() - begin) * 1000
        return {"op": "admit", "ms": round(admit_ms, 3), "cpu_ms": round(admit_cpu_ms, 3),
                "solve_ms": round(solve_ms, 3), "remove_ms": round(remove_ms, 3), "moved": moved,
                "gated_ports": len(self.gates.ports), "regated_ports": regated, "streams": len(self.held)}


def summarise_streams(streams: list[dict[str, Any]]) -> dict[str, Any]:
    """The admission of one stream against the streams held: median (quartiles) through the API and solve-only,
    and its growth exponent."""
    if not streams:
        return {}
    out: dict[str, Any] = {
        "streams_fabric": f"fat-tree k={streams[0]['k']} ({streams[0]['switches']} switches), 10 chains",
        "streams_gates": "RecordingGates: every gated port's list computed and handed over, not run (no taprio "
                         "on the host; the kernel lab runs them)",
        "stream_runs": streams,
        "admission_growth_exponent_by_streams": growth([(r["streams"], statistics.median(r["ms"]))
                                                        for r in streams])}
    for run in streams:
        out[f"admission_{run['streams']}_streams_ms"] = median_of(run["ms"])
        out[f"admission_solve_{run['streams']}_streams_ms"] = median_of(run["solve_ms"])
    return out
