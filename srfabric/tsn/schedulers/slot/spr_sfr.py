"""S/PR and S/FR (TSSDN sections 3.3 and 3.4): slots for candidate paths.

Both are one formulation: a binary ``x[o, k]`` per option ``o`` (a candidate
path of a stream, at one phase) and slot ``k``. S/PR gives every stream all its
shortest paths (capped); S/FR gives it one, drawn at random with a seed. Rows:
each stream gets at most one option and slot, and no (directed edge, slot,
cycle of the hyperperiod) holds two options.

Solving goes in three steps, each cheap next to the one after it:

1. the *load bound*: the same choice of options without slots, where every
   (edge, cycle) may carry up to ``slots`` options. It relaxes the ILP, so its
   optimum bounds the number of schedulable streams from above;
2. colouring: the chosen options get slots (DSatur, then a small exact ILP);
3. only when no colouring reaches the bound is the full ILP solved, starting
   from the best colouring and with the bound as a row.

A colouring that reaches the bound is an optimum of the full ILP, proven.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from srfabric.tsn.model.paths import Path
from srfabric.tsn.model.schedule import Assignment, Schedule
from srfabric.tsn.model.slots import Problem
from srfabric.tsn.schedulers.slot.colouring import colour
from srfabric.tsn.schedulers.slot.mip import BinaryProgram, FloatArray, SolveOptions


def add_slot_order_rows(program: BinaryProgram, columns: np.ndarray, slots: int) -> None:
    """Slots are interchangeable, so require slot k to hold at least as many streams as slot k+1.

    ``columns`` is an (options, slots) array of column indices. Any schedule
    can be relabelled to satisfy this, so no optimum is lost, and the search
    no longer visits the slots! relabelled copies of each solution.
    """
    if slots < 2 or columns.size == 0:
        return
    first = program.add_rows(slots - 1, 0.0, np.inf)
    for k in range(slots - 1):
        program.add_entries(np.full(columns.shape[0], first + k), columns[:, k], 1.0)
        program.add_entries(np.full(columns.shape[0], first + k), columns[:, k + 1], -1.0)


def slot_relabelling(assignments: Sequence[Assignment], slots: int) -> np.ndarray:
    """New slot of each old slot so that loads are non-increasing, as the slot-order rows require of a start."""
    load = np.zeros(slots)
    for assignment in assignments:
        load[assignment.slot] += 1
    relabel = np.empty(slots, dtype=np.int64)
    relabel[np.argsort(-load, kind="stable")] = np.arange(slots)
    return relabel


@dataclass
class PathOptions:
    """Options (stream index, path, phase) and, per (edge, cycle) use, the option and its label."""

    owners: list[tuple[int, Path, int]]
    use_option: np.ndarray
    use_label: np.ndarray  # edge * slots * cycles + cycle

    @classmethod
    def enumerate(cls, problem: Problem, candidates: Sequence[Sequence[Path]]) -> PathOptions:
        network, slots, cycles = problem.network, problem.slots, problem.cycles
        owners: list[tuple[int, Path, int]] = []
        use_option: list[int] = []
        use_label: list[int] = []
        for index, paths in enumerate(candidates):
            for path in paths:
                edges = network.path_edges(path)
                for phase in range(problem.multiples[index]):
                    option = len(owners)
                    owners.append((index, path, phase))
                    for edge in edges:
                        for cycle in problem.cycles_used(index, phase):
                            use_option.append(option)
                            use_label.append(edge * slots * cycles + cycle)
        return cls(owners, np.asarray(use_option, dtype=np.int64), np.asarray(use_label, dtype=np.int64))

    @property
    def streams(self) -> np.ndarray:
        return np.array([owner[0] for owner in self.owners], dtype=np.int64)


def load_bound(problem: Problem, options: PathOptions, solve: SolveOptions) -> tuple[int, list[int], str]:
    """A proven upper bound from the slot-free relaxation, the options it picks, and the solver status."""
    program = BinaryProgram()
    cols = program.add_columns(np.ones(len(options.owners)))
    program.add_packing_rows(options.streams, cols)
    program.add_packing_rows(options.use_label, cols[options.use_option], capacity=float(problem.slots))
    result = program.solve(replace(solve, mip_gap=0.0))  # A user's gap must not loosen the bound.
    streams = len({owner[0] for owner in options.owners})
    bound = min(streams, int(np.floor(result.dual_bound + 1e-6))) if np.isfinite(result.dual_bound) else streams
    if result.values is None:
        return bound, [], result.status
    return bound, [int(o) for o in np.nonzero(result.values > 0.5)[0]], result.status


def solve_paths(
    problem: Problem,
    method: str,
    candidates: Sequence[Sequence[Path]],
    solve: SolveOptions,
    start: Schedule | None = None,
    slot_order: bool = True,
    prepared_s: float = 0.0,
    bound_first: bool = True,
) -> Schedule:
    """Schedule ``problem`` choosing among ``candidates[i]`` for stream i (see the module docstring)."""
    began = time.perf_counter()
    options = PathOptions.enumerate(problem, candidates)
    schedule = Schedule(method, problem)
    bound = None
    solve_s = 0.0
    if bound_first:
        step = time.perf_counter()
        bound, picked, _ = load_bound(problem, options, solve)
        coloured = colour(problem, [options.owners[o] for o in picked], solve)
        solve_s = time.perf_counter() - step
        if start is None or len(coloured) >= len(start.assignments):
            start = Schedule(method, problem, coloured)
        if len(coloured) >= bound:
            schedule.assignments = coloured
            schedule.build_s = prepared_s + time.perf_counter() - began - solve_s
            schedule.solve_s = solve_s
            schedule.sort_assignments()
            return schedule

    program = BinaryProgram()
    slots, cycles = problem.slots, problem.cycles
    columns = program.add_columns(np.ones(len(options.owners) * slots)).reshape(len(options.owners), slots)
    k = np.arange(slots, dtype=np.int64)
    program.add_packing_rows(np.repeat(options.streams, slots), columns.ravel())
    labels = options.use_label[:, None] + k[None, :] * cycles
    program.add_packing_rows(labels.ravel(), columns[options.use_option].ravel())
    if slot_order:
        add_slot_order_rows(program, columns, slots)
    if bound is not None:
        row = program.add_rows(1, -np.inf, float(bound))
        program.add_entries(np.full(columns.size, row), columns.ravel())
    warm = _warm_start(options.owners, columns, program.num_cols, start)
    schedule.build_s = prepared_s + time.perf_counter() - began - solve_s

    result = program.solve(solve, warm)
    schedule.solve_s = solve_s + result.solve_s
    schedule.status, schedule.gap = result.status, result.gap
    if result.values is None:
        return schedule
    for option, slot in zip(*np.nonzero(result.values.reshape(len(options.owners), slots) > 0.5), strict=True):
        index, path, phase = options.owners[option]
        schedule.assignments.append(Assignment(problem.streams[index].id, int(slot), path, phase))
    schedule.sort_assignments()
    return schedule


def _warm_start(
    owners: list[tuple[int, Path, int]], columns: np.ndarray, num_cols: int, start: Schedule | None
) -> FloatArray | None:
    """Column values of ``start`` (slots relabelled by load) if each of its choices is an option here."""
    if start is None:
        return None
    where = {(start.problem.streams[i].id, path, phase): o for o, (i, path, phase) in enumerate(owners)}
    relabel = slot_relabelling(start.assignments, columns.shape[1])
    values = np.zeros(num_cols)
    for assignment in start.assignments:
        option = where.get((assignment.stream, assignment.path, assignment.phase))
        if option is None:
            return None
        values[columns[option, relabel[assignment.slot]]] = 1.0
    return values
