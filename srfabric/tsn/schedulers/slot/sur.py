"""S/UR (TSSDN section 3.2): routes and slots chosen together.

Two formulations with the same optimum:

``product`` is the paper's: a route ``f[i, e]`` per stream, a slot ``t[i, k]``,
and ``m[i, e, k] = f * t`` linearised by three rows per product. Every stream
is routed even when it gets no slot, as in the paper.

``flow`` (the default) routes each stream separately in every slot: ``y[i, e, k]``
is a path from the source in slot k with flow conservation per slot, so the
stream's slot is the one in which its source sends. There are no product rows
and the LP relaxation is much tighter, which is what makes it fast.

In both, hosts do not forward, paths have at most ``max_hops`` links, and a
second objective term (under 1 in total) prefers shorter routes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import numpy as np

from srfabric.tsn.model.paths import PathFinder
from srfabric.tsn.model.schedule import Assignment, Schedule
from srfabric.tsn.model.slots import Problem
from srfabric.tsn.schedulers.options import SUR_FORMS  # noqa: F401  (named here, beside the forms)
from srfabric.tsn.schedulers.slot.colouring import Choice, colour
from srfabric.tsn.schedulers.slot.mip import BinaryProgram, FloatArray, MipResult, SolveOptions
from srfabric.tsn.schedulers.slot.spr_sfr import add_slot_order_rows, slot_relabelling


@dataclass
class _Block:
    """Columns of one stream at one phase: ``edges[e, k]`` carries it over usable edge e in slot k."""

    stream: int
    phase: int
    edges: np.ndarray
    sends: np.ndarray  # (slots,) columns that are 1 in the slot where the source sends
    route: np.ndarray | None = None  # product form: f[e], shared by every slot


@dataclass
class SurModel:
    problem: Problem
    usable: list[list[int]]
    program: BinaryProgram = field(default_factory=BinaryProgram)
    blocks: list[_Block] = field(default_factory=list)

    def conservation(self, stream: int, cols: np.ndarray, first_out: float | None = None) -> None:
        """In equals out at every switch for each column slice ``cols[:, j]`` (one row per usable edge).

        With ``first_out`` the source's outflow is also fixed to that value (the product form).
        """
        problem, network = self.problem, self.problem.network
        info = problem.streams[stream]
        edges = self.usable[stream]
        switches = sorted({node for e in edges for node in network.edges[e]} - {info.src, info.dst})
        position = {node: pos for pos, node in enumerate(switches)}
        width = cols.shape[1]
        first = self.program.add_rows(len(switches) * width, 0.0, 0.0)
        rows, which, signs = [], [], []
        for local, edge in enumerate(edges):
            u, v = network.edges[edge]
            for node, sign in ((v, 1.0), (u, -1.0)):
                if node in position:
                    rows.append(position[node])
                    which.append(local)
                    signs.append(sign)
        j = np.arange(width)
        grid = first + np.asarray(rows, dtype=np.int64)[:, None] * width + j[None, :]
        self.program.add_entries(grid.ravel(), cols[np.asarray(which, dtype=np.int64)].ravel(), np.repeat(signs, width))
        if first_out is not None:
            row = self.program.add_rows(1, first_out, first_out)
            out = self.source_out(stream)
            self.program.add_entries(np.full(len(out), row), cols[out, 0])

    def source_out(self, stream: int) -> list[int]:
        src = self.problem.streams[stream].src
        return [local for local, edge in enumerate(self.usable[stream]) if self.problem.network.edges[edge][0] == src]

    def conflicts(self) -> None:
        """At most one stream on each (edge, slot, cycle of the hyperperiod)."""
        problem = self.problem
        slots, cycles = problem.slots, problem.cycles
        k = np.arange(slots, dtype=np.int64)
        labels, columns = [], []
        for block in self.blocks:
            edges = np.asarray(self.usable[block.stream], dtype=np.int64)
            for cycle in problem.cycles_used(block.stream, block.phase):
                labels.append((edges[:, None] * slots * cycles + k[None, :] * cycles + cycle).ravel())
                columns.append(block.edges.ravel())
        if labels:
            self.program.add_packing_rows(np.concatenate(labels), np.concatenate(columns))

    def trace(self, stream: int, hot: np.ndarray) -> tuple[str, ...]:
        """A shortest src→dst path over the usable edges with indices ``hot``; () if they do not join src to dst.

        A solver may leave a loop beside the path (flow conservation allows it);
        the walk ignores such edges.
        """
        network, info = self.problem.network, self.problem.streams[stream]
        successors: dict[str, list[str]] = {}
        for local in hot:
            u, v = network.edges[self.usable[stream][local]]
            successors.setdefault(u, []).append(v)
        before: dict[str, str] = {info.src: info.src}
        frontier = [info.src]
        while frontier and info.dst not in before:
            following = []
            for u in frontier:
                for v in successors.get(u, []):
                    if v not in before:
                        before[v] = u
                        following.append(v)
            frontier = following
        if info.dst not in before:
            return ()
        path = [info.dst]
        while path[-1] != info.src:
            path.append(before[path[-1]])
        return tuple(reversed(path))

    def read(self, result: MipResult) -> list[Assignment]:
        if result.values is None:
            return []
        values = result.values
        found = []
        for block in self.blocks:
            for slot in np.nonzero(values[block.sends] > 0.5)[0]:
                hot_cols = block.route if block.route is not None else block.edges[:, slot]
                path = self.trace(block.stream, np.nonzero(values[hot_cols] > 0.5)[0])
                if path:
                    found.append(Assignment(self.problem.streams[block.stream].id, int(slot), path, block.phase))
        return found


def load_bound(problem: Problem, usable: list[list[int]], solve: SolveOptions) -> tuple[int, list[Choice]]:
    """Routes without slots, each (edge, cycle) carrying up to ``slots`` streams: a relaxation of S/UR.

    Returns its optimum (an upper bound on the streams S/UR can schedule) and the routes it chose.
    """
    model = SurModel(problem, usable)
    program = model.program
    epsilon = 1.0 / (len(problem.streams) * problem.max_hops + 1)
    once_first = program.add_rows(len(problem.streams), -np.inf, 1.0)
    hops_first = program.add_rows(len(problem.streams), -np.inf, float(problem.max_hops))
    routes: list[tuple[int, int, np.ndarray]] = []
    labels, columns = [], []
    for stream in range(len(problem.streams)):
        out = model.source_out(stream)
        if not out:
            continue
        edges = np.asarray(usable[stream], dtype=np.int64)
        for phase in range(problem.multiples[stream]):
            cost = np.full(len(edges), -epsilon)
            cost[out] += 1.0
            cols = program.add_columns(cost)
            model.conservation(stream, cols[:, None])
            program.add_entries(np.full(len(out), once_first + stream), cols[out])
            program.add_entries(np.full(len(cols), hops_first + stream), cols)
            routes.append((stream, phase, cols))
            for cycle in problem.cycles_used(stream, phase):
                labels.append(edges * problem.cycles + cycle)
                columns.append(cols)
    if labels:
        program.add_packing_rows(np.concatenate(labels), np.concatenate(columns), capacity=float(problem.slots))
    result = program.solve(replace(solve, mip_gap=0.0))  # A user's gap must not loosen the bound.
    routable = sum(1 for stream in range(len(problem.streams)) if model.source_out(stream))
    bound = routable
    if np.isfinite(result.dual_bound):
        # The objective is the count minus at most epsilon * streams * max_hops (< 1) for route lengths.
        slack = epsilon * len(problem.streams) * problem.max_hops
        bound = min(routable, int(np.floor(result.dual_bound + slack + 1e-6)))
    if result.values is None:
        return bound, []
    chosen: list[Choice] = []
    for stream, phase, cols in routes:
        path = model.trace(stream, np.nonzero(result.values[cols] > 0.5)[0])
        if path:
            chosen.append((stream, path, phase))
    return bound, chosen


def solve_sur(
    problem: Problem,
    options: SolveOptions,
    form: str = "flow",
    start: Schedule | None = None,
    slot_order: bool = True,
    finder: PathFinder | None = None,
    bound_first: bool = True,
) -> Schedule:
    """Solve S/UR in the chosen ``form`` (see the module docstring).

    With ``bound_first`` the slot-free relaxation is solved first and its routes
    coloured; when the colouring schedules as many streams as the relaxation's
    optimum, that is an optimum of S/UR and the full ILP is not needed.
    """
    began = time.perf_counter()
    finder = finder or PathFinder(problem.network, problem.max_hops)
    usable = [finder.usable_edges(s.src, s.dst) for s in problem.streams]
    bound = None
    pre_solve_s = 0.0
    if bound_first:
        step = time.perf_counter()
        bound, chosen = load_bound(problem, usable, options)
        coloured = colour(problem, chosen, options)
        pre_solve_s = time.perf_counter() - step
        if len(coloured) >= bound:
            schedule = Schedule("sur", problem, coloured, solve_s=pre_solve_s)
            schedule.build_s = time.perf_counter() - began - pre_solve_s
            schedule.sort_assignments()
            return schedule
        if start is None or len(coloured) > len(start.assignments):
            start = Schedule("sur", problem, coloured)
    model = SurModel(problem, usable)
    if form == "flow":
        _build_flow(model)
    else:
        _build_product(model)
    model.conflicts()
    if slot_order:
        add_slot_order_rows(model.program, np.stack([b.sends for b in model.blocks], axis=0) if model.blocks
                            else np.zeros((0, problem.slots), dtype=np.int64), problem.slots)
    if bound is not None:
        row = model.program.add_rows(1, -np.inf, float(bound))
        for block in model.blocks:
            model.program.add_entries(np.full(len(block.sends), row), block.sends)
    warm = _warm(model, start, finder) if start is not None else None
    build_s = time.perf_counter() - began - pre_solve_s
    result = model.program.solve(options, warm)
    schedule = Schedule(
        "sur", problem, build_s=build_s, solve_s=pre_solve_s + result.solve_s, status=result.status, gap=result.gap
    )
    schedule.assignments = model.read(result)
    schedule.sort_assignments()
    return schedule


def _build_flow(model: SurModel) -> None:
    problem, program = model.problem, model.program
    slots = problem.slots
    epsilon = 1.0 / (len(problem.streams) * problem.max_hops + 1)
    hops_first = program.add_rows(len(problem.streams), -np.inf, float(problem.max_hops))
    once_first = program.add_rows(len(problem.streams), -np.inf, 1.0)
    for stream in range(len(problem.streams)):
        out = model.source_out(stream)
        if not out:
            continue
        for phase in range(problem.multiples[stream]):
            cost = np.full((len(model.usable[stream]), slots), -epsilon)
            cost[out, :] += 1.0
            cols = program.add_columns(cost.ravel()).reshape(cost.shape)
            model.conservation(stream, cols)
            program.add_entries(np.full(cols.size, hops_first + stream), cols.ravel())
            program.add_entries(np.full(len(out) * slots, once_first + stream), cols[out].ravel())
            # The source has one edge per usable uplink; with a single-homed host it is one column per slot.
            sends = cols[out[0]] if len(out) == 1 else _send_indicator(program, cols[out])
            model.blocks.append(_Block(stream, phase, cols, sends))


def _send_indicator(program: BinaryProgram, out_cols: np.ndarray) -> np.ndarray:
    """Columns s[k] = sum of the source's outgoing columns in slot k (for multi-homed sources)."""
    slots = out_cols.shape[1]
    sends = program.add_columns(np.zeros(slots))
    first = program.add_rows(slots, 0.0, 0.0)
    for k in range(slots):
        program.add_entries(np.full(out_cols.shape[0], first + k), out_cols[:, k])
        program.add_entries(np.array([first + k]), np.array([sends[k]]), -1.0)
    return sends


