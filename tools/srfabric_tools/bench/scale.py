"""``srfabric bench scale``: how the controller's cost grows with the fabric and the chains it holds.

For each fat-tree size k and each chain count, the controller (``scale_controller``, a process of its own on
one CPU) starts knowing the chains, as one restarted from its database does; this process emulates every switch
with real flow tables (``table_fabric``) on the other CPU. Measured, each to the last barrier:
- cold start: from the switches' first connection to every link and host discovered and every table confirmed
  (LLDP discovery included: one round per second);
- one chain added, updated (through another function) and removed through the API service, each ``REPEATS``
  times: wall time to the last barrier and the commit, and the controller's CPU time. The chains a size starts
  with are networking-sfc resources in the API's database, loaded as ``serve`` loads them (``scale_api``);
- ``REPEATS`` links cut, one after another (each an uplink of another edge switch): from the port status to the
  repair's last barrier, and the flow-mods the repair took;
- the controller's peak RSS, and the entries each switch holds, by role (source routing's promise: transit
  switches hold a fixed set, only edges hold per-chain state);
- at the largest size, one more add and remove under cProfile: where a change's time goes.
Each metric's growth against the number of switches is fitted as a power law (the slope on log-log axes).
"""

from __future__ import annotations

import asyncio
import gc
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import uvloop

from srfabric.errors import SrfabricError
from srfabric_tools.bench.capacity import CONTROLLER_CPU, GENERATOR_CPU, _line
from srfabric_tools.bench.output import machine, provenance, run_folder, write_json, write_runs
from srfabric_tools.bench.process_cpu import pin
from srfabric_tools.bench.scale_controller import scale_fabric
from srfabric_tools.bench.scale_streams import summarise_streams
from srfabric_tools.bench.table_fabric import TableFabric
from srfabric_tools.lab.stats import growth, median_of

SIZES, QUICK_SIZES = ((4, 8, 16, 24), (4,))
GOAL_K = 16  # the goals name k=16: its cold start is measured five times
MOST_ONLY_K = 24  # measured with the most chains only: its start alone takes about a minute
CHAINS, QUICK_CHAINS = ((10, 100, 1000), (10,))
HELD = (16, 10_000)  # and once at the largest size: what holding 10,000 chains costs (RSS above all)
LEAF_SPINE = "leaf-spine 16x48x16"  # 64 switches, 768 hosts: the other common data-centre shape (1,000 chains)
STREAMS_K, STREAMS, QUICK_STREAMS = 8, (10, 100, 1000), (10,)  # 128 hosts: room for 1,000 streams (quick: k=4)
REPEATS, QUICK_REPEATS = 5, 2
CODEC = "mac-vlan-mpls"  # 8-bit ports: a k=16 switch has 16 (the 4-bit nibbles stop at 15)
READY_S = 600.0  # a k=16 fabric's discovery and first sync, on a busy machine
ANNOUNCE_S = 30.0  # hosts announce themselves again while the controller is not ready (after its usual start)
CHANGES = ("add", "update", "remove")
COLD_STARTS = 5  # at k=16 with 1,000 chains: the full measurement's start and this many less one alone


async def measure(k: int | str, chains: int, repeats: int, profile: bool = False) -> dict[str, Any]:
    """One controller on a k-ary fat-tree (or ``LEAF_SPINE``) holding ``chains``: cold start, changes, RSS and
    entries by role."""
    with tempfile.TemporaryFile() as log:  # the controller's log: its last lines name why it stopped, if it did
        try:
            return await _measure(k, chains, repeats, log, profile)
        except SrfabricError as error:
            log.seek(0)
            tail = log.read().decode(errors="replace").strip().splitlines()[-40:]
            raise SrfabricError("scale", f"k={k}, {chains} chains: {error}; its log ends: {' | '.join(tail)}") \
                from None


async def _start(k: int | str, chains: int, log: IO[bytes],
                 api: bool = True) -> tuple[asyncio.subprocess.Process, TableFabric]:
    """The controller under test in its process (on its CPU) and the emulated fat-tree (on this one); with
    ``api``, its chains and changes are the API service's (``scale_api``)."""
    # The last emulated fabric's objects, in cycles, are freed now: left to a collection during this start, a
    # k=24 fabric's millions made the next cold start measure the emulator's collector, not the controller.
    gc.collect()
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "srfabric_tools.bench.scale_controller", str(k), str(chains), CODEC,
        *(("api",) if api else ()),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=log)
    pin(process.pid, CONTROLLER_CPU)
    pin(0, GENERATOR_CPU)
    return process, TableFabric(scale_fabric(k))


