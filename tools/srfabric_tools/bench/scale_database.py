"""The database part of ``srfabric bench scale``: how the API's stored state grows with the chains it holds.

The chains are made as an operator makes them, one write at a time through the API service (``scale_api``:
ports, port pairs, port pair groups, flow classifiers, port chains), on a controller that knows the k-ary
fat-tree of the rest of the bench (``scale_controller.scale_fabric``: a function on every edge) and has no switch
connected, so each write is checked and compiled but nothing is sent. The database is a SQLite file; its size
(with its write-ahead log) is read after each count of chains is reached. The host ports are made first and
counted in every size.

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
from srfabric.controller.controller import Controller
from srfabric.errors import SrfabricError
from srfabric_tools.bench.scale_api import host_ports, one_chain
from srfabric_tools.bench.scale_controller import scale_fabric
from srfabric_tools.testbed.net import controller_config


def database_kib(folder: Path) -> float:
    """The SQLite database in ``folder`` on disk, once its write-ahead log is checkpointed into it (the log is
    scratch space that SQLite reuses, not state)."""
    with contextlib.closing(sqlite3.connect(folder / "api.db")) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return round(sum(path.stat().st_size for path in folder.glob("api.db*")) / 1024, 1)


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
        hosts = await host_ports(service.create, spec)
        empty, rows, made, began = database_kib(folder), [], 0, time.perf_counter()
        for count in sorted(counts):
            creates = []
            while made < count:
                creates.append(await one_chain(service.create, spec, hosts, made))
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
