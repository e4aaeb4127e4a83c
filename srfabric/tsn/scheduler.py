"""One entry point for every scheduling method.

Examples
--------
>>> from srfabric.tsn.model import Network, Stream
>>> net = Network.build(
...     [("a1", "host"), ("a2", "host"), ("s1", "switch"), ("s2", "switch"), ("b1", "host"), ("b2", "host")],
...     [("a1", "s1"), ("a2", "s1"), ("s1", "s2"), ("s2", "b1"), ("s2", "b2")],
... )
>>> problem = Problem.slotted(net, [Stream("f1", "a1", "b1"), Stream("f2", "a2", "b2")], slots=1)
>>> [len(schedule(problem, method).assignments) for method in ("sur", "spr", "sfr", "incremental", "batch")]
[1, 1, 1, 1, 1]
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field, replace

from srfabric.errors import ModelError
from srfabric.tsn.batch import schedule_batch
from srfabric.tsn.ilp_paths import solve_paths
from srfabric.tsn.ilp_sur import SUR_FORMS, solve_sur
from srfabric.tsn.incremental import schedule_incremental
from srfabric.tsn.mip import SolveOptions
from srfabric.tsn.paths import PathFinder
from srfabric.tsn.schedule import METHODS, Schedule
from srfabric.tsn.slots import Problem


@dataclass(frozen=True)
class SchedulerOptions:
    """Knobs of the methods; the defaults are the ones the benchmark uses."""

    solve: SolveOptions = field(default_factory=SolveOptions)
    path_cap: int = 32  # S/PR: at most this many shortest paths per stream
    k_paths: int = 4  # incremental: candidate paths per stream
    max_moves: int = 0  # incremental: admitted streams one admission may move (admission with repair)
    sur_form: str = "flow"
    warm_start: bool = True  # start the full ILPs from the best heuristic schedule
    slot_order: bool = True  # symmetry-breaking rows over interchangeable slots
    bound_first: bool = True  # relaxation, colouring, and the full ILP only when they leave a gap


def schedule(problem: Problem, method: str, options: SchedulerOptions | None = None) -> Schedule:
    """Compute a schedule for ``problem`` with ``method`` (one of ``sur``, ``spr``, ``sfr``, ``incremental``,
    ``batch``).

    A stream whose deadline not even its shortest path meets is left out, with the reason; the others keep to
    paths that meet theirs (candidate paths are cut to length, and a route the method chose too long is
    refused after the fact, also with the reason).
    """
    options = options or SchedulerOptions()
    if method not in METHODS:
        raise ModelError("method", f"must be one of {', '.join(METHODS)}, got {method!r}")
    if options.sur_form not in SUR_FORMS:
        raise ModelError("sur_form", f"must be one of {', '.join(SUR_FORMS)}, got {options.sur_form!r}")
    for name in ("path_cap", "k_paths"):
        if getattr(options, name) < 1:
            raise ModelError(name, f"must be >= 1, got {getattr(options, name)}")
    finder = PathFinder(problem.network, problem.max_hops)
    if problem.timing is None or all(s.deadline_ns is None for s in problem.streams):
        return _schedule(problem, method, options, finder)
    reasons: dict[str, str] = {}
    kept: list[int] = []
    for index, stream in enumerate(problem.streams):
        shortest = finder.shortest(stream.src, stream.dst, 1)
        hops = len(shortest[0]) - 1 if shortest else None
        allowed = problem.hops_allowed(index)
        if hops is not None and hops > allowed:
            reasons[stream.id] = (f"deadline_ns: {stream.deadline_ns} ns is below the "
                                  f"{problem.latency_ns(stream, hops)} ns a frame needs on its shortest path "
                                  f"({hops} links)")
        else:
            kept.append(index)
    if len(kept) == len(problem.streams):
        result = _schedule(problem, method, options, finder)
    else:
        subset = replace(problem, streams=tuple(problem.streams[i] for i in kept),
                         multiples=tuple(problem.multiples[i] for i in kept))
        result = _schedule(subset, method, options, finder)
        result.problem = problem
    position = {stream.id: index for index, stream in enumerate(problem.streams)}
    for assignment in list(result.assignments):
        index = position[assignment.stream]
        if len(assignment.path) - 1 > problem.hops_allowed(index):
            stream = problem.streams[index]
            result.assignments.remove(assignment)
            reasons[stream.id] = (f"deadline_ns: the route found, {len(assignment.path) - 1} links, takes "
                                  f"{problem.latency_ns(stream, len(assignment.path) - 1)} ns, over "
                                  f"{stream.deadline_ns} ns")
    result.reasons.update(reasons)
    return result


def _within_deadline(problem: Problem, candidates: list[list[tuple[str, ...]]]) -> list[list[tuple[str, ...]]]:
    allowed = [problem.hops_allowed(index) for index in range(len(candidates))]
    return [[path for path in paths if len(path) - 1 <= most] for most, paths in zip(allowed, candidates, strict=True)]


def _schedule(problem: Problem, method: str, options: SchedulerOptions, finder: PathFinder) -> Schedule:
    began = time.perf_counter()
    deadlines = problem.timing is not None and any(s.deadline_ns is not None for s in problem.streams)
    if method in ("incremental", "batch"):
        candidates = None
        if deadlines:
            candidates = _within_deadline(problem, [finder.k_shortest(s.src, s.dst, options.k_paths)
                                                    for s in problem.streams])
        if method == "batch":  # all requests at once, in an order of our choosing, always with repair
            return schedule_batch(problem, options.k_paths, finder, candidates, max_moves=options.max_moves or 2)
        return schedule_incremental(problem, options.k_paths, finder, candidates, max_moves=options.max_moves)
    if method == "sur":
        start = None
        if options.warm_start and not options.bound_first:
            start = schedule_incremental(problem, options.k_paths, finder)
        result = solve_sur(
            problem, options.solve, options.sur_form, start, options.slot_order, finder, options.bound_first
        )
        result.build_s = time.perf_counter() - began - result.solve_s  # path finding included
        return result
    if method == "spr":
        candidates = [finder.shortest(s.src, s.dst, options.path_cap) for s in problem.streams]
    else:
        rng = random.Random(options.solve.seed)
        candidates = [finder.random_shortest(s.src, s.dst, rng) for s in problem.streams]
    if deadlines:
        candidates = _within_deadline(problem, candidates)
    start = None
    if options.warm_start and not options.bound_first:
        start = schedule_incremental(problem, finder=finder, candidates=candidates)
    prepared_s = time.perf_counter() - began
    return solve_paths(
        problem, method, candidates, options.solve, start, options.slot_order, prepared_s, options.bound_first
    )
