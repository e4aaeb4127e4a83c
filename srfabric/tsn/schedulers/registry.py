"""Every scheduling method, registered once. The command line (``srfabric tsn``), the live planner and the
benchmarks read :data:`METHODS`; nothing else names a method's module.

Each method has one shape: a problem and :class:`SchedulerOptions` in (and, optionally, a path finder that has
already listed paths), a schedule out. A slot method takes a :class:`~srfabric.tsn.model.slots.Problem` and
returns a :class:`~srfabric.tsn.model.schedule.Schedule`; a no-wait method takes a
:class:`~srfabric.tsn.model.timed.TimedProblem` and returns a :class:`~srfabric.tsn.model.timed.TimedSchedule`.
The solvers are imported when a method first runs, so reading the table loads neither NumPy nor a solver.

Examples
--------
>>> from srfabric.tsn.model.network import Network, Stream
>>> from srfabric.tsn.model.slots import Problem
>>> net = Network.build(
...     [("a1", "host"), ("a2", "host"), ("s1", "switch"), ("s2", "switch"), ("b1", "host"), ("b2", "host")],
...     [("a1", "s1"), ("a2", "s1"), ("s1", "s2"), ("s2", "b1"), ("s2", "b2")],
... )
>>> problem = Problem.slotted(net, [Stream("f1", "a1", "b1"), Stream("f2", "a2", "b2")], slots=1)
>>> [len(schedule(problem, name).assignments) for name in methods_of("slot")]
[1, 1, 1, 1, 1]
>>> METHODS["nowait"].model, METHODS["nowait"].exact
('timed', False)
>>> schedule(problem, "nowait")
Traceback (most recent call last):
...
srfabric.errors.ModelError: method: nowait schedules a TimedProblem (per-link transmission times), got a Problem
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from srfabric.errors import ModelError
from srfabric.tsn.schedulers.options import SchedulerOptions

if TYPE_CHECKING:
    from srfabric.tsn.model.paths import PathFinder
    from srfabric.tsn.model.schedule import Schedule
    from srfabric.tsn.model.slots import Problem
    from srfabric.tsn.model.timed import TimedProblem, TimedSchedule

Model = Literal["slot", "timed"]


class Solver(Protocol):
    """A method's one shape: problem and options in, schedule out."""

    def __call__(self, problem: Problem | TimedProblem, options: SchedulerOptions,
                 finder: PathFinder | None = None) -> Schedule | TimedSchedule: ...


@dataclass(frozen=True)
class Method:
    """One scheduling method: what it models, how it answers, and when to pick it."""

    name: str
    model: Model  # "slot": TSSDN's time slots; "timed": per-link transmission times (no wait)
    exact: bool  # optimal within its model when it finishes in time, else a heuristic
    source: str  # where the method comes from
    default_for: str  # where it is the default ("" where it is nowhere)
    pick_when: str
    solve: Solver


def _slot(name: str) -> Solver:
    def solve(problem: Problem | TimedProblem, options: SchedulerOptions,
              finder: PathFinder | None = None) -> Schedule:
        from srfabric.tsn.schedulers.slot import methods

        solvers = {"sur": methods.solve_sur_method, "spr": methods.solve_spr, "sfr": methods.solve_sfr,
                   "incremental": methods.solve_incremental, "batch": methods.solve_batch}
        return methods.with_deadlines(_as_slot(problem, name), solvers[name], options, finder)

    return solve


def _nowait(problem: Problem | TimedProblem, options: SchedulerOptions,
            finder: PathFinder | None = None) -> TimedSchedule:
    from srfabric.tsn.schedulers.nowait.heuristic import schedule_nowait

    options.check()
    return schedule_nowait(_as_timed(problem, "nowait"), options.k_paths, finder)


def _cpsat(problem: Problem | TimedProblem, options: SchedulerOptions,
           finder: PathFinder | None = None) -> TimedSchedule:
    from srfabric.tsn.schedulers.nowait.cpsat import schedule_cpsat

    options.check()
    return schedule_cpsat(_as_timed(problem, "cpsat"), options.k_paths, options.solve.time_limit_s,
                          seed=options.solve.seed, finder=finder)


