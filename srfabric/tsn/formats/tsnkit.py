"""tsnkit's files: import its topology and stream CSVs, export a schedule as its GCL, OFFSET, ROUTE, QUEUE.

tsnkit numbers nodes 0..N-1 and lists each direction of a link as its own row
``"(u, v)",q_num,rate,t_proc,t_prop`` with ``rate`` in bit/ns and times in ns.
A node on exactly one link is an end station (host), the rest are switches.
Streams are ``stream,src,dst,size,period,deadline,jitter`` with ``dst`` a list
of one node, ``size`` in bytes and times in ns.

Examples
--------
>>> rows = ['"(0, 2)",8,1,2000,0', '"(2, 0)",8,1,2000,0', '"(1, 2)",8,1,2000,0', '"(2, 1)",8,1,2000,0']
>>> topo = "\\n".join(["link,q_num,rate,t_proc,t_prop", *rows])
>>> net = network_from_tsnkit(topo)
>>> net.hosts, net.switches
(['0', '1'], ['2'])
>>> streams_from_tsnkit('stream,src,dst,size,period,deadline,jitter\\n0,0,[1],50,2000000,2000000,2000000\\n')
[Stream(id='0', src='0', dst='1', period_ns=2000000, size_bytes=50, deadline_ns=2000000, jitter_ns=2000000)]
"""

from __future__ import annotations

import ast
import csv
import io
import math
from collections.abc import Sequence
from pathlib import Path

from srfabric.errors import ModelError
from srfabric.tsn.gates.gcl import build_gcls
from srfabric.tsn.model.network import HOST, SWITCH, Link, Network, Stream
from srfabric.tsn.model.schedule import Schedule
from srfabric.tsn.model.timed import TimedSchedule

TOPOLOGY_HEADER = ["link", "q_num", "rate", "t_proc", "t_prop"]
TSNKIT_GRID_NS = 100  # tsnkit's T_SLOT: its simulator steps in 100 ns and releases a frame only on that grid
STREAM_HEADER = ["stream", "src", "dst", "size", "period", "deadline", "jitter"]


def _rows(text: str, header: list[str], what: str) -> list[dict[str, str]]:
    reader = csv.DictReader(io.StringIO(text))
    if reader.fieldnames != header:
        raise ModelError(what, f"header must be {','.join(header)}, got {','.join(reader.fieldnames or [])}")
    return list(reader)


def _number(row: dict[str, str], name: str, where: str) -> float:
    try:
        value = float(row[name])
    except (TypeError, ValueError):
        raise ModelError(f"{where}.{name}", f"must be a number, got {row[name]!r}") from None
    if not math.isfinite(value) or value > 2**63:
        raise ModelError(f"{where}.{name}", f"must be a finite number, got {row[name]!r}")
    if value < 0:
        raise ModelError(f"{where}.{name}", f"must be >= 0, got {row[name]}")
    return value


def network_from_tsnkit(text: str) -> Network:
    """A :class:`Network` from tsnkit's topology CSV (node ids become strings)."""
    directed: dict[tuple[int, int], dict[str, str]] = {}
    for index, row in enumerate(_rows(text, TOPOLOGY_HEADER, "topology")):
        where = f"topology[{index}]"
        try:
            pair = ast.literal_eval(row["link"])
            u, v = int(pair[0]), int(pair[1])
        except (ValueError, SyntaxError, TypeError, IndexError):
            raise ModelError(f"{where}.link", f"must look like \"(0, 1)\", got {row['link']!r}") from None
        if u < 0 or v < 0:
            raise ModelError(f"{where}.link", f"node ids must be >= 0, got ({u}, {v})")
        if (u, v) in directed:
            raise ModelError(f"{where}.link", f"({u}, {v}) is listed twice")
        for name in ("rate", "t_proc", "t_prop"):
            _number(row, name, where)
        directed[u, v] = row
    degree: dict[int, int] = {}
    for u, v in directed:
        degree[u] = degree.get(u, 0) + 1
        degree[v] = degree.get(v, 0) + 1
    nodes = sorted(degree)
    if nodes != list(range(len(nodes))):
        raise ModelError("topology", "node ids must run 0..N-1 without gaps")
    # tsnkit's rule: a node seen exactly twice (one link, both directions) is an end station.
    network = Network(kinds={str(n): HOST if degree[n] == 2 else SWITCH for n in nodes})
    for (u, v), row in directed.items():
        if u > v and (v, u) in directed:
            continue
        network.add_link(
            Link(str(u), str(v), round(float(row["rate"]) * 1e9), int(float(row["t_proc"])), int(float(row["t_prop"])))
        )
    network.validate()
    return network


def streams_from_tsnkit(text: str) -> list[Stream]:
    """Streams from tsnkit's stream CSV (unicast only)."""
    streams = []
    for index, row in enumerate(_rows(text, STREAM_HEADER, "streams")):
        where = f"streams[{index}]"
        try:
            targets = ast.literal_eval(row["dst"])
        except (ValueError, SyntaxError):
            raise ModelError(f"{where}.dst", f"must look like [3], got {row['dst']!r}") from None
        if not isinstance(targets, list) or len(targets) != 1:
            raise ModelError(f"{where}.dst", f"must list exactly one node (no multicast), got {row['dst']!r}")
        if not isinstance(targets[0], int) or isinstance(targets[0], bool):
            raise ModelError(f"{where}.dst", f"must hold a node number, got {row['dst']!r}")
        values = {name: int(_number(row, name, where)) for name in ("src", "size", "period", "deadline", "jitter")}
        streams.append(
            Stream(row["stream"], str(values["src"]), str(int(targets[0])), values["period"], values["size"],
                   values["deadline"], values["jitter"])
        )
    return streams


