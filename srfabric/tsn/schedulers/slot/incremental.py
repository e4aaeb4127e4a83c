"""Online admission: add one stream to a schedule without moving the admitted ones.

Every directed edge keeps a bit mask of busy (slot, cycle) positions; bit
``slot * cycles + cycle``. A new stream tries its k shortest paths, shortest
first, and takes the free position that is already busiest elsewhere in the
network ("most used" best fit): packing streams into the same slots leaves
whole slots free for later streams whose paths would collide.

Examples
--------
>>> from srfabric.tsn.model.network import Network, Stream
>>> net = Network.build([("a", "host"), ("s", "switch"), ("b", "host")], [("a", "s"), ("s", "b")])
>>> admission = Admission(net, slots=2)
>>> admission.admit(Stream("f1", "a", "b")).slot
0
>>> admission.admit(Stream("f2", "a", "b")).slot
1
>>> admission.admit(Stream("f3", "a", "b")) is None
True
>>> admission.remove("f1")
>>> admission.admit(Stream("f3", "a", "b")).slot
0

With repair, an admission that finds no free position may move up to
``max_moves`` admitted streams to other positions (``admit_with_repair``): the
streams blocking one position move to free positions, or one blocking stream
displaces one more (an ejection chain of two moves).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from srfabric.errors import ModelError
from srfabric.tsn.model.network import Network, Stream
from srfabric.tsn.model.paths import PathFinder
from srfabric.tsn.model.schedule import Assignment, Schedule
from srfabric.tsn.model.slots import DEFAULT_DIAMETER, Problem

# Positions a displaced stream may try when it must displace one more (an ejection chain): the first
# few, ordered by how little they disturb, carry almost all the chains that succeed.
CHAIN_TRIES = 4


class Admission:
    """Admitted streams and the busy positions of every directed edge."""

    def __init__(
        self,
        network: Network,
        slots: int,
        cycles: int = 1,
        max_hops: int = DEFAULT_DIAMETER,
        k_paths: int = 4,
        finder: PathFinder | None = None,
    ) -> None:
        self.network = network
        self.slots = slots
        self.cycles = cycles
        self.k_paths = k_paths
        self.finder = finder or PathFinder(network, max_hops)
        self.busy = [0] * len(network.edges)
        self.holders: list[dict[str, int]] = [{} for _ in network.edges]  # per edge: stream -> its mask
        self.usage = [0] * (slots * cycles)
        self.admitted: dict[str, tuple[Assignment, int, list[int]]] = {}
        self.requests: dict[str, tuple[Stream, int, tuple[tuple[str, ...], ...] | None]] = {}
        self._edges: dict[tuple[str, ...], list[int]] = {}  # path -> edge indices, asked for again and again

    def path_edges(self, path: tuple[str, ...]) -> list[int]:
        """The network's edge indices of ``path``, cached."""
        edges = self._edges.get(path)
        if edges is None:
            edges = self._edges[path] = self.network.path_edges(path)
        return edges

    def pattern(self, multiple: int, phase: int) -> int:
        """Bits of the cycles ``c ≡ phase (mod multiple)`` within one slot."""
        if self.cycles % multiple:
            raise ModelError("multiple", f"{multiple} does not divide the hyperperiod of {self.cycles} cycles")
        return sum(1 << cycle for cycle in range(phase, self.cycles, multiple))

    def admit(
        self, stream: Stream, multiple: int = 1, paths: Sequence[tuple[str, ...]] | None = None
    ) -> Assignment | None:
        """Place ``stream`` or return None when no path has a free position; admitted streams stay put.

        ``paths`` replaces the k shortest paths as the candidates (shortest first).
        """
        if stream.id in self.admitted:
            raise ModelError("id", f"stream {stream.id!r} is already admitted")
        self.requests[stream.id] = (stream, multiple, None if paths is None else tuple(paths))
        best: tuple[int, int, tuple[str, ...], int, int] | None = None
        patterns = [self.pattern(multiple, phase) for phase in range(multiple)]
        if paths is None:
            paths = self.finder.k_shortest(stream.src, stream.dst, self.k_paths)
        for path in paths:
            if best is not None and len(path) > len(best[2]):
                break  # Longer paths only when no shorter one has room.
            union = 0
            for edge in self.path_edges(path):
                union |= self.busy[edge]
            for slot in range(self.slots):
                window = union >> (slot * self.cycles)
                for phase, bits in enumerate(patterns):
                    if window & bits:
                        continue
                    score = self._score(slot, phase, multiple)
                    if best is None or score > best[0]:
                        best = (score, slot, path, phase, bits)
        if best is None:
            self.requests.pop(stream.id, None)
            return None
        _, slot, path, phase, bits = best
        assignment = Assignment(stream.id, slot, path, phase)
        self._occupy(assignment, bits << (slot * self.cycles), +1)
        return assignment

    def admit_with_repair(
        self, stream: Stream, multiple: int = 1, paths: Sequence[tuple[str, ...]] | None = None, max_moves: int = 2,
        frozen: frozenset[str] = frozenset(), max_tries: int | None = None,
    ) -> tuple[Assignment, list[Assignment]] | None:
        """``admit``, and where that finds no room, the position that moves the fewest admitted streams
        (at most ``max_moves``), each to a free position of its own candidates; returns the new stream's
        assignment and the moved streams' new ones, or None (and nothing changed)."""
        placed = self.admit(stream, multiple, paths)
        if placed is not None:
            return placed, []
        if paths is None:
            paths = self.finder.k_shortest(stream.src, stream.dst, self.k_paths)
        options = []
        for path in paths:
            edges = self.path_edges(path)
            users = {name: mask for edge in edges for name, mask in self.holders[edge].items()}.items()
            for slot in range(self.slots):
                for phase in range(multiple):
                    bits = self.pattern(multiple, phase) << (slot * self.cycles)
                    blockers = sorted(name for name, mask in users if mask & bits)
                    if len(blockers) <= max_moves and all(
                        name in self.requests and name not in frozen for name in blockers
                    ):
                        options.append((len(blockers), len(path), slot, phase, path, blockers))
        options.sort(key=lambda option: option[:4])
        for _, _, slot, phase, path, blockers in options[:max_tries]:
            moved = self._try_moves(Assignment(stream.id, slot, path, phase), multiple, blockers, max_moves, frozen)
            if moved is not None:
                self.requests[stream.id] = (stream, multiple, tuple(paths))
                return self.admitted[stream.id][0], moved
        return None

    def _try_moves(
        self, assignment: Assignment, multiple: int, blockers: list[str], max_moves: int, frozen: frozenset[str]
    ) -> list[Assignment] | None:
        """Free ``blockers``, place ``assignment``, re-admit each blocker elsewhere; undo all on failure.

        A lone blocker with no free position may itself displace one more stream (an ejection chain), as
        long as the moves stay within ``max_moves``."""
        kept = {name: self.admitted[name][0] for name in blockers}
        requests = {name: self.requests[name] for name in blockers}
        for name in blockers:
            self.remove(name)
        self.place(assignment, multiple)
        moved: list[Assignment] = []
        for name in blockers:
            request, request_multiple, request_paths = requests[name]
            if request_paths is None:  # a moved stream may take any of twice as many paths
                request_paths = tuple(self.finder.k_shortest(request.src, request.dst, 2 * self.k_paths))
            again = self.admit(request, request_multiple, request_paths)
            if again is None and len(blockers) == 1 and max_moves >= 2:
                chained = self.admit_with_repair(request, request_multiple, request_paths, max_moves - 1,
                                                 frozen | {assignment.stream, name}, CHAIN_TRIES)
                if chained is not None:
                    self.requests[name] = requests[name]
                    moved += [chained[0], *chained[1]]
                    continue
            if again is None:
                break
            self.requests[name] = requests[name]  # its own candidates, not the wider ones of this move
            moved.append(again)
        else:
            return moved
        for placed in moved:
            self.remove(placed.stream)
        self.remove(assignment.stream)
        for name, old in kept.items():
            self.place(old, requests[name][1])
            self.requests[name] = requests[name]
        return None

    def _score(self, slot: int, phase: int, multiple: int) -> int:
        base = slot * self.cycles
        return sum(self.usage[base + cycle] for cycle in range(phase, self.cycles, multiple))

    def _occupy(self, assignment: Assignment, mask: int, sign: int) -> None:
        edges = self.path_edges(assignment.path)
        for edge in edges:
            self.busy[edge] ^= mask
            if sign > 0:
                self.holders[edge][assignment.stream] = mask
            else:
                del self.holders[edge][assignment.stream]
        bit = 0
        remaining = mask
        while remaining:
            if remaining & 1:
                self.usage[bit] += sign * len(edges)
            remaining >>= 1
            bit += 1
        if sign > 0:
            self.admitted[assignment.stream] = (assignment, mask, edges)
        else:
            del self.admitted[assignment.stream]

    def place(self, assignment: Assignment, multiple: int = 1) -> None:
        """Record an assignment made elsewhere; raises if it collides with an admitted stream."""
        mask = self.pattern(multiple, assignment.phase) << (assignment.slot * self.cycles)
        for edge in self.path_edges(assignment.path):
            if self.busy[edge] & mask:
                u, v = self.network.edges[edge]
                raise ModelError(assignment.stream, f"slot {assignment.slot} on {u}→{v} is already taken")
        self._occupy(assignment, mask, +1)

    def replace(self, moves: Sequence[tuple[Assignment, int]]) -> None:
        """Put admitted streams at new positions (assignment, multiple) all at once: first all are freed,
        then all placed, so they may trade positions; their requests stay."""
        for assignment, _ in moves:
            self.remove(assignment.stream)
        for assignment, multiple in moves:
            self.place(assignment, multiple)

    def remove(self, stream_id: str) -> None:
        """Free the positions of ``stream_id`` (its request is kept: a repair may admit it again)."""
        if stream_id not in self.admitted:
            raise ModelError("id", f"stream {stream_id!r} is not admitted")
        assignment, mask, _ = self.admitted[stream_id]
        self._occupy(assignment, mask, -1)