def _as_slot(problem: Problem | TimedProblem, name: str) -> Problem:
    from srfabric.tsn.model.slots import Problem

    if not isinstance(problem, Problem):
        raise ModelError("method", f"{name} schedules a Problem (time slots), got a {type(problem).__name__}")
    return problem


def _as_timed(problem: Problem | TimedProblem, name: str) -> TimedProblem:
    from srfabric.tsn.model.timed import TimedProblem

    if not isinstance(problem, TimedProblem):
        raise ModelError("method", f"{name} schedules a TimedProblem (per-link transmission times), got a "
                                   f"{type(problem).__name__}")
    return problem


METHODS: dict[str, Method] = {method.name: method for method in (
    Method("sur", "slot", True, "TSSDN S/UR (section 3.2)", "",
           "routes and slots chosen together; the most streams, the longest solve (small instances)", _slot("sur")),
    Method("spr", "slot", True, "TSSDN S/PR (section 3.3)", "srfabric tsn schedule and gcl; live re-optimisation",
           "slots over the k shortest paths: near S/UR's count at a fraction of its time", _slot("spr")),
    Method("sfr", "slot", True, "TSSDN S/FR (section 3.4)", "",
           "slots over one random shortest path per stream: the fastest ILP, fewest streams", _slot("sfr")),
    Method("incremental", "slot", False, "TSSDN's online admission (section 4)", "the live planner (API streams)",
           "one request at a time, admitted streams never move (with max_moves > 0: admission with repair)",
           _slot("incremental")),
    Method("batch", "slot", False, "srfabric", "the live planner's batch requests",
           "several requests at once, in an order of its choosing, with repair", _slot("batch")),
    Method("nowait", "timed", False, "srfabric, after tsnkit's no-wait model", "bench tsnkit",
           "per-link transmission times, no queueing: large instances in milliseconds (C loop when built)",
           _nowait),
    Method("cpsat", "timed", True, "srfabric, OR-Tools CP-SAT in a worker process", "",
           "nowait first; an exact search when it leaves streams out", _cpsat),
)}


def methods_of(model: Model) -> tuple[str, ...]:
    """The names of the methods of one model, in the table's order."""
    return tuple(name for name, method in METHODS.items() if method.model == model)


def schedule(problem: Problem | TimedProblem, method: str, options: SchedulerOptions | None = None,
             finder: PathFinder | None = None) -> Schedule | TimedSchedule:
    """Run ``method`` on ``problem``; an unknown method or a problem of the other model is refused by name."""
    if method not in METHODS:
        raise ModelError("method", f"must be one of {', '.join(METHODS)}, got {method!r}")
    return METHODS[method].solve(problem, options or SchedulerOptions(), finder)


def schedule_slots(problem: Problem, method: str, options: SchedulerOptions | None = None,
                   finder: PathFinder | None = None) -> Schedule:
    """:func:`schedule` for a slot method, typed as such."""
    from srfabric.tsn.model.schedule import Schedule

    result = schedule(problem, method, options, finder)
    if not isinstance(result, Schedule):
        raise ModelError("method", f"{method} is not a slot method (one of {', '.join(methods_of('slot'))})")
    return result


def schedule_timed(problem: TimedProblem, method: str, options: SchedulerOptions | None = None,
                   finder: PathFinder | None = None) -> TimedSchedule:
    """:func:`schedule` for a no-wait method, typed as such."""
    from srfabric.tsn.model.timed import TimedSchedule

    result = schedule(problem, method, options, finder)
    if not isinstance(result, TimedSchedule):
        raise ModelError("method", f"{method} is not a no-wait method (one of {', '.join(methods_of('timed'))})")
    return result


def methods_table() -> str:
    """The table of methods as Markdown, as ``srfabric tsn methods`` prints it and the design docs show it."""
    rows = ["| method | model | answer | from | default for | pick it when |", "|---|---|---|---|---|---|"]
    for m in METHODS.values():
        answer = "exact (optimal when it ends in its time limit)" if m.exact else "heuristic"
        rows.append(f"| `{m.name}` | {m.model} | {answer} | {m.source} | {m.default_for or '-'} | {m.pick_when} |")
    return "\n".join(rows)
