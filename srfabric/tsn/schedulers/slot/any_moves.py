"""Admission that may move any number of admitted streams: a reference for admission with repair.

An online admission sees the streams one at a time and keeps what it admitted.
With no limit on the streams it may move, it admits a request exactly when the
admitted streams and the request have a schedule together. This module
decides that: the greedy and the bounded repair first, and where they refuse,
an exact check (the S/PR ILP over every loop-free path of at most ``max_hops``
links, so no routing is left out). Every admission that admits each request
that fits, and keeps what it admitted, admits this same set; S/UR, which sees
all streams at once and chooses which to leave out, may schedule more. It
shows how much moving more than two streams could add. Costly (one ILP per
refusal): a benchmark reference, not an admission path.

Examples
--------
>>> from srfabric.tsn.model.network import Network, Stream
>>> net = Network.build([("a", "host"), ("s", "switch"), ("b", "host")], [("a", "s"), ("s", "b")])
>>> problem = Problem.slotted(net, [Stream(f"f{i}", "a", "b") for i in range(3)], slots=2)
>>> len(admit_whatever_fits(problem).assignments)
2
"""

from __future__ import annotations

import time

from srfabric.tsn.model.network import Stream
from srfabric.tsn.model.schedule import Schedule
from srfabric.tsn.model.slots import Problem
from srfabric.tsn.schedulers.slot.incremental import Admission
from srfabric.tsn.schedulers.slot.mip import SolveOptions
from srfabric.tsn.schedulers.slot.spr_sfr import solve_paths

ALL_PATHS = 100_000  # k large enough to list every loop-free path within max_hops of the scenarios


def admit_whatever_fits(problem: Problem, solve: SolveOptions | None = None, max_moves: int = 2) -> Schedule:
    """Admit the problem's streams in order, each one whenever it fits with the admitted ones, moving
    any of them (see the module docstring); ``status`` says whether every exact check was proven."""
    solve = solve or SolveOptions()
    began = time.perf_counter()
    admission = Admission(problem.network, problem.slots, problem.cycles, problem.max_hops)
    admitted: list[Stream] = []
    multiples: list[int] = []
    proven = True
    for stream, multiple in zip(problem.streams, problem.multiples, strict=True):
        if admission.admit_with_repair(stream, multiple, None, max_moves) is not None:
            admitted.append(stream)
            multiples.append(multiple)
            continue
        single = admission.finder.attachment(stream.src) and admission.finder.attachment(stream.dst)
        if single and _end_link_full(admitted, multiples, stream, multiple, problem.slots * problem.cycles,
                                     problem.cycles):
            continue  # its talker's or listener's only link has no position left, wherever the others go
        trial = Problem(problem.network, (*admitted, stream), problem.slots, problem.slot_ns,
                        problem.base_period_ns, (*multiples, multiple), problem.max_hops)
        candidates = [admission.finder.k_shortest(s.src, s.dst, ALL_PATHS) for s in trial.streams]
        current = Schedule("incremental", trial, [admission.admitted[s.id][0] for s in admitted])
        result = solve_paths(trial, "spr", candidates, solve, start=current)
        proven = proven and result.status == "optimal"
        if len(result.assignments) <= len(admitted):
            continue
        admitted.append(stream)
        multiples.append(multiple)
        requests = dict(admission.requests)
        admission = Admission(problem.network, problem.slots, problem.cycles, problem.max_hops,
                              finder=admission.finder)
        for assignment in result.assignments:  # everything may have moved: start again from the ILP's schedule
            admission.requests[assignment.stream] = requests.get(assignment.stream, (stream, multiple, None))
            admission.place(assignment, admission.requests[assignment.stream][1])
    schedule = Schedule("any-moves", problem, [admission.admitted[s.id][0] for s in admitted])
    schedule.sort_assignments()
    schedule.solve_s = time.perf_counter() - began
    schedule.status = "optimal" if proven else "not proven"
    return schedule


def _end_link_full(admitted: list[Stream], multiples: list[int], stream: Stream, multiple: int, positions: int,
                   cycles: int) -> bool:
    """Whether the streams from the request's talker (or to its listener) already use every (slot, cycle)
    position of that host's one link, whatever paths they take: the request cannot fit (a cheap check)."""
    need = cycles // multiple
    sent = sum(cycles // m for s, m in zip(admitted, multiples, strict=True) if s.src == stream.src)
    received = sum(cycles // m for s, m in zip(admitted, multiples, strict=True) if s.dst == stream.dst)
    return sent + need > positions or received + need > positions
