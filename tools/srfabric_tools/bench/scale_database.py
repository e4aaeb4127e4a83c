"""The database part of ``srfabric bench scale``: how the API's stored state grows with the chains it holds.

The chains are made as an operator makes them, through the API service (``SfcService.create``: ports, port pairs,
port pair groups, flow classifiers, port chains), on a controller that knows the k-ary fat-tree of the rest of the
bench (``scale_controller.scale_fabric``: a function on every edge) and has no switch connected, so each write is
checked and compiled but nothing is sent. The database is a SQLite file; its size (with its write-ahead log) is
read after each count of chains is reached. The host ports are made first and counted in every size.

``python -m srfabric_tools.bench.scale_database K CODEC COUNT [COUNT ...]`` prints one JSON line per count.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from srfabric.api.service import SfcService
from srfabric.api.storage.database import open_database
from srfabric.api.storage.repository import Repository
from srfabric.codecs.macaddr import mac_to_str
from srfabric.controller.controller import Controller
from srfabric.errors import SrfabricError
from srfabric.model.topo import TopoSpec
from srfabric_tools.bench.scale_controller import chain, scale_fabric
from srfabric_tools.testbed.net import controller_config


def database_kib(folder: Path) -> float:
    """The SQLite database in ``folder`` on disk, once its write-ahead log is checkpointed into it (the log is
    scratch space that SQLite reuses, not state)."""
    with contextlib.closing(sqlite3.connect(folder / "api.db")) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return round(sum(path.stat().st_size for path in folder.glob("api.db*")) / 1024, 1)


async def host_ports(service: SfcService, spec: TopoSpec) -> dict[str, str]:
    """Each host's port: its id by host name."""
    hosts = {}
    for host in sorted(spec.hosts.values(), key=lambda h: h.name):
        made = await service.create("ports", {"name": host.name, "mac_address": mac_to_str(host.mac),
                                              "fixed_ips": [{"ip_address": host.ip}],
                                              "binding_profile": {"switch": spec.dpid(host.switch),
                                                                  "port": host.port}})
        hosts[host.name] = made["id"]
    return hosts


async def one_chain(service: SfcService, spec: TopoSpec, hosts: dict[str, str], number: int) -> float:
    """The ``number``-th chain of the bench (``scale_controller.chain``) as networking-sfc models it: a port pair
    group belongs to one chain and a port to one pair, so each chain has its function's two ports, a pair and a
    group of its own, beside its flow classifier. Returns the port chain's create alone, in ms."""
    wanted = chain(spec, number)
    groups = []
    for name in wanted.functions:
        fn = spec.functions[name]
        ends = [await service.create("ports", {"name": f"{name}-{side}-{number}", "device_id": name,
                                               "binding_profile": {"switch": spec.dpid(fn.switch), "port": port}})
                for side, port in (("in", fn.ingress_port), ("out", fn.egress_port))]
        pair = await service.create("port_pairs", {"ingress": ends[0]["id"], "egress": ends[1]["id"],
                                                   "service_function_parameters": {"correlation": "mpls"}})
        groups.append((await service.create("port_pair_groups", {"port_pairs": [pair["id"]]}))["id"])
    low, high = wanted.classifier.destination_port_range or (0, 0)
    fc = await service.create("flow_classifiers", {
        "protocol": "udp", "source_ip_prefix": wanted.classifier.source_ip_prefix,
        "destination_ip_prefix": wanted.classifier.destination_ip_prefix,
        "destination_port_range_min": low, "destination_port_range_max": high,
        "logical_source_port": hosts[wanted.source]})
    began = time.perf_counter()
    await service.create("port_chains", {"name": wanted.name, "flow_classifiers": [fc["id"]],
                                         "port_pair_groups": groups})
    return (time.perf_counter() - began) * 1e3


async def sizes(k: int, codec: str, counts: list[int], say: Any = print) -> list[dict[str, Any]]:
    """One row per count of chains: the database's size then, the time the API took to make them all, and the
    median time of the last five port chains' creates (checked and compiled beside the chains before them; no
    switch is connected, so nothing waits for a barrier)."""
    spec = scale_fabric(k)
    with tempfile.TemporaryDirectory(prefix="srfabric-scale-db-") as scratch:
        folder = Path(scratch)
        controller = Controller(controller_config(spec, codec))
        controller.fabric = spec.to_fabric()
        service = SfcService(Repository(open_database(f"sqlite:///{folder / 'api.db'}")), controller)
        await service.start()
        hosts = await host_ports(service, spec)
        empty, rows, made, began = database_kib(folder), [], 0, time.perf_counter()
        for count in sorted(counts):
            creates = []
            while made < count:
                creates.append(await one_chain(service, spec, hosts, made))
                made += 1
            kib = database_kib(folder)
            rows.append({"k": k, "chains": count, "database_kib": kib, "without_chains_kib": empty,
                         "kib_per_chain": round((kib - empty) / count, 3),
                         # the last five port chains made before this count, each beside the ones before it
                         "port_chain_create_ms": round(statistics.median(creates[-5:]), 3) if creates else None,
                         "api_s": round(time.perf_counter() - began, 3)})
            say(json.dumps(rows[-1]))
        service.repo.close()
    return rows


DATABASE_SIZES = {4: (10, 100, 1000), 16: (10, 100, 1000)}
QUICK_DATABASE_SIZES = {4: (10,)}


async def database_part(quick: bool, codec: str, say: Any = print) -> dict[str, Any]:
    """The summary's database keys: each fabric's rows, and the database's size per count of chains."""
    rows = []
    for k, counts in (QUICK_DATABASE_SIZES if quick else DATABASE_SIZES).items():
        say(f"scale: k={k}, the API's database with {', '.join(map(str, counts))} chains")
        rows += await sizes(k, codec, list(counts), say=lambda _: None)
    return {"database_runs": rows,
            "database_kib_by_chains": {str(k): {str(r["chains"]): r["database_kib"] for r in rows if r["k"] == k}
                                       for k in dict.fromkeys(r["k"] for r in rows)}}


def main(argv: list[str]) -> int:
    try:
        k, codec, counts = int(argv[0]), argv[1], [int(count) for count in argv[2:]]
    except (IndexError, ValueError):
        print("usage: python -m srfabric_tools.bench.scale_database K CODEC COUNT [COUNT ...]", file=sys.stderr)
        return 2
    try:
        asyncio.run(sizes(k, codec, counts))
    except SrfabricError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
