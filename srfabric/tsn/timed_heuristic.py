"""A constructive no-wait scheduler (method ``nowait``): each stream, in turn, takes the earliest release
offset at which its frames find every link of one of its candidate paths free, or is left out with the
reason; the others are still scheduled.

Frames of two streams on one link collide, over the hyperperiod, exactly when
their starts differ modulo the gcd ``g`` of the two periods by less than the
window of the one that starts first. So every frame already on a link forbids
one interval of offsets modulo ``g`` for the new stream; the scheduler collects
those intervals over the path, sorts them and takes the first free grid point
at or after 0: no offset is tried and rejected one by one (tsnkit's ``ls`` tries
every nanosecond). Streams go in order of period (shortest first: they have
the fewest offsets to choose from), then of size (largest first), then as
given; candidate paths are the ``k`` shortest that meet the stream's deadline,
fastest first.

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

import math
import time
from collections.abc import Iterable

from srfabric.tsn.model import Stream
from srfabric.tsn.paths import PathFinder
from srfabric.tsn.timed import TimedAssignment, TimedProblem, TimedSchedule

# Busy windows of one directed link: (start within the period, end, period) per admitted stream's hop.
Busy = list[tuple[int, int, int]]


def stream_order(problem: TimedProblem) -> list[int]:
    """Indices of the problem's streams in the order they are placed."""
    streams = problem.streams
    return sorted(range(len(streams)), key=lambda i: (streams[i].period_ns, -streams[i].size_bytes, i))


def candidate_paths(problem: TimedProblem, finder: PathFinder, stream: Stream, k: int) -> list[tuple[str, ...]]:
    """The ``k`` shortest paths whose latency meets the deadline (and fits the period), fastest first."""
    limit = stream.period_ns if stream.deadline_ns is None else min(stream.deadline_ns, stream.period_ns)
    paths = [p for p in finder.k_shortest(stream.src, stream.dst, k) if problem.latency_ns(stream, p) <= limit]
    return sorted(paths, key=lambda p: (problem.latency_ns(stream, p), len(p)))


def forbidden(busy: Busy, delta: int, window: int, period: int) -> Iterable[tuple[int, int]]:
    """Offsets (half-open intervals in ``[0, period)``) at which a frame starting ``delta`` after its release,
    holding the link for ``window``, would collide with ``busy``."""
    for start, end, other in busy:
        g = math.gcd(period, other)
        if end - start + window >= g:  # the link is never free long enough at this spacing
            yield 0, period
            return
        low = (start - delta - window + 1) % g  # first colliding offset modulo g
        length = end - start + window - 1
        for base in range(0, period, g):
            begin = base + low
            yield begin, begin + length
            if begin + length > period:  # wraps past the period's end: also forbids its start
                yield 0, begin + length - period


def earliest(intervals: list[tuple[int, int]], latest: int, grid: int) -> int | None:
    """The smallest grid point in ``[0, latest]`` outside every half-open interval, or None."""
    at = 0
    for begin, end in sorted(intervals):
        if begin > at:
            break
        if end > at:
            at = -(-end // grid) * grid
    return at if at <= latest else None


def schedule_nowait(problem: TimedProblem, k_paths: int = 4, finder: PathFinder | None = None) -> TimedSchedule:
    """Place every stream it can (see the module); the rest are left out, each with its reason."""
    began = time.perf_counter()
    finder = finder or PathFinder(problem.network, problem.max_hops)
    busy: dict[tuple[str, str], Busy] = {}
    result = TimedSchedule("nowait", problem)
    for index in stream_order(problem):
        stream = problem.streams[index]
        paths = candidate_paths(problem, finder, stream, k_paths)
        if not paths:
            limit = "its period" if stream.deadline_ns is None else f"its deadline of {stream.deadline_ns} ns"
            result.reasons[stream.id] = f"no path of at most {problem.max_hops} links meets {limit}"
            continue
        placed = None
        for path in paths:
            starts, latency, windows = problem.timing(stream.size_bytes, path)
            latest = stream.period_ns - latency  # the journey ends within the period
            blocked: list[tuple[int, int]] = []
            for hop, delta, window in zip(zip(path, path[1:], strict=False), starts, windows, strict=True):
                on_link = busy.get(hop)
                if on_link:
                    blocked.extend(forbidden(on_link, delta, window, stream.period_ns))
            offset = earliest(blocked, latest, problem.grid_ns)
            if offset is not None:
                placed = TimedAssignment(stream.id, path, offset, tuple(offset + d for d in starts))
                for hop, start, window in zip(zip(path, path[1:], strict=False), placed.starts, windows, strict=True):
                    busy.setdefault(hop, []).append((start, start + window, stream.period_ns))
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
