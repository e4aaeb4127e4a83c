"""An independent check of any schedule, written without the solvers' code.

It re-derives every fact from the network and the schedule alone: each path
is a walk over existing links from the stream's source to its destination,
each slot and phase is in range, no directed link carries two streams in
the same slot of the same cycle, and (for a problem with timing) every frame
arrives within its stream's deadline and leaves exactly one period after the
one before (no release jitter, so none beyond a stream's allowed jitter).
"""

from __future__ import annotations

from srfabric.tsn.model.network import Stream
from srfabric.tsn.model.schedule import Schedule


def verify(schedule: Schedule) -> list[str]:
    """Problems found in ``schedule``; an empty list means it is valid."""
    problem = schedule.problem
    network = problem.network
    streams = {stream.id: (stream, problem.multiples[i]) for i, stream in enumerate(problem.streams)}
    linked = {(link.a, link.b) for link in network.links} | {(link.b, link.a) for link in network.links}
    problems: list[str] = []
    owner: dict[tuple[str, str, int, int], str] = {}
    seen: set[str] = set()
    for assignment in schedule.assignments:
        name = assignment.stream
        if name not in streams:
            problems.append(f"{name}: not a stream of the problem")
            continue
        if name in seen:
            problems.append(f"{name}: scheduled twice")
        seen.add(name)
        stream, multiple = streams[name]
        path = assignment.path
        if not path or path[0] != stream.src or path[-1] != stream.dst:
            problems.append(f"{name}: path {list(path)} does not run from {stream.src} to {stream.dst}")
        if len(set(path)) != len(path):
            problems.append(f"{name}: path {list(path)} visits a node twice")
        if len(path) - 1 > problem.max_hops:
            problems.append(f"{name}: path has {len(path) - 1} links, over the limit of {problem.max_hops}")
        for node in path[1:-1]:
            if network.kinds.get(node) != "switch":
                problems.append(f"{name}: {node} forwards but is not a switch")
        if not 0 <= assignment.slot < problem.slots:
            problems.append(f"{name}: slot {assignment.slot} is outside 0..{problem.slots - 1}")
        if not 0 <= assignment.phase < multiple:
            problems.append(f"{name}: phase {assignment.phase} is outside 0..{multiple - 1}")
        problems += _timing(schedule, stream, multiple, assignment.slot, assignment.phase, len(path) - 1)
        for hop in zip(path, path[1:], strict=False):
            if hop not in linked:
                problems.append(f"{name}: no link {hop[0]}→{hop[1]}")
                continue
            for cycle in range(problem.cycles):
                if cycle % multiple != assignment.phase % multiple:
                    continue
                key = (hop[0], hop[1], assignment.slot, cycle)
                if key in owner:
                    where = f"{hop[0]}→{hop[1]} in slot {assignment.slot}, cycle {cycle}"
                    problems.append(f"{name}: {where} is already used by {owner[key]}")
                else:
                    owner[key] = name
    return problems


def _timing(schedule: Schedule, stream: Stream, multiple: int, slot: int, phase: int, hops: int) -> list[str]:
    """A frame's latency against the stream's deadline, and its release times against its period."""
    problem = schedule.problem
    if problem.timing is None:
        return []
    found = []
    latency = problem.latency_ns(stream, hops)
    if stream.deadline_ns is not None and latency > stream.deadline_ns:
        found.append(f"{stream.id}: arrives {latency} ns after its slot starts, over its deadline of "
                     f"{stream.deadline_ns} ns")
    releases = [cycle * problem.base_period_ns + slot * problem.slot_ns
                for cycle in range(problem.cycles) if cycle % multiple == phase % multiple]
    hyperperiod = problem.cycles * problem.base_period_ns
    gaps = [(b - a) % hyperperiod or hyperperiod for a, b in zip(releases, releases[1:] + releases[:1], strict=True)]
    jitter = max(gaps) - min(gaps) if gaps else 0
    # Slots reserved every g ns let a talker send exactly every period when g divides it (phases off: g is the
    # base period); unequal gaps would make some frames leave early or late.
    steady = jitter == 0 and bool(gaps) and stream.period_ns % gaps[0] == 0
    if not steady and (stream.jitter_ns is None or jitter > stream.jitter_ns):
        found.append(f"{stream.id}: frames leave {min(gaps)} to {max(gaps)} ns apart, not every {stream.period_ns} ns")
    return found
