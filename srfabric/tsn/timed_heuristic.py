"""A constructive no-wait scheduler (method ``nowait``): each stream, in turn, takes the earliest release
offset at which its frames find every link of one of its candidate paths free, or is left out with the
reason; the others are still scheduled.

Frames of two streams on one link collide, over the hyperperiod, exactly when
their starts differ modulo the gcd ``g`` of the two periods by less than the
window of the one that starts first. So every frame already on a link forbids
one interval of offsets modulo ``g`` for the new stream; the scheduler collects
those intervals over the path, one sorted and merged list per ``g`` (as many
as there are periods), and walks up from offset 0, jumping to the end of any
interval the offset falls in, to the first grid point free in every list: no
offset is tried and rejected one by one (tsnkit's ``ls`` tries every
nanosecond), and a frame of a long period is not copied once per shorter one.
Streams go in order of period (shortest first: they have the fewest offsets to
choose from), then of size (largest first), then as given; candidate paths are
the ``k`` shortest that meet the stream's deadline, fastest first.

Examples
--------
>>> from srfabric.tsn.model import Network, Stream
>>> from srfabric.tsn.timed import TimedProblem
>>> net = Network.build([("a", "host"), ("s", "switch"), ("b", "host")], [("a", "s"), ("s", "b")])
>>> streams = [Stream(f"f{i}", "a", "b", period_ns=20_000, size_bytes=500) for i in range(4)]
>>> result = schedule_nowait(TimedProblem.build(net, streams, grid_ns=100, overhead_bytes=0))
>>> [(a.stream, a.offset_ns, a.starts) for a in result.assignments]
[('f0', 0, (0, 5100)), ('f1', 4000, (4000, 9100)), ('f2', 8000, (8000, 13100))]
>>> result.reasons["f3"]  # released at 12000 ns, its frame would still travel when the next period begins
'no release offset in its 20000 ns period finds every link of its 1 candidate path(s) free'

"""

from __future__ import annotations

import bisect
import gc
import math
import time

from srfabric.tsn.model import Stream
from srfabric.tsn.paths import PathFinder
from srfabric.tsn.timed import TimedAssignment, TimedProblem, TimedSchedule

# Busy windows of one directed link, grouped by period: period -> ([(start, length)], longest length). One gcd
# serves a whole group and its intervals come from one comprehension.
LinkBusy = dict[int, tuple[list[tuple[int, int]], int]]
# Forbidden offsets modulo g, per g: sorted, disjoint (begins, ends), half-open.
Residues = dict[int, tuple[list[int], list[int]]]


def stream_order(problem: TimedProblem) -> list[int]:
    """Indices of the problem's streams in the order they are placed."""
    streams = problem.streams
    return sorted(range(len(streams)), key=lambda i: (streams[i].period_ns, -streams[i].size_bytes, i))


def candidate_paths(problem: TimedProblem, finder: PathFinder, stream: Stream, k: int) -> list[tuple[str, ...]]:
    """The ``k`` shortest paths whose latency meets the deadline (and fits the period), fastest first; worked
    out once per endpoints, size, limit and ``k``."""
    limit = stream.period_ns if stream.deadline_ns is None else min(stream.deadline_ns, stream.period_ns)
    key = (stream.src, stream.dst, stream.size_bytes, limit, k)
    found = problem._candidates.get(key)
    if found is None:
        paths = [p for p in finder.k_shortest(stream.src, stream.dst, k) if problem.latency_ns(stream, p) <= limit]
        found = problem._candidates[key] = sorted(paths, key=lambda p: (problem.latency_ns(stream, p), len(p)))
    return found


def add_forbidden(found: dict[int, list[tuple[int, int]]], link: LinkBusy, delta: int, window: int,
                  period: int) -> bool:
    """Add to ``found`` (per gcd g, intervals of offsets modulo g, an end may pass g) the offsets at which a
    frame starting ``delta`` after its release, holding the link for ``window``, collides with the link's
    windows. False if the link is never free long enough at some spacing (no offset can work)."""
    shift, reach = delta + window - 1, window - 1
    for other, (spans, longest) in link.items():
        g = math.gcd(period, other)
        if longest + window >= g:
            return False
        # A window at ``start`` forbids offsets from start - delta - window + 1 to start + length - delta - 1.
        found.setdefault(g, []).extend([(b, b + length + reach) for start, length in spans
                                        for b in ((start - shift) % g,)])
    return True