def schedule_incremental(
    problem: Problem,
    k_paths: int = 4,
    finder: PathFinder | None = None,
    candidates: Sequence[Sequence[tuple[str, ...]]] | None = None,
    max_moves: int = 0,
) -> Schedule:
    """Admit the problem's streams one by one in their given order (from ``candidates[i]`` if given);
    with ``max_moves`` each admission may move that many admitted streams."""
    admission = Admission(problem.network, problem.slots, problem.cycles, problem.max_hops, k_paths, finder)
    began = time.perf_counter()
    schedule = Schedule("incremental", problem)
    for index, (stream, multiple) in enumerate(zip(problem.streams, problem.multiples, strict=True)):
        paths = candidates[index] if candidates is not None else None
        if max_moves:
            repaired = admission.admit_with_repair(stream, multiple, paths, max_moves)
            if repaired is not None:
                for moved in repaired[1]:
                    schedule.assignments = [a for a in schedule.assignments if a.stream != moved.stream]
                schedule.assignments += [repaired[0], *repaired[1]]
            continue
        assignment = admission.admit(stream, multiple, paths)
        if assignment is not None:
            schedule.assignments.append(assignment)
    schedule.sort_assignments()
    schedule.solve_s = time.perf_counter() - began
    schedule.status = "heuristic"
    return schedule
