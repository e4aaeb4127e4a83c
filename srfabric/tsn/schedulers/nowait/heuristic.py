"""A constructive no-wait scheduler (method ``nowait``): each stream, in turn, takes the earliest release
offset at which its frames find every link of one of its candidate paths free, or is left out with the
reason; the others are still scheduled.

Every link keeps its windows modulo the gcd of each pair of periods, sorted
and merged (:mod:`srfabric.tsn.schedulers.nowait.busy`). A stream's search walks up from
offset 0: at each offset it asks every link of the path, by bisection, whether
the frame's window there meets a busy one, and if so jumps to where that busy
window ends, until one pass over the path finds every link free: no offset is
tried and rejected one by one (tsnkit's ``ls`` tries every nanosecond), and
nothing is copied or sorted per stream.
Streams go in order of period (shortest first: they have the fewest offsets to
choose from), then of size (largest first), then as given; candidate paths are
the ``k`` shortest that meet the stream's deadline, fastest first.

The loop runs in C (:mod:`srfabric.tsn.schedulers.nowait.native`) when its module is
built, over the problem packed once when its paths are listed
(:func:`listed_problem`); :func:`search` here is the reference it is tested
against, and what runs without the module.

Examples
--------
>>> from srfabric.tsn.model.network import Network, Stream
>>> from srfabric.tsn.model.timed import TimedProblem
>>> net = Network.build([("a", "host"), ("s", "switch"), ("b", "host")], [("a", "s"), ("s", "b")])
>>> streams = [Stream(f"f{i}", "a", "b", period_ns=20_000, size_bytes=500) for i in range(4)]
>>> result = schedule_nowait(TimedProblem.build(net, streams, grid_ns=100, overhead_bytes=0))
>>> [(a.stream, a.offset_ns, a.starts) for a in result.assignments]
[('f0', 0, (0, 5100)), ('f1', 4000, (4000, 9100)), ('f2', 8000, (8000, 13100))]
>>> result.reasons["f3"]  # released at 12000 ns, its frame would still travel when the next period begins
'no release offset in its 20000 ns period finds every link of its 1 candidate path(s) free'

"""

from __future__ import annotations

import gc
import time
from bisect import bisect_right
from math import gcd

from srfabric.tsn.model.network import Stream
from srfabric.tsn.model.paths import PathFinder
from srfabric.tsn.model.timed import TimedAssignment, TimedProblem, TimedSchedule
from srfabric.tsn.schedulers.nowait import native as nowait_native
from srfabric.tsn.schedulers.nowait.busy import BusyLink, Spans

Listed = tuple[list[tuple[str, ...]], bytes, list[tuple[int, ...]]]  # paths, packed, each path's hop starts


def stream_order(problem: TimedProblem) -> list[int]:
    """Indices of the problem's streams in the order they are placed."""
    streams = problem.streams
    return sorted(range(len(streams)), key=lambda i: (streams[i].period_ns, -streams[i].size_bytes, i))


def candidate_paths(problem: TimedProblem, finder: PathFinder, stream: Stream, k: int) -> list[tuple[str, ...]]:
    """The ``k`` shortest paths whose latency meets the deadline (and fits the period), fastest first; worked
    out once per endpoints, size, limit and ``k``."""
    return listed_paths(problem, finder, stream, k)[0]


def listed_paths(problem: TimedProblem, finder: PathFinder, stream: Stream, k: int) -> Listed:
    """:func:`candidate_paths`, each path's hop starts, and all of it packed for the C loop (as tsnkit's
    algorithms list their paths and work out every hop's delay before they solve)."""
    limit = stream.period_ns if stream.deadline_ns is None else min(stream.deadline_ns, stream.period_ns)
    key = (stream.src, stream.dst, stream.size_bytes, limit, k)
    found = problem._candidates.get(key)
    if found is None:
        paths = [p for p in finder.k_shortest(stream.src, stream.dst, k) if problem.latency_ns(stream, p) <= limit]
        paths.sort(key=lambda p: (problem.latency_ns(stream, p), len(p)))
        found = problem._candidates[key] = (paths, nowait_native.pack(problem, stream.size_bytes, paths),
                                            [problem.hop_starts(stream, path) for path in paths])
    return found


