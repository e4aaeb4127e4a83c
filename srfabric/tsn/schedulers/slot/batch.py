"""Admission of several stream requests at once (a batch), with repair, keeping every admitted stream.

One request at a time, an admission must take whatever comes first: a stream
whose path crosses the busiest links may take the last slot that three later
streams needed. Given a batch, the order is ours to choose. Requests go in
order of how much they load the links the batch contends for (for each edge
of a request's shortest path, the number of batch requests whose shortest
paths cross it, summed), each admitted with repair (it may move up to
``max_moves`` streams). Then a swap pass: a refused request takes the place of
one stream of this batch if that lets two refused ones in (or the one taken
out fits again elsewhere). Streams admitted before the batch may be moved,
never refused.

Examples
--------
>>> from srfabric.tsn.model.network import Network, Stream
>>> net = Network.build([("a", "host"), ("b", "host"), ("s", "switch"), ("c", "host"), ("d", "host")],
...                     [("a", "s"), ("b", "s"), ("s", "c"), ("s", "d")])
>>> admission = Admission(net, slots=1)
>>> batch = [(Stream("ac", "a", "c"), 1, None), (Stream("ad", "a", "d"), 1, None),
...          (Stream("bc", "b", "c"), 1, None)]
>>> result = admit_batch(admission, batch)
>>> sorted(result.placed), result.refused
(['ad', 'bc'], ['ac'])

In the order given, ``ac`` would have been admitted first and both others refused.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from srfabric.tsn.model.network import Stream
from srfabric.tsn.model.paths import PathFinder
from srfabric.tsn.model.schedule import Assignment, Schedule
from srfabric.tsn.model.slots import Problem
from srfabric.tsn.schedulers.slot.incremental import Admission

# (stream, its period in base periods, its candidate paths or None for its k shortest)
Request = tuple[Stream, int, Sequence[tuple[str, ...]] | None]


@dataclass
class BatchResult:
    """Where a batch went: its admitted streams, the earlier streams moved to make room, the refused ones."""

    placed: dict[str, Assignment] = field(default_factory=dict)
    moved: list[Assignment] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


def _first_path(admission: Admission, request: Request) -> tuple[str, ...] | None:
    stream, _, paths = request
    if paths is not None:
        return paths[0] if paths else None
    found = admission.finder.k_shortest(stream.src, stream.dst, 1)
    return found[0] if found else None


def batch_order(admission: Admission, requests: Sequence[Request]) -> list[int]:
    """Indices of ``requests``, least load on the batch's contended links first (ties: as given)."""
    edges = []
    for request in requests:
        path = _first_path(admission, request)
        edges.append(admission.path_edges(path) if path is not None else [])
    demand = Counter(edge for path_edges in edges for edge in path_edges)
    return sorted(range(len(requests)), key=lambda i: sum(demand[edge] for edge in edges[i]))


def admit_batch(admission: Admission, requests: Sequence[Request], max_moves: int = 2) -> BatchResult:
    """Admit as many of ``requests`` as the order and the swap pass find room for; see the module."""
    before = {name: entry[0] for name, entry in admission.admitted.items()}
    by_id = {request[0].id: request for request in requests}
    admitted: list[str] = []
    refused: list[str] = []
    for index in batch_order(admission, requests):
        stream, multiple, paths = requests[index]
        if admission.admit_with_repair(stream, multiple, paths, max_moves) is None:
            refused.append(stream.id)
        else:
            admitted.append(stream.id)
    swap_for_more(admission, by_id, admitted, refused)
    left_out = set(refused)
    result = BatchResult(refused=[r[0].id for r in requests if r[0].id in left_out])
    for request in requests:
        if request[0].id in admission.admitted:
            result.placed[request[0].id] = admission.admitted[request[0].id][0]
    result.moved = [admission.admitted[name][0] for name, old in before.items()
                    if admission.admitted[name][0] != old]
    return result


def swap_for_more(admission: Admission, by_id: dict[str, Request], admitted: list[str], refused: list[str]) -> None:
    """Trade one stream of the batch for refused ones while that admits more; batch streams only."""
    improved = True
    while improved and refused:
        improved = False
        for wanted in list(refused):
            first = _first_path(admission, by_id[wanted])
            if wanted not in refused or first is None:  # let in by an earlier trade, or no path at all
                continue
            crossing = set(admission.path_edges(first))
            for out in [name for name in admitted if crossing & set(admission.admitted[name][2])]:
                extra = _trade(admission, by_id, out, wanted, refused)
                if extra is None:
                    continue
                refused.remove(wanted)
                admitted.append(wanted)
                if extra != out:  # ``out`` gave its place to two refused streams
                    admitted.remove(out)
                    refused.remove(extra)
                    refused.append(out)
                    admitted.append(extra)
                improved = True
                break


def _trade(admission: Admission, by_id: dict[str, Request], out: str, wanted: str, refused: list[str]) -> str | None:
    """Take ``out`` out and admit ``wanted``; returns the stream admitted besides it (``out`` again, at another
    position, or another refused stream), or None with everything as it was."""
    kept = admission.admitted[out][0]
    out_stream, out_multiple, out_paths = by_id[out]
    admission.remove(out)
    wanted_stream, wanted_multiple, wanted_paths = by_id[wanted]
    if admission.admit(wanted_stream, wanted_multiple, wanted_paths) is not None:
        for other in (out, *refused):
            if other == wanted:
                continue
            stream, multiple, paths = by_id[other]
            if admission.admit(stream, multiple, paths) is not None:
                return other
        admission.remove(wanted)
        admission.requests.pop(wanted, None)
    admission.place(kept, out_multiple)
    admission.requests[out] = (out_stream, out_multiple, None if out_paths is None else tuple(out_paths))
    return None


def schedule_batch(problem: Problem, k_paths: int = 4, finder: PathFinder | None = None,
                   candidates: Sequence[Sequence[tuple[str, ...]]] | None = None, max_moves: int = 2) -> Schedule:
    """The problem's streams admitted as one batch (with repair and the swap pass)."""
    admission = Admission(problem.network, problem.slots, problem.cycles, problem.max_hops, k_paths, finder)
    began = time.perf_counter()
    requests: list[Request] = [
        (stream, multiple, None if candidates is None else candidates[index])
        for index, (stream, multiple) in enumerate(zip(problem.streams, problem.multiples, strict=True))
    ]
    result = admit_batch(admission, requests, max_moves)
    schedule = Schedule("batch", problem)
    schedule.assignments = list(result.placed.values())
    schedule.sort_assignments()
    schedule.solve_s = time.perf_counter() - began
    schedule.status = "heuristic"
    return schedule