def _build_product(model: SurModel) -> None:
    problem, program = model.problem, model.program
    slots = problem.slots
    epsilon = 1.0 / (len(problem.streams) * len(problem.network.edges) + 1)
    once_first = program.add_rows(len(problem.streams), -np.inf, 1.0)
    for stream in range(len(problem.streams)):
        usable = model.usable[stream]
        if not model.source_out(stream):
            continue
        route = program.add_columns(np.full(len(usable), -epsilon))
        model.conservation(stream, route[:, None], first_out=1.0)
        hops = program.add_rows(1, -np.inf, float(problem.max_hops))
        program.add_entries(np.full(len(route), hops), route)
        for phase in range(problem.multiples[stream]):
            sends = program.add_columns(np.ones(slots))
            program.add_entries(np.full(slots, once_first + stream), sends)
            both = program.add_columns(np.zeros(len(usable) * slots)).reshape(len(usable), slots)
            f = np.repeat(route[:, None], slots, axis=1)
            t = np.repeat(sends[None, :], len(usable), axis=0)
            count = both.size
            # m <= f, m <= t, m >= f + t - 1
            for other in (f, t):
                first = program.add_rows(count, -np.inf, 0.0)
                rows = np.arange(first, first + count)
                program.add_entries(rows, both.ravel(), 1.0)
                program.add_entries(rows, other.ravel(), -1.0)
            first = program.add_rows(count, -1.0, np.inf)
            rows = np.arange(first, first + count)
            program.add_entries(rows, both.ravel(), 1.0)
            program.add_entries(rows, f.ravel(), -1.0)
            program.add_entries(rows, t.ravel(), -1.0)
            model.blocks.append(_Block(stream, phase, both, sends, route))


def _warm(model: SurModel, start: Schedule, finder: PathFinder) -> FloatArray | None:
    """Column values of ``start`` (slots relabelled by load), or None if it does not fit this model."""
    problem, network = model.problem, model.problem.network
    chosen = {a.stream: a for a in start.assignments}
    relabel = slot_relabelling(start.assignments, problem.slots)
    values = np.zeros(model.program.num_cols)
    for block in model.blocks:
        info = problem.streams[block.stream]
        local = {edge: i for i, edge in enumerate(model.usable[block.stream])}
        assignment = chosen.get(info.id)
        if block.route is not None:
            path = assignment.path if assignment else (finder.shortest(info.src, info.dst, 1) or [()])[0]
            route_rows = [local[e] for e in network.path_edges(path) if e in local]
            if len(route_rows) != len(path) - 1 or not route_rows:
                return None
            values[block.route[route_rows]] = 1.0
        if assignment is None or assignment.phase != block.phase:
            continue
        rows = [local[e] for e in network.path_edges(assignment.path) if e in local]
        if len(rows) != len(assignment.path) - 1:
            return None
        slot = relabel[assignment.slot]
        values[block.edges[rows, slot]] = 1.0
        values[block.sends[slot]] = 1.0
    return values
