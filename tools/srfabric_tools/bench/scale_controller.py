"""The controller under test of ``bench scale``, in a process of its own: a k-ary fat-tree with one service
function on every edge switch, ``CHAINS`` chains known from the start (as a restarted controller reads them from
its database), and then one change at a time as its parent asks.

``python -m srfabric_tools.bench.scale_controller K CHAINS CODEC [api]`` prints one JSON line with its OpenFlow port,
another once every link and host is known and the first sync of every switch is confirmed by barrier, and then
answers each line it reads (``{"op": "add" | "update" | "remove" | "stats"}``) with one line: the change's time
to its last barrier and the process's CPU time for it; ``{"op": "settled", "links": N}`` answers once it knows
N links (its parent cut one) and the repair is confirmed by barrier; ``{"op": "fill", "count": N}`` and
``{"op": "admit"}`` are the streams' (``scale_streams``). It ends when its standard input closes. With ``api``
the chains are networking-sfc resources in a database the API service loads, as ``serve`` does, and each change
is made through that service (``scale_api``); without it they are given to the controller itself.
"""

from __future__ import annotations

import asyncio
import cProfile
import gc
import json
import pstats
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import uvloop

from srfabric.api.service import SfcService
from srfabric.api.storage.database import open_database
from srfabric.api.storage.repository import Repository
from srfabric.controller.controller import Controller
from srfabric.controller.heap import freeze_heap
from srfabric.model.chain import Chain, FlowClassifier
from srfabric.model.topo import TopoSpec, fat_tree, leaf_spine
from srfabric_tools.bench.process_cpu import peak_rss_mib
from srfabric_tools.bench.scale_streams import StreamLoad, cpu_s
from srfabric_tools.testbed.net import controller_config, spec_functions

if TYPE_CHECKING:
    from srfabric_tools.bench.scale_api import ApiChanges

SPARE = "scale-spare"  # the chain the parent adds, updates and removes


def scale_fabric(size: int | str) -> TopoSpec:
    """A k-ary fat-tree (``size`` k) or a leaf-spine (``"leaf-spine SxLxH"``: spines, leaves, hosts a leaf) with a
    service function on every edge switch.

    >>> spec = scale_fabric(4)
    >>> len(spec.switches), len(spec.hosts), len(spec.functions)
    (20, 16, 8)
    >>> len(scale_fabric("leaf-spine 4x16x8").functions)
    16
    """
    if isinstance(size, str):
        spines, leaves, hosts = (int(part) for part in size.removeprefix("leaf-spine ").split("x"))
        spec = leaf_spine(spines, leaves, hosts)
    else:
        spec = fat_tree(size)
    for name in sorted(spec.switches):
        if spec.switches[name].role == "edge":
            spec.add_function(f"fn-{name}", name)
    return spec