async def _ready(process: asyncio.subprocess.Process, fabric: TableFabric) -> tuple[float, dict[str, Any]]:
    """Connect every switch and announce the hosts; the cold start (s) to the controller's first confirmed sync."""
    port = (await _line(process, READY_S))["port"]  # after its chains are in the API's database (10,000: a minute)
    begin = time.perf_counter()
    await fabric.connect(port, timeout=READY_S)  # 720 handshakes on the emulator's one core take a while
    await asyncio.sleep(0.3)  # links first: a host's port must not look like a fabric port
    fabric.announce_hosts()
    line = asyncio.ensure_future(_line(process, READY_S))
    while not line.done():  # a host speaks again, as real ones do: one the controller missed is learned then
        await asyncio.wait([line], timeout=ANNOUNCE_S)
        if not line.done():
            fabric.announce_hosts()
    return time.perf_counter() - begin, line.result()


async def _stop(process: asyncio.subprocess.Process, fabric: TableFabric) -> None:
    fabric.close()
    if process.stdin is not None:
        process.stdin.close()
    try:
        await asyncio.wait_for(process.wait(), 30)
    except TimeoutError:
        process.kill()
        await process.wait()


async def _measure(k: int | str, chains: int, repeats: int, log: IO[bytes], profile: bool) -> dict[str, Any]:
    spec = scale_fabric(k)
    process, fabric = await _start(k, chains, log)
    try:
        cold_s, ready = await _ready(process, fabric)
        changes: dict[str, list[dict[str, float]]] = {op: [] for op in CHANGES}
        for _ in range(repeats):
            for op in CHANGES:
                changes[op].append(await ask(process, {"op": op}))
        profiled = [await ask(process, {"op": op, "profile": True}) for op in ("add", "remove")] if profile else []
        repairs = await cuts(fabric, process, repeats)
        stats = await ask(process, {"op": "stats"})
        log.flush()
        log.seek(0)
        said = log.read().decode(errors="replace")
        return {"k": k, "switches": len(spec.switches), "hosts": len(spec.hosts), "chains": chains,
                "cold_start_s": round(cold_s, 3), "first_sync_cpu_s": ready["cpu_s"],
                **{f"{op}_ms": [c["ms"] for c in done] for op, done in changes.items()},
                **{f"{op}_cpu_ms": [c["cpu_ms"] for c in done] for op, done in changes.items()},
                "waited_for_links_s": max(c["waited_for_links_s"] for done in changes.values() for c in done),
                # links or hosts the controller learned again after it was ready: each costs routes worked out anew
                "topology_changes_after_ready": max(c["growth_version"] for done in changes.values() for c in done)
                - ready["growth_version"],
                **({"profile": {p["op"]: {"ms": p["ms"], "top": p["profile"]} for p in profiled}} if profiled else {}),
                "repair_ms": [r["ms"] for r in repairs], "repair_flow_mods": [r["flow_mods"] for r in repairs],
                "rss_mib": stats["rss_mib"], "entries_by_role": entries_by_role(fabric),
                # links the controller took down for LLDP silence (its log), before and after it was ready
                "links_aged": said.count("is down: no LLDP"),
                "topology_version_after_ready": max(c["topology_version"] for done in changes.values() for c in done)
                - ready["topology_version"]}
    finally:
        await _stop(process, fabric)


