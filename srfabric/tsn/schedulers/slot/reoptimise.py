"""Re-optimisation of an admitted schedule with S/PR: every stream stays, on fewer links.

Online admission places each stream where there is room when it arrives, often
on a longer path than it needs once other streams have left or moved. This
re-solves the slots and paths of all admitted streams at once (the S/PR ILP
over each stream's candidate paths) with every stream required, and among the
schedules that keep them all prefers, in this order: the fewest link uses
(each is a (link, slot) position taken, and a hop of latency), then streams
that keep their send offset (the talker need not change) and their path (the
ingress edge gets no entry). The admitted schedule is the start point,
so the answer is never worse than it.

Examples
--------
>>> from srfabric.tsn.model.network import Network, Stream
>>> from srfabric.tsn.model.schedule import Assignment, Schedule
>>> net = Network.build(
...     [("a", "host"), ("b", "host"), ("s1", "switch"), ("s2", "switch"), ("s3", "switch")],
...     [("a", "s1"), ("s1", "s2"), ("s1", "s3"), ("s3", "s2"), ("s2", "b")],
... )
>>> problem = Problem.slotted(net, [Stream("f", "a", "b")], slots=2)
>>> long_way = Assignment("f", 1, ("a", "s1", "s3", "s2", "b"))
>>> better = reoptimise(problem, [[("a", "s1", "s2", "b"), long_way.path]], [long_way])
>>> better[0].path, better[0].slot
(('a', 's1', 's2', 'b'), 1)
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from srfabric.errors import ModelError
from srfabric.tsn.model.paths import Path
from srfabric.tsn.model.schedule import Assignment, Schedule
from srfabric.tsn.model.slots import Problem
from srfabric.tsn.schedulers.slot.incremental import Admission
from srfabric.tsn.schedulers.slot.mip import BinaryProgram, SolveOptions
from srfabric.tsn.schedulers.slot.spr_sfr import PathOptions

KEEP = 1_000_000  # per stream scheduled: dominates any saving in links, so no stream is ever given up
PER_LINK = 100  # per link use saved: dominates staying put, so a move that saves a link is taken
STAY = 1  # per stream that keeps its offset, and again per stream that keeps its path


def with_path(paths: Sequence[Path], path: Path) -> list[Path]:
    """``paths`` with ``path`` last if it is not among them: a stream's candidates must hold where it is."""
    return list(paths) if path in paths else [*paths, path]


def reoptimise(problem: Problem, candidates: Sequence[Sequence[Path]], current: Sequence[Assignment],
               solve: SolveOptions | None = None) -> list[Assignment]:
    """Every stream of ``problem`` placed on one of ``candidates[i]`` (see the module docstring), in the
    problem's order; ``current`` (one assignment per stream, each on one of its candidates) is the start.
    Raises :class:`ModelError` when ``current`` does not fit its candidates."""
    solve = solve or SolveOptions()
    slots, cycles = problem.slots, problem.cycles
    index = {stream.id: i for i, stream in enumerate(problem.streams)}
    if sorted(a.stream for a in current) != sorted(index):
        raise ModelError("current", "needs exactly one assignment per stream of the problem")
    options = PathOptions.enumerate(problem, candidates)
    where = {(i, path, phase): o for o, (i, path, phase) in enumerate(options.owners)}
    now = {}
    for assignment in current:
        option = where.get((index[assignment.stream], assignment.path, assignment.phase))
        if option is None:
            raise ModelError("current", f"stream {assignment.stream}'s path is not one of its candidates")
        now[option] = assignment.slot
    uses = np.bincount(options.use_option, minlength=len(options.owners))  # link uses over the hyperperiod
    costs = np.repeat((KEEP - PER_LINK * uses).astype(np.float64), slots).reshape(len(options.owners), slots)
    was = {a.stream: a for a in current}
    for option, (i, path, phase) in enumerate(options.owners):
        before = was[problem.streams[i].id]
        if phase == before.phase:
            costs[option, before.slot] += STAY
        if path == before.path:
            costs[option, :] += STAY
    program = BinaryProgram()
    columns = program.add_columns(costs.ravel()).reshape(len(options.owners), slots)
    program.add_packing_rows(np.repeat(options.streams, slots), columns.ravel())
    k = np.arange(slots, dtype=np.int64)
    labels = options.use_label[:, None] + k[None, :] * cycles
    program.add_packing_rows(labels.ravel(), columns[options.use_option].ravel())
    start = np.zeros(program.num_cols)
    for option, slot in now.items():
        start[columns[option, slot]] = 1.0
    result = program.solve(solve, start)
    if result.values is None:
        return list(current)
    chosen = result.values.reshape(len(options.owners), slots) > 0.5
    placed = [Assignment(problem.streams[options.owners[o][0]].id, int(slot), options.owners[o][1],
                         options.owners[o][2]) for o, slot in zip(*np.nonzero(chosen), strict=True)]
    if len(placed) < len(current):  # not possible with a feasible start; kept as a guard
        return list(current)
    return sorted(placed, key=lambda a: index[a.stream])


def admit_and_reoptimise(problem: Problem, every: int = 10, max_moves: int = 2, k_paths: int = 4,
                         solve: SolveOptions | None = None) -> Schedule:
    """Admission with repair in arrival order, and after every ``every`` requests a re-optimisation of the
    admitted streams (all kept, each on its k shortest paths), as a controller that re-optimises
    periodically would; the moves are applied before the next request."""
    if every < 1:
        raise ModelError("every", f"must be >= 1, got {every}")
    began = time.perf_counter()
    admission = Admission(problem.network, problem.slots, problem.cycles, problem.max_hops, k_paths)
    kept: list[int] = []
    for position, (stream, multiple) in enumerate(zip(problem.streams, problem.multiples, strict=True)):
        if admission.admit_with_repair(stream, multiple, None, max_moves) is not None:
            kept.append(position)
        if (position + 1) % every or not kept:
            continue
        current = [admission.admitted[problem.streams[i].id][0] for i in kept]
        subset = Problem(problem.network, tuple(problem.streams[i] for i in kept), problem.slots, problem.slot_ns,
                         problem.base_period_ns, tuple(problem.multiples[i] for i in kept), problem.max_hops)
        candidates = [with_path(admission.finder.k_shortest(problem.streams[i].src, problem.streams[i].dst, k_paths),
                                now.path) for i, now in zip(kept, current, strict=True)]
        better = reoptimise(subset, candidates, current, solve)
        admission.replace([(new, problem.multiples[i]) for new, old, i in zip(better, current, kept, strict=True)
                           if new != old])
    schedule = Schedule("incremental", problem, [admission.admitted[problem.streams[i].id][0] for i in kept])
    schedule.solve_s = time.perf_counter() - began
    schedule.status = "heuristic"
    return schedule