def chain(spec: TopoSpec, number: int, name: str = "") -> Chain:
    """The ``number``-th chain: spread host pairs, one function on another edge, a UDP port of its own.

    >>> c = chain(scale_fabric(4), 3)
    >>> c.name, c.source, c.destination, c.functions, c.chain_id
    ('chain-3', 'h4', 'h15', ('fn-e1',), 4)
    """
    hosts, functions = sorted(spec.hosts, key=lambda h: spec.hosts[h].mac), sorted(spec.functions)
    source = hosts[number % len(hosts)]
    destination = hosts[(number * 7 + len(hosts) // 2 + 1) % len(hosts)]
    if destination == source:
        destination = hosts[(number + 1) % len(hosts)]
    function = functions[(number * 5 + 1) % len(functions)]
    classifier = FlowClassifier(protocol="udp", source_ip_prefix=f"{spec.hosts[source].ip}/32",
                                destination_ip_prefix=f"{spec.hosts[destination].ip}/32",
                                destination_port_range=(10000 + number % 50000,) * 2)
    return Chain(name or f"chain-{number}", classifier, (function,), source, destination, number + 1)


async def complete(controller: Controller, spec: TopoSpec) -> float:
    """Until every link and host of ``spec`` is known (links lost while the loop was busy come back with the
    next LLDP round); how long that took, in seconds."""
    begin = said = time.perf_counter()
    while len(controller.fabric.links) < 2 * len(spec.links) or len(controller.fabric.hosts) < len(spec.hosts):
        await asyncio.sleep(0.05)
        if time.perf_counter() - said > 10:  # in the run's log, should a start take long: what it waits for
            said = time.perf_counter()
            print(f"waiting: {len(controller.fabric.links) // 2} of {len(spec.links)} links, "
                  f"{len(controller.fabric.hosts)} of {len(spec.hosts)} hosts", file=sys.stderr, flush=True)
    return time.perf_counter() - begin


def flow_mods(controller: Controller) -> int:
    """Flow-mods and group-mods the controller has sent since it started."""
    return sum(controller.core.reconciler.flow_mods.values())


def say(**fields: object) -> None:
    print(json.dumps(fields), flush=True)


async def answer(controller: Controller, spec: TopoSpec, request: dict[str, Any], spare: int,
                 api: ApiChanges | None = None) -> dict[str, Any]:
    """One change (timed to its last barrier; through the API service when ``api`` is given) or the process's
    state."""
    op = request.get("op")
    if op in ("fill", "admit"):
        return await streams(controller, spec, request)
    if op == "profile":  # on around what the driver does next (a cut), then off: where the controller's time went
        return profile_switch(bool(request.get("on")))
    if op == "stats":
        return {"rss_mib": peak_rss_mib(),
                "chains": len(controller.chains), "cpu_s": round(cpu_s(), 3), "flow_mods": flow_mods(controller)}
    if op == "settled":  # a link was cut: once the controller knows, and its repair is confirmed by barrier
        while len(controller.fabric.links) > 2 * int(request["links"]):
            await asyncio.sleep(0.0005)
        await controller.sync()  # after the repair's own sync (one lock): every barrier of it is in
        return {"op": op, "flow_mods": flow_mods(controller), "links": len(controller.fabric.links) // 2}
    if op not in ("add", "update", "remove"):
        return {"error": f"op {op!r} is not add, update, remove or stats"}
    waited = await complete(controller, spec)
    profiler = cProfile.Profile() if request.get("profile") else None
    if profiler is not None:
        profiler.enable()
    begin, cpu = time.perf_counter(), cpu_s()
    if api is not None:  # through the API service: checked, compiled, to the last barrier and the commit
        await getattr(api, op)()
    elif op == "add":
        await controller.add_chain(chain(spec, spare, SPARE))
    elif op == "update":  # the spare chain through another function
        moved = chain(spec, spare + 1, SPARE)
        await controller.replace_chains({**controller.chains, SPARE: Chain(
            SPARE, controller.chains[SPARE].classifier, moved.functions, moved.source, moved.destination,
            spare + 1)})
    else:
        await controller.remove_chain(SPARE)
    fabric = controller.fabric
    done = {"op": op, "ms": round((time.perf_counter() - begin) * 1000, 3), "cpu_ms": round((cpu_s() - cpu) * 1000, 3),
            "waited_for_links_s": round(waited, 3), "topology_version": fabric.topology_version,
            "growth_version": fabric.growth_version, "links": len(fabric.links) // 2, "hosts": len(fabric.hosts)}
    if profiler is not None:
        profiler.disable()
        done["profile"] = top_functions(profiler)
    return done


_PROFILER: list[cProfile.Profile] = []


def profile_switch(on: bool) -> dict[str, Any]:
    """Start profiling the controller (``on``), or stop and say where its time went."""
    if on:
        _PROFILER[:] = [cProfile.Profile()]
        _PROFILER[0].enable()
        return {"op": "profile"}
    if not _PROFILER:
        return {"error": "no profile was started"}
    profiler = _PROFILER.pop()
    profiler.disable()
    return {"op": "profile", "profile": top_functions(profiler, 30), "own": top_functions(profiler, 20, "own_ms")}


_LOADS: dict[int, StreamLoad] = {}  # the controller's API service and streams, made on the first stream op


async def streams(controller: Controller, spec: TopoSpec, request: dict[str, Any]) -> dict[str, Any]:
    """``fill`` to ``count`` streams, or one timed ``admit`` (``scale_streams``)."""
    await complete(controller, spec)
    load = _LOADS.get(id(controller))
    if load is None:
        load = _LOADS[id(controller)] = StreamLoad(controller, spec)
        await load.start()
    if request["op"] == "fill":
        return await load.fill(int(request["count"]))
    profiler = cProfile.Profile() if request.get("profile") else None
    if profiler is not None:
        profiler.enable()
    done = await load.admit()
    if profiler is not None:
        profiler.disable()
        done["profile"], done["own"] = top_functions(profiler, 60), top_functions(profiler, 30, "own_ms")
    return done


def top_functions(profiler: cProfile.Profile, count: int = 15, by: str = "cumulative_ms") -> list[dict[str, Any]]:
    """Where a profiled change's time went: the functions with the most time under them (``by`` "own_ms": in
    them), in ms, with the calls."""
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    rows = [{"function": f"{Path(path).name}:{line}({name})", "cumulative_ms": round(cum * 1000, 3),
             "own_ms": round(own * 1000, 3), "calls": calls}
            for (path, line, name), (_, calls, own, cum, _) in stats.items()]
    return sorted(rows, key=lambda row: -row[by])[:count]


async def serve(size: int | str, chains: int, codec: str, through_api: bool) -> None:
    spec = scale_fabric(size)
    controller = Controller(controller_config(spec, codec))
    with tempfile.TemporaryDirectory(prefix="srfabric-scale-api-") as scratch:
        api = await held_by_api(controller, spec, chains, Path(scratch)) if through_api else None
        if api is None:
            for function in spec_functions(spec):
                controller.add_function(function)
            controller.core.chains = {c.name: c for c in (chain(spec, n) for n in range(chains))}
        freeze_heap()  # as ``serve`` does once its state is loaded (see ``heap``): a start's tables are not walked
        port = await controller.start("127.0.0.1", 0)
        say(port=port)
        await complete(controller, spec)
        await controller.sync()
        if api is not None:
            await api.prepare()  # the spare chain's groups and classifier, before any change is timed
        say(ready=True, links=len(controller.fabric.links) // 2, hosts=len(controller.fabric.hosts),
            chains=len(controller.chains), cpu_s=round(cpu_s(), 3), growth_version=controller.fabric.growth_version,
            topology_version=controller.fabric.topology_version)
        reader = asyncio.StreamReader()
        await asyncio.get_running_loop().connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        while line := await reader.readline():
            say(**await answer(controller, spec, json.loads(line), chains, api))
        await controller.stop()
        if api is not None:
            api.service.repo.close()


async def held_by_api(controller: Controller, spec: TopoSpec, chains: int, folder: Path) -> ApiChanges:
    """The chains in a SQLite database in ``folder`` (``scale_api.prefill``), loaded as a restarted ``serve``
    loads them: the kept switches, then every chain translated and given to the controller."""
    from srfabric_tools.bench.scale_api import ApiChanges, prefill  # it reads this module's ``chain``

    url = f"sqlite:///{folder / 'api.db'}"
    await prefill(url, spec, chains)
    gc.collect()  # what making them left behind is not frozen with the state
    service = SfcService(Repository(open_database(url)), controller)
    await service.start()
    return ApiChanges(service, spec, chains, SPARE)


if __name__ == "__main__":
    uvloop.run(serve(int(sys.argv[1]) if sys.argv[1].isdigit() else sys.argv[1], int(sys.argv[2]), sys.argv[3],
                     sys.argv[4:] == ["api"]))