async def measure_streams(k: int, counts: tuple[int, ...], repeats: int) -> list[dict[str, Any]]:
    """One controller on a k-ary fat-tree holding 10 chains and, in turn, each of ``counts`` streams: ``repeats``
    admissions (each removed again) through its API at every count, and the entries each switch holds."""
    with tempfile.TemporaryFile() as log:
        process, fabric = await _start(k, 10, log, api=False)  # the streams' own service
        try:
            await _ready(process, fabric)
            out = []
            for count in counts:
                filled = await ask(process, {"op": "fill", "count": count}, timeout_s=READY_S)
                admits = [await ask(process, {"op": "admit"}) for _ in range(repeats)]
                out.append({"k": k, "switches": len(fabric.spec.switches), "streams": filled["streams"],
                            "refused_while_filling": filled["refused"], "fill_s": filled["s"],
                            "database_kib": filled["database_kib"],
                            **{key: [a[key] for a in admits] for key in ("ms", "cpu_ms", "solve_ms", "remove_ms",
                                                                          "moved", "regated_ports")},
                            "gated_ports": admits[-1]["gated_ports"], "entries_by_role": entries_by_role(fabric)})
            return out
        except SrfabricError as error:
            log.seek(0)
            tail = log.read().decode(errors="replace").strip().splitlines()[-40:]
            raise SrfabricError("scale", f"streams at k={k}: {error}; its log ends: {' | '.join(tail)}") from None
        finally:
            await _stop(process, fabric)