def earliest_offset(checks: list[tuple[Spans, int, int, int]], latest: int, grid: int) -> int | None:
    """The smallest grid point in ``[0, latest]`` at which, for every (view, g, delta, window) of ``checks``,
    a frame starting ``delta`` after it holds its link for ``window`` without meeting the view; or None.

    The checks are asked in a ring: a clash moves the offset on and asks the same check again; the offset is
    found when every check in turn has said free (:func:`srfabric.tsn.schedulers.nowait.busy.clash`, inlined:
    this loop is the search's inner one)."""
    at, count, index, free = 0, len(checks), 0, 0
    while free < count:
        (begins, ends), g, delta, window = checks[index]
        x = (at + delta) % g
        i = bisect_right(begins, x) - 1
        if i >= 0 and ends[i] > x:
            shift = ends[i] - x
        elif i + 1 < len(begins) and begins[i + 1] < x + window:
            shift = ends[i + 1] - x
        elif x + window > g and begins and begins[0] < x + window - g:
            shift = g + ends[0] - x
        else:
            free += 1
            index = index + 1 if index + 1 < count else 0
            continue
        at = -(-(at + shift) // grid) * grid
        if at > latest:
            return None
        free = 0
    return at if at <= latest else None


def path_checks(busy: list[BusyLink | None], links: tuple[int, ...], starts: tuple[int, ...],
                windows: tuple[int, ...], period: int) -> list[tuple[Spans, int, int, int]] | None:
    """What :func:`earliest_offset` asks of each link of a path; None if some link is never free long enough
    at some spacing (its longest window and this one more than fill the gcd: no offset can work; filling it
    exactly, back to back, can)."""
    checks = []
    for link, delta, window in zip(links, starts, windows, strict=True):
        table = busy[link]
        if table is None:
            continue
        for other, (spans, longest) in table.groups.items():
            g = period if other == period else gcd(period, other)
            if longest[0] + window > g:
                return None
            checks.append((spans if g == other else table.view(other, g), g, delta, window))
    return checks


def schedule_nowait(problem: TimedProblem, k_paths: int = 4, finder: PathFinder | None = None,
                    native: bool | None = None) -> TimedSchedule:
    """Place every stream it can (see the module); the rest are left out, each with its reason.

    ``native``: the placement loop in C (:mod:`srfabric.tsn.schedulers.nowait.native`; same answers), in Python, or
    (None) in C when it is built."""
    collecting = gc.isenabled()
    gc.disable()  # the search makes many short-lived tuples and frees them all; cycles it makes none
    try:
        return _place(problem, k_paths, finder or PathFinder(problem.network, problem.max_hops),
                      nowait_native.available() if native is None else native)
    finally:
        if collecting:
            gc.enable()


def listed_problem(problem: TimedProblem, finder: PathFinder, k: int) -> tuple[list[Listed], nowait_native.Packed]:
    """Every stream's :func:`listed_paths`, in the problem's order, and all of them packed for the C loop;
    worked out once per ``k``."""
    found = problem._listed.get(k)
    if found is None:
        listed = [listed_paths(problem, finder, stream, k) for stream in problem.streams]
        found = problem._listed[k] = (listed, nowait_native.pack_problem(problem, [block for _, block, _ in listed]))
    return found


def _place(problem: TimedProblem, k_paths: int, finder: PathFinder, native: bool) -> TimedSchedule:
    began = time.perf_counter()
    result = TimedSchedule("nowait", problem)
    listed, packed = listed_problem(problem, finder, k_paths)
    if native:
        placements = nowait_native.place(problem, packed)
    else:
        order = stream_order(problem)
        placements = [(-1, 0)] * len(listed)
        for index, placement in zip(order, search(problem, order, [listed[i][0] for i in order]), strict=True):
            placements[index] = placement
    streams, assignments = problem.streams, result.assignments
    make = tuple.__new__  # a named tuple from its fields in order, without its Python-level __new__
    for stream, (paths, _, starts), (taken, offset) in zip(streams, listed, placements, strict=True):
        if taken >= 0:
            assignments.append(make(TimedAssignment, (stream.id, paths[taken], offset,
                                                      tuple(map(offset.__add__, starts[taken])))))
        else:
            result.reasons[stream.id] = _left_out(problem, stream, len(paths))
    result.solve_s = time.perf_counter() - began
    return result


def _left_out(problem: TimedProblem, stream: Stream, paths: int) -> str:
    if not paths:
        limit = "its period" if stream.deadline_ns is None else f"its deadline of {stream.deadline_ns} ns"
        return f"no path of at most {problem.max_hops} links meets {limit}"
    return (f"no release offset in its {stream.period_ns} ns period finds every link of its {paths} candidate "
            f"path(s) free")


def search(problem: TimedProblem, order: list[int], candidates: list[list[tuple[str, ...]]]) -> list[tuple[int, int]]:
    """The placement loop: for each stream of ``order`` with its candidate paths, the first path (by index;
    -1 if none) on which some release offset finds every link free, and the earliest such offset."""
    busy: list[BusyLink | None] = [None] * len(problem.network.edge_index)  # by directed link index
    timing, hops, grid, streams = problem.timing, problem.hops, problem.grid_ns, problem.streams
    placements = []
    for index, paths in zip(order, candidates, strict=True):
        stream = streams[index]
        period, size = stream.period_ns, stream.size_bytes
        placement = (-1, 0)
        for number, path in enumerate(paths):
            starts, latency, windows = timing(size, path)
            links = hops(path)
            checks = path_checks(busy, links, starts, windows, period)
            if checks is None:
                continue
            offset = earliest_offset(checks, period - latency, grid)
            if offset is None:  # the journey must end within the period
                continue
            placement = (number, offset)
            for link, start, window in zip(links, starts, windows, strict=True):
                table = busy[link]
                if table is None:
                    table = busy[link] = BusyLink()
                table.add(period, offset + start, window)
            break
        placements.append(placement)
    return placements