def _node_numbers(network: Network) -> dict[str, int]:
    names = list(network.kinds)
    if all(name.isdigit() for name in names):
        return {name: int(name) for name in names}
    return {name: index for index, name in enumerate(names)}


def schedule_to_tsnkit(schedule: Schedule | TimedSchedule, tt_queue: int = 1) -> dict[str, str]:
    """tsnkit's output files (``GCL``, ``OFFSET``, ``ROUTE``, ``QUEUE``) as CSV texts, times in ns, and beside
    them the task file they go with (``task``) and its stream numbers (``ids``), for a slot schedule or a
    fine-grained (:class:`TimedSchedule`) one.

    tsnkit's simulator walks every row of the task file and numbers streams by
    row, so the task file lists the scheduled streams only, numbered 0..n-1 in
    the order of the input; ``ids`` maps each number to the stream's own id.
    Nodes keep their numbers when these are numbers (as after an import from
    tsnkit), else they are numbered in file order. A frame's offset is its
    release time within its own period, as the simulator reads it.
    """
    if isinstance(schedule, TimedSchedule):
        cycle = schedule.problem.hyperperiod_ns
        routes = {a.stream: (a.path, a.offset_ns) for a in schedule.assignments}
        windows = {hop: [(start, end) for start, end, _ in spans] for hop, spans in schedule.windows().items()}
        return _files(schedule.problem.network, schedule.problem.streams, routes, windows, cycle, tt_queue)
    problem = schedule.problem
    cycle = math.lcm(*(s.period_ns for s in problem.streams)) if problem.streams else problem.base_period_ns
    periods = {s.id: s.period_ns for s in problem.streams}
    routes = {a.stream: (a.path, schedule.offset_ns(a) % periods[a.stream]) for a in schedule.assignments}
    windows = {}
    for gcl in build_gcls(schedule, include_hosts=True):
        at, spans = 0, []
        for entry in gcl.entries:
            if entry.mask & (1 << gcl.tt_class):
                spans += [(repeat + at, repeat + at + entry.duration_ns) for repeat in range(0, cycle, gcl.cycle_ns)]
            at += entry.duration_ns
        windows[gcl.node, gcl.peer] = spans
    return _files(problem.network, problem.streams, routes, windows, cycle, tt_queue)


def _files(network: Network, streams: Sequence[Stream], routes: dict[str, tuple[tuple[str, ...], int]],
           windows: dict[tuple[str, str], list[tuple[int, int]]], cycle: int, tt_queue: int) -> dict[str, str]:
    """The six CSV texts from each scheduled stream's (path, release offset) and each link's open windows."""
    number = _node_numbers(network)
    kept = [s for s in streams if s.id in routes]
    stream_number = {stream.id: index for index, stream in enumerate(kept)}

    def link(u: str, v: str) -> str:
        return str((number[u], number[v]))

    files = {name: io.StringIO() for name in ("GCL", "OFFSET", "ROUTE", "QUEUE", "task", "ids")}
    writers = {name: csv.writer(buffer, lineterminator="\n") for name, buffer in files.items()}
    writers["GCL"].writerow(["link", "queue", "start", "end", "cycle"])
    writers["OFFSET"].writerow(["stream", "frame", "offset"])
    writers["ROUTE"].writerow(["stream", "link"])
    writers["QUEUE"].writerow(["stream", "frame", "link", "queue"])
    writers["task"].writerow(STREAM_HEADER)
    writers["ids"].writerow(["stream", "id"])
    for stream in kept:
        deadline = stream.deadline_ns if stream.deadline_ns is not None else stream.period_ns
        jitter = stream.jitter_ns if stream.jitter_ns is not None else stream.period_ns
        writers["task"].writerow([stream_number[stream.id], number[stream.src], f"[{number[stream.dst]}]",
                                  stream.size_bytes, stream.period_ns, deadline, jitter])
        writers["ids"].writerow([stream_number[stream.id], stream.id])
    for stream in kept:
        path, offset = routes[stream.id]
        hops = list(zip(path, path[1:], strict=False))
        for frame in range(cycle // stream.period_ns):
            writers["OFFSET"].writerow([stream_number[stream.id], frame, offset])
            for u, v in hops:
                writers["QUEUE"].writerow([stream_number[stream.id], frame, link(u, v), tt_queue])
        for u, v in hops:
            writers["ROUTE"].writerow([stream_number[stream.id], link(u, v)])
    for (u, v), spans in sorted(windows.items()):
        for start, end in spans:
            writers["GCL"].writerow([link(u, v), tt_queue, start, end, cycle])
    return {name: buffer.getvalue() for name, buffer in files.items()}


def write_tsnkit(schedule: Schedule | TimedSchedule, directory: str | Path, name: str = "srfabric") -> list[Path]:
    """Write ``<name>-GCL.csv`` and the others into ``directory``; returns the paths. Run tsnkit's simulator
    as ``python -m tsnkit.simulation.tas DIR/<name>-task.csv DIR/<name>``."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for kind, text in schedule_to_tsnkit(schedule).items():
        path = folder / f"{name}-{kind}.csv"
        path.write_text(text)
        paths.append(path)
    return paths
