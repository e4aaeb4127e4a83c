"""An independent check of any schedule, written without the solvers' code.

It re-derives every fact from the network and the schedule alone: each path
is a walk over existing links from the stream's source to its destination,
each slot and phase is in range, and no directed link carries two streams in
the same slot of the same cycle.
"""

from __future__ import annotations

from srfabric.tsn.schedule import Schedule


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
