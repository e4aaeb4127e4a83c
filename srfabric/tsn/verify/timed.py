"""An independent check of a fine-grained schedule: it recomputes everything from the paths and times and
trusts nothing the scheduler worked out.

Examples
--------
>>> from srfabric.tsn.model.network import Network, Stream
>>> from srfabric.tsn.model.timed import TimedAssignment, TimedProblem, TimedSchedule
>>> net = Network.build([("a", "host"), ("s", "switch"), ("b", "host")], [("a", "s"), ("s", "b")])
>>> problem = TimedProblem.build(net, [Stream("f", "a", "b", 20_000, 500), Stream("g", "a", "b", 20_000, 500)],
...                              grid_ns=100, overhead_bytes=0)
>>> clash = TimedSchedule("hand", problem, [TimedAssignment("f", ("a", "s", "b"), 0, (0, 5100)),
...                                         TimedAssignment("g", ("a", "s", "b"), 2000, (2000, 7100))])
>>> verify_timed(clash)[0]
'a→s: f [0, 4000) and g [2000, 6000) overlap'
"""

from __future__ import annotations

from srfabric.tsn.model.network import HOST
from srfabric.tsn.model.timed import TimedSchedule


def verify_timed(schedule: TimedSchedule) -> list[str]:
    """Every problem found: bad paths, off-grid or impossible times, overlapping windows, missed deadlines."""
    problem = schedule.problem
    network = problem.network
    streams = {s.id: s for s in problem.streams}
    problems: list[str] = []
    seen: set[str] = set()
    for assignment in schedule.assignments:
        name = assignment.stream
        stream = streams.get(name)
        if stream is None or name in seen:
            problems.append(f"{name}: {'not a stream of the problem' if stream is None else 'scheduled twice'}")
            continue
        seen.add(name)
        path = assignment.path
        if path[0] != stream.src or path[-1] != stream.dst or len(set(path)) != len(path):
            problems.append(f"{name}: path {path} is not a loop-free path from {stream.src} to {stream.dst}")
            continue
        if any(network.kinds.get(node) == HOST for node in path[1:-1]):
            problems.append(f"{name}: path {path} crosses a host")
            continue
        hops = list(zip(path, path[1:], strict=False))
        if any(hop not in network.edge_index for hop in hops) or len(hops) != len(assignment.starts):
            problems.append(f"{name}: path {path} uses a missing link or has {len(assignment.starts)} start times")
            continue
        if len(hops) > problem.max_hops:
            problems.append(f"{name}: {len(hops)} links exceed the diameter of {problem.max_hops}")
        if assignment.starts[0] != assignment.offset_ns or assignment.offset_ns < 0:
            problems.append(f"{name}: the first hop starts at {assignment.starts[0]}, not at its release "
                            f"{assignment.offset_ns}")
        if any(start % problem.grid_ns for start in assignment.starts):
            problems.append(f"{name}: a start time is off the {problem.grid_ns} ns grid: {assignment.starts}")
        for k in range(1, len(hops)):
            u, v = hops[k - 1]
            ready = assignment.starts[k - 1] + problem.wire_ns(stream, u, v) + problem.hop_ns(u, v)
            if assignment.starts[k] < ready:
                problems.append(f"{name}: starts on {hops[k][0]}→{hops[k][1]} at {assignment.starts[k]} ns, before "
                                f"the frame is there ({ready} ns)")
        u, v = hops[-1]
        last_end = assignment.starts[-1] + problem.window_ns(stream, u, v)
        if last_end > stream.period_ns:
            problems.append(f"{name}: its frame is still on {u}→{v} at {last_end} ns, past its period "
                            f"{stream.period_ns} ns")
        latency = assignment.starts[-1] + problem.wire_ns(stream, u, v) + problem.hop_ns(u, v) - assignment.offset_ns
        if stream.deadline_ns is not None and latency > stream.deadline_ns:
            problems.append(f"{name}: latency {latency} ns exceeds its deadline {stream.deadline_ns} ns")
    for (u, v), spans in schedule.windows().items():
        for (s1, e1, a), (s2, e2, b) in zip(spans, spans[1:], strict=False):
            if s2 < e1:
                problems.append(f"{u}→{v}: {a} [{s1}, {e1}) and {b} [{s2}, {e2}) overlap")
    return problems