def merge(found: dict[int, list[tuple[int, int]]]) -> Residues:
    """Each g's intervals with the ones past g wrapped to its start, sorted and merged."""
    out: Residues = {}
    for g, intervals in found.items():
        intervals += [(0, end - g) for _, end in intervals if end > g]
        intervals.sort()
        begins, ends = [intervals[0][0]], [intervals[0][1]]
        for begin, end in intervals:
            if begin > ends[-1]:
                begins.append(begin)
                ends.append(end)
            elif end > ends[-1]:
                ends[-1] = end
        out[g] = (begins, ends)
    return out


def first_free(residues: Residues, latest: int, grid: int) -> int | None:
    """The smallest grid point in ``[0, latest]`` outside every forbidden interval (modulo its g), or None."""
    at = 0
    while at <= latest:
        moved = False
        for g, (begins, ends) in residues.items():
            rest = at % g
            i = bisect.bisect_right(begins, rest) - 1
            if i >= 0 and ends[i] > rest:
                at = -(-(at - rest + ends[i]) // grid) * grid
                moved = True
        if not moved:
            return at
    return None


def schedule_nowait(problem: TimedProblem, k_paths: int = 4, finder: PathFinder | None = None) -> TimedSchedule:
    """Place every stream it can (see the module); the rest are left out, each with its reason."""
    collecting = gc.isenabled()
    gc.disable()  # the search makes many short-lived tuples and frees them all; cycles it makes none
    try:
        return _place(problem, k_paths, finder or PathFinder(problem.network, problem.max_hops))
    finally:
        if collecting:
            gc.enable()


def _place(problem: TimedProblem, k_paths: int, finder: PathFinder) -> TimedSchedule:
    began = time.perf_counter()
    busy: list[LinkBusy | None] = [None] * len(problem.network.edge_index)  # by directed link index
    edge_index = problem.network.edge_index
    links_of: dict[tuple[str, ...], list[int]] = {}
    result = TimedSchedule("nowait", problem)
    for index in stream_order(problem):
        stream = problem.streams[index]
        period = stream.period_ns
        paths = candidate_paths(problem, finder, stream, k_paths)
        if not paths:
            limit = "its period" if stream.deadline_ns is None else f"its deadline of {stream.deadline_ns} ns"
            result.reasons[stream.id] = f"no path of at most {problem.max_hops} links meets {limit}"
            continue
        placed = None
        for path in paths:
            starts, latency, windows = problem.timing(stream.size_bytes, path)
            links = links_of.get(path)
            if links is None:
                links = links_of[path] = [edge_index[hop] for hop in zip(path, path[1:], strict=False)]
            found: dict[int, list[tuple[int, int]]] = {}
            free = True
            for link, delta, window in zip(links, starts, windows, strict=True):
                on_link = busy[link]
                if on_link is not None and not add_forbidden(found, on_link, delta, window, period):
                    free = False
                    break
            if not free:
                continue
            offset = first_free(merge(found), period - latency, problem.grid_ns) if found else (
                0 if latency <= period else None)
            if offset is None:  # the journey must end within the period
                continue
            placed = TimedAssignment(stream.id, path, offset, tuple(offset + d for d in starts))
            for link, start, window in zip(links, placed.starts, windows, strict=True):
                groups = busy[link]
                if groups is None:
                    groups = busy[link] = {}
                entry = groups.get(period)
                if entry is None:
                    groups[period] = ([(start, window)], window)
                else:
                    entry[0].append((start, window))
                    if window > entry[1]:
                        groups[period] = (entry[0], window)
            break
        if placed is None:
            result.reasons[stream.id] = (f"no release offset in its {stream.period_ns} ns period finds every link of "
                                         f"its {len(paths)} candidate path(s) free")
            continue
        result.assignments.append(placed)
    position = {s.id: index for index, s in enumerate(problem.streams)}
    result.assignments.sort(key=lambda a: position[a.stream])
    result.solve_s = time.perf_counter() - began
    return result
