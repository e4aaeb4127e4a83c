"""The slot methods (TSSDN's S/UR, S/PR, S/FR, and online admission one at a time or in a batch), each a function
of one shape for the registry (:mod:`srfabric.tsn.schedulers.registry`), and the deadline filter they share.

A stream whose deadline not even its shortest path meets is left out, with the reason; the others keep to paths
that meet theirs (candidate paths are cut to length, and a route a method chose too long is refused after the
fact, also with the reason).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import replace

from srfabric.tsn.model.paths import PathFinder
from srfabric.tsn.model.schedule import Schedule
from srfabric.tsn.model.slots import Problem
from srfabric.tsn.schedulers.options import SchedulerOptions
from srfabric.tsn.schedulers.slot.batch import schedule_batch
from srfabric.tsn.schedulers.slot.incremental import schedule_incremental
from srfabric.tsn.schedulers.slot.spr_sfr import solve_paths
from srfabric.tsn.schedulers.slot.sur import solve_sur

SlotSolver = Callable[[Problem, SchedulerOptions, PathFinder], Schedule]
Paths = list[list[tuple[str, ...]]]


def with_deadlines(problem: Problem, solver: SlotSolver, options: SchedulerOptions,
                   finder: PathFinder | None = None) -> Schedule:
    """Run ``solver`` on the streams whose deadlines their shortest paths can meet; say why the others are out."""
    options.check()
    finder = finder or PathFinder(problem.network, problem.max_hops)
    if not _has_deadlines(problem):
        return solver(problem, options, finder)
    reasons: dict[str, str] = {}
    kept: list[int] = []
    for index, stream in enumerate(problem.streams):
        shortest = finder.shortest(stream.src, stream.dst, 1)
        hops = len(shortest[0]) - 1 if shortest else None
        if hops is not None and hops > problem.hops_allowed(index):
            reasons[stream.id] = (f"deadline_ns: {stream.deadline_ns} ns is below the "
                                  f"{problem.latency_ns(stream, hops)} ns a frame needs on its shortest path "
                                  f"({hops} links)")
        else:
            kept.append(index)
    if len(kept) == len(problem.streams):
        result = solver(problem, options, finder)
    else:
        subset = replace(problem, streams=tuple(problem.streams[i] for i in kept),
                         multiples=tuple(problem.multiples[i] for i in kept))
        result = solver(subset, options, finder)
        result.problem = problem
    _refuse_too_long(problem, result, reasons)
    result.reasons.update(reasons)
    return result


def _has_deadlines(problem: Problem) -> bool:
    return problem.timing is not None and any(s.deadline_ns is not None for s in problem.streams)


def _refuse_too_long(problem: Problem, result: Schedule, reasons: dict[str, str]) -> None:
    position = {stream.id: index for index, stream in enumerate(problem.streams)}
    for assignment in list(result.assignments):
        index = position[assignment.stream]
        hops = len(assignment.path) - 1
        if hops > problem.hops_allowed(index):
            stream = problem.streams[index]
            result.assignments.remove(assignment)
            reasons[stream.id] = (f"deadline_ns: the route found, {hops} links, takes "
                                  f"{problem.latency_ns(stream, hops)} ns, over {stream.deadline_ns} ns")


def _within_deadline(problem: Problem, candidates: Paths) -> Paths:
    if not _has_deadlines(problem):
        return candidates
    allowed = [problem.hops_allowed(index) for index in range(len(candidates))]
    return [[path for path in paths if len(path) - 1 <= most] for most, paths in zip(allowed, candidates, strict=True)]


def _k_shortest(problem: Problem, options: SchedulerOptions, finder: PathFinder) -> Paths | None:
    if not _has_deadlines(problem):
        return None  # the admission finds its own k shortest paths
    return _within_deadline(problem, [finder.k_shortest(s.src, s.dst, options.k_paths) for s in problem.streams])


def solve_incremental(problem: Problem, options: SchedulerOptions, finder: PathFinder) -> Schedule:
    """Online admission, one stream at a time in request order (with repair when ``max_moves`` > 0)."""
    return schedule_incremental(problem, options.k_paths, finder, _k_shortest(problem, options, finder),
                                max_moves=options.max_moves)


def solve_batch(problem: Problem, options: SchedulerOptions, finder: PathFinder) -> Schedule:
    """All requests at once, in an order of the method's choosing, always with repair."""
    return schedule_batch(problem, options.k_paths, finder, _k_shortest(problem, options, finder),
                          max_moves=options.max_moves or 2)


def solve_sur_method(problem: Problem, options: SchedulerOptions, finder: PathFinder) -> Schedule:
    """S/UR: routes and slots chosen together by one ILP."""
    began = time.perf_counter()
    start = None
    if options.warm_start and not options.bound_first:
        start = schedule_incremental(problem, options.k_paths, finder)
    result = solve_sur(problem, options.solve, options.sur_form, start, options.slot_order, finder,
                       options.bound_first)
    result.build_s = time.perf_counter() - began - result.solve_s  # path finding included
    return result


def solve_spr(problem: Problem, options: SchedulerOptions, finder: PathFinder) -> Schedule:
    """S/PR: slots over up to ``path_cap`` shortest paths per stream."""
    began = time.perf_counter()
    candidates = [finder.shortest(s.src, s.dst, options.path_cap) for s in problem.streams]
    return _given_paths(problem, "spr", _within_deadline(problem, candidates), options, finder, began)


def solve_sfr(problem: Problem, options: SchedulerOptions, finder: PathFinder) -> Schedule:
    """S/FR: slots over one shortest path per stream, drawn with the solver's seed."""
    began = time.perf_counter()
    rng = random.Random(options.solve.seed)
    candidates = [finder.random_shortest(s.src, s.dst, rng) for s in problem.streams]
    return _given_paths(problem, "sfr", _within_deadline(problem, candidates), options, finder, began)


def _given_paths(problem: Problem, method: str, candidates: Paths, options: SchedulerOptions, finder: PathFinder,
                 began: float) -> Schedule:
    start = None
    if options.warm_start and not options.bound_first:
        start = schedule_incremental(problem, finder=finder, candidates=candidates)
    prepared_s = time.perf_counter() - began
    return solve_paths(problem, method, candidates, options.solve, start, options.slot_order, prepared_s,
                       options.bound_first)