async def cuts(fabric: TableFabric, process: asyncio.subprocess.Process, count: int) -> list[dict[str, float]]:
    """``count`` links cut one after another, each an uplink of another edge switch (chains and default routes
    cross it): from the cut to the repair's last barrier, and the flow-mods the repair took."""
    edges = sorted(name for name, switch in fabric.spec.switches.items() if switch.role == "edge")
    links = len(fabric.spec.links)
    done = []
    for edge in edges[:: max(1, len(edges) // count)][:count]:
        port = min(link.a_port if link.a == edge else link.b_port for link in fabric.spec.links
                   if edge in (link.a, link.b))
        before = (await ask(process, {"op": "stats"}))["flow_mods"]
        begin = time.perf_counter()
        fabric.cut(edge, port)
        links -= 1
        settled = await ask(process, {"op": "settled", "links": links})
        done.append({"ms": round((time.perf_counter() - begin) * 1000, 3), "flow_mods": settled["flow_mods"] - before})
    return done


async def ask(process: asyncio.subprocess.Process, request: dict[str, Any], timeout_s: float = 120
              ) -> dict[str, Any]:
    assert process.stdin is not None
    process.stdin.write((json.dumps(request) + "\n").encode())
    await process.stdin.drain()
    answer = await _line(process, timeout_s)
    if "error" in answer:
        raise SrfabricError("scale", answer["error"])
    return answer


def entries_by_role(fabric: TableFabric) -> dict[str, dict[str, float]]:
    """Entries per switch, by role: the fewest, the mean and the most."""
    held: dict[str, list[int]] = {}
    for name in fabric.switches:
        fabric.switch(name).settle()
        held.setdefault(fabric.spec.switches[name].role, []).append(len(fabric.switch(name).tables))
    return {role: {"min": min(counts), "mean": round(statistics.fmean(counts), 1), "max": max(counts)}
            for role, counts in sorted(held.items())}


def summarise(runs: list[dict[str, Any]], quick: bool, measured_on: dict[str, Any],
              more_starts: Sequence[float] = ()) -> dict[str, Any]:
    by = {(r["k"], r["chains"]): r for r in runs}
    most = max(r["chains"] for r in runs)
    curves = {f"{op}_ms": growth([(r["switches"], median_of(r[f"{op}_ms"])["median"]) for r in runs
                                  if r["chains"] == most]) for op in CHANGES}
    curves["cold_start_s"] = growth([(r["switches"], r["cold_start_s"]) for r in runs if r["chains"] == most])
    curves["repair_ms"] = growth([(r["switches"], median_of(r["repair_ms"])["median"]) for r in runs
                                  if r["chains"] == most])
    summary: dict[str, Any] = {
        **provenance(measured_on, "srfabric bench scale"), "quick": quick, "codec": CODEC,
        "switches_emulated": "bench/table_fabric.py: flow tables kept, barriers answered once applied",
        "chains_through": "the API service: chains loaded from its database (SQLite), each change a port chain "
                          "created, updated and deleted, timed to the last barrier and the commit",
        "runs": runs, "growth_exponent_by_switches": curves,
        "transit_entries_by_k": {str(r["k"]): {role: e["max"] for role, e in r["entries_by_role"].items()
                                                if role != "edge"} for r in runs if r["chains"] == most},
    }
    for k in (4, 16, 24):
        if (k, most) in by:
            summary[f"chain_change_k{k}_ms"] = median_of(by[(k, most)]["add_ms"] + by[(k, most)]["update_ms"]
                                                         + by[(k, most)]["remove_ms"])
    if "chain_change_k4_ms" in summary and "chain_change_k16_ms" in summary:
        summary["chain_change_ratio"] = (summary["chain_change_k16_ms"]["median"]
                                         / summary["chain_change_k4_ms"]["median"])
    for k in (4, 16, 24):
        if (k, most) in by:
            summary[f"repair_k{k}_ms"] = median_of(by[(k, most)]["repair_ms"])
    if (24, most) in by:  # one start (the goals' five are k=16's), and what the controller held
        summary["cold_start_k24_s"] = by[(24, most)]["cold_start_s"]
        summary["rss_k24_mib"] = by[(24, most)]["rss_mib"]
    if (16, most) in by:
        starts = [by[(16, most)]["cold_start_s"], *more_starts]
        summary["cold_start_k16_s"] = median_of(starts) | {"starts": len(starts)}
        summary["cold_starts_k16_s"] = starts
    return summary


async def cold_starts(k: int, chains: int, count: int) -> list[float]:
    """``count`` cold starts alone (s): the controller started, every switch connected and its first sync
    confirmed, then stopped."""
    done = []
    for _ in range(count):
        with tempfile.TemporaryFile() as log:
            process, fabric = await _start(k, chains, log)
            try:
                done.append(round((await _ready(process, fabric))[0], 3))
            finally:
                await _stop(process, fabric)
    return done


def run_bench(quick: bool, out: str, say: Any = print, only: str | None = None) -> tuple[dict[str, Any], Path]:
    """Every part, or ``only`` one: "chains", the fabrics' sizes with their chains (every emulated fabric but the
    streams'), "shares", the two instances sharing a fabric (``scale_shares``), "streams",
    one stream's admission beside 10, 100 and 1,000 (``scale_streams``), or "database", the API's database as
    chains are made through it (``scale_database``)."""
    from srfabric_tools.bench.scale_database import database_part
    from srfabric_tools.bench.scale_shares import run_shares, summarise_shares

    measured_on = machine()
    runs: list[dict[str, Any]] = []
    held: list[dict[str, Any]] = []  # the 10,000 chains: apart from the curves, which compare one chain count
    streams: list[dict[str, Any]] = []  # one fabric, a growing number of streams
    others: list[dict[str, Any]] = []  # the leaf-spine: another shape, apart from the fat-trees' curves
    more_starts: list[float] = []  # the largest size's cold starts beyond its measurement's
    database: dict[str, Any] = {}

    async def every() -> None:
        sizes, counts = (QUICK_SIZES, QUICK_CHAINS) if quick else (SIZES, CHAINS)
        for k in sizes if only in (None, "chains") else ():
            for chains in counts if k < MOST_ONLY_K else counts[-1:]:
                say(f"scale: k={k}, {chains} chains")  # the largest is profiled too (after its timed changes)
                runs.append(await measure(k, chains, QUICK_REPEATS if quick else REPEATS,
                                          profile=(k, chains) == (sizes[-1], counts[-1])))
        if not quick and only in (None, "chains"):  # a start is one sample: the goal is judged on five
            say(f"scale: k={GOAL_K}, {counts[-1]} chains, {COLD_STARTS - 1} more cold starts")
            more_starts.extend(await cold_starts(GOAL_K, counts[-1], COLD_STARTS - 1))
        if only in (None, "streams"):
            say(f"scale: k={4 if quick else STREAMS_K}, streams")
            streams.extend(await measure_streams(4 if quick else STREAMS_K, QUICK_STREAMS if quick else STREAMS,
                                                 QUICK_REPEATS if quick else REPEATS))
        if only in (None, "database"):
            database.update(await database_part(quick, CODEC, say))
        if not quick and only in (None, "chains"):
            say(f"scale: {LEAF_SPINE}, {CHAINS[-1]} chains")
            others.append(await measure(LEAF_SPINE, CHAINS[-1], REPEATS))
            say(f"scale: k={HELD[0]}, {HELD[1]} chains")
            held.append(await measure(*HELD, REPEATS))

    if only != "shares":
        uvloop.run(every())
    shares = []  # the scale-out part: real switches, apart from the emulated fabrics
    if only == "shares" or (not quick and only is None):
        say("scale: two instances sharing a k=4 fat-tree of Open vSwitch, beside one alone")
        shares = run_shares(quick, say)
    folder = run_folder(out, "scale")
    write_runs(folder / "runs.csv", [flat(r) for r in runs + others + held], measured_on)
    write_runs(folder / "streams.csv", [flat(r) for r in streams], measured_on)
    summary = (summarise(runs, quick, measured_on, more_starts) if runs
               else {**provenance(measured_on, "srfabric bench scale"), "quick": quick, "runs": []}) \
        | summarise_streams(streams) | summarise_shares(shares) | database
    if shares:
        summary["shares_runs"] = shares
    if others:
        summary["leaf_spine_runs"] = others
        summary["chain_change_leaf_spine_ms"] = median_of(others[0]["add_ms"] + others[0]["update_ms"]
                                                          + others[0]["remove_ms"])
        summary["repair_leaf_spine_ms"] = median_of(others[0]["repair_ms"])
    if held:
        summary["held_runs"] = held
        summary["rss_10000_chains_mib"] = held[0]["rss_mib"]
    write_json(folder / "summary.json", summary)
    if runs or streams:
        plot(runs, streams, folder / "scale.png", others)
    return summary, folder


def plot(runs: list[dict[str, Any]], streams: list[dict[str, Any]], path: Path,
         others: Sequence[dict[str, Any]] = ()) -> None:
    """Each metric against the number of switches, log-log, one line per chain count (the leaf-spine a star);
    then a stream's admission against the streams held."""
    from srfabric_tools.lab.plot import pyplot, save

    plt = pyplot()
    figure, axes = plt.subplots(1, 5, figsize=(23, 4.5))
    metrics = (("cold start (s)", lambda r: r["cold_start_s"]),
               ("one chain's change, median of add, update, remove (ms)",
                lambda r: statistics.median(r["add_ms"] + r["update_ms"] + r["remove_ms"])),
               ("a link cut to the repair's last barrier, median (ms)", lambda r: statistics.median(r["repair_ms"])),
               ("controller peak RSS (MiB)", lambda r: r["rss_mib"]))
    for ax, (label, value) in zip(axes[:4], metrics, strict=True):
        for chains in sorted({r["chains"] for r in runs}):
            mine = sorted((r for r in runs if r["chains"] == chains), key=lambda r: r["switches"])
            ax.plot([r["switches"] for r in mine], [value(r) for r in mine], "o-", label=f"{chains} chains")
        for other in others:
            ax.plot([other["switches"]], [value(other)], "*", markersize=12, label=f"{other['k']}, "
                                                                                 f"{other['chains']} chains")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("switches (fat-tree k = 4, 8, 16, 24)")
        ax.set_ylabel(label)
        if runs or others:
            ax.legend(fontsize=8)
    held = [r["streams"] for r in streams]
    for key, label in (("ms", "through the API, to the last barrier"), ("solve_ms", "solve-only")):
        axes[4].plot(held, [statistics.median(r[key]) for r in streams], "o-", label=label)
    if streams:  # a run of the chains alone (``--chains-only``) leaves this panel empty
        axes[4].set_xscale("log")
        axes[4].set_yscale("log")
    axes[4].set_xlabel(f"streams held (fat-tree k = {streams[0]['k'] if streams else STREAMS_K})")
    axes[4].set_ylabel("one stream's admission, median (ms)")
    axes[4].legend(fontsize=8)
    save(figure, path, "Measured: the controller in its own process, emulated switches with flow tables; each "
                       "time to the last barrier.")


def flat(run: dict[str, Any]) -> dict[str, Any]:
    """One CSV row of a run: lists as medians, entries by role as columns."""
    row = {key: (statistics.median(value) if isinstance(value, list) else value) for key, value in run.items()
           if key not in ("entries_by_role", "profile")}  # the profile stays in the summary
    for role, entries in run["entries_by_role"].items():
        row.update({f"{role}_entries_{stat}": value for stat, value in entries.items()})
    return row
