"""Method ``cpsat``: the no-wait heuristic first; when it leaves streams out, an exact search on OR-Tools
CP-SAT over the same candidate paths, started from the heuristic's schedule, within a time limit.

The search runs in a process of its own (:mod:`srfabric.tsn.schedulers.nowait.cpsat_worker`), so
this module and the slot methods' HiGHS stay apart; it is handed numbers only:
every candidate path's hops as (link, start after release, window), in units
of the problem's grid. The answer is the better of
the heuristic's and the search's; a stream left out is explained by how the
search ended (proved: no schedule places more; or the time limit). CP-SAT runs
its portfolio of 8 workers by default: with one, it rarely proves a bound on
these models within seconds; with eight it usually does, even on one core.

Examples
--------
>>> from srfabric.tsn.model.network import Network, Stream
>>> net = Network.build([("a", "host"), ("s", "switch"), ("b", "host")], [("a", "s"), ("s", "b")])
>>> streams = [Stream(f"f{i}", "a", "b", period_ns=20_000, size_bytes=500) for i in range(3)]
>>> problem = TimedProblem.build(net, streams, grid_ns=100, overhead_bytes=0)
>>> instance = exact_instance(problem, [[("a", "s", "b")]] * 3, time_limit_s=5)
>>> instance["unit"], instance["streams"][0]["paths"][0]
(100, {'latest': 98, 'hops': [[0, 0, 40], [1, 51, 40]]})
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from srfabric.errors import ModelError
from srfabric.tsn.model.paths import PathFinder
from srfabric.tsn.model.timed import TimedAssignment, TimedProblem, TimedSchedule
from srfabric.tsn.schedulers.nowait.heuristic import candidate_paths, schedule_nowait

Worker = Callable[[dict[str, Any], float], dict[str, Any]]
WORKER_MODULE = "srfabric.tsn.schedulers.nowait.cpsat_worker"
WORKER_SLACK_S = 30.0  # the worker's start and model building, beyond the search's own limit


def exact_instance(problem: TimedProblem, paths: Sequence[Sequence[tuple[str, ...]]], time_limit_s: float,
                   hint: Sequence[tuple[int, int] | None] = (), threads: int = 1, seed: int = 0) -> dict[str, Any]:
    """The worker's input: per stream (as ``paths``, one list per stream of the problem) its period and
    candidate paths in time units; ``hint`` gives (path index, offset in ns) where a stream is placed."""
    links: dict[tuple[str, str], int] = {}
    timings = [[problem.timing(stream.size_bytes, tuple(path)) for path in choices]
               for stream, choices in zip(problem.streams, paths, strict=True)]
    unit = problem.grid_ns  # every start, window and period is on the grid; a coarser unit would lose offsets
    streams = []
    for stream, choices, options in zip(problem.streams, paths, timings, strict=True):
        streams.append({"period": stream.period_ns // unit, "paths": [
            {"latest": (stream.period_ns - latency) // unit,
             "hops": [[links.setdefault(hop, len(links)), start // unit, window // unit]
                      for hop, start, window in zip(zip(path, path[1:], strict=False), starts, windows, strict=True)]}
            for path, (starts, latency, windows) in zip(choices, options, strict=True)]})
    return {"unit": unit, "hyperperiod": problem.hyperperiod_ns // unit, "time_limit_s": time_limit_s,
            "threads": threads, "seed": seed, "streams": streams,
            "hint": [None if h is None else [h[0], h[1] // unit] for h in hint]}


def run_worker(instance: dict[str, Any], timeout_s: float) -> dict[str, Any]:
    """The CP-SAT worker in a fresh process; its JSON answer."""
    try:
        done = subprocess.run([sys.executable, "-m", WORKER_MODULE], input=json.dumps(instance),
                              capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        raise ModelError("cpsat", f"the CP-SAT worker did not answer within {timeout_s:.0f} s") from None
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or ["no message"]
        raise ModelError("cpsat", f"the CP-SAT worker failed (exit {done.returncode}): {tail[0]}")
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def schedule_cpsat(problem: TimedProblem, k_paths: int = 4, time_limit_s: float = 10.0, threads: int = 8,
                   seed: int = 0, finder: PathFinder | None = None, worker: Worker = run_worker) -> TimedSchedule:
    """The heuristic's schedule, improved by CP-SAT when it leaves streams out (see the module)."""
    if time_limit_s <= 0:
        raise ModelError("time-limit", f"must be > 0, got {time_limit_s}")
    began = time.perf_counter()
    finder = finder or PathFinder(problem.network, problem.max_hops)
    first = schedule_nowait(problem, k_paths, finder)
    first.method = "cpsat"
    routable = [i for i, s in enumerate(problem.streams) if candidate_paths(problem, finder, s, k_paths)]
    if len(first.assignments) == len(problem.streams) or len(first.assignments) == len(routable):
        first.status = "optimal"  # every stream that has a path is placed: nothing to search for
        first.solve_s = time.perf_counter() - began
        return first
    sub = TimedProblem(problem.network, tuple(problem.streams[i] for i in routable), problem.grid_ns,
                       problem.overhead_bytes, problem.max_hops, problem.hyperperiod_ns)
    paths = [candidate_paths(problem, finder, stream, k_paths) for stream in sub.streams]
    placed = {a.stream: a for a in first.assignments}
    hint = [(paths[i].index(placed[s.id].path), placed[s.id].offset_ns) if s.id in placed else None
            for i, s in enumerate(sub.streams)]
    instance = exact_instance(sub, paths, time_limit_s, hint, threads, seed)
    answer = worker(instance, time_limit_s + WORKER_SLACK_S)
    found = [c for c in answer.get("choice", []) if c is not None]
    if answer["status"] not in ("optimal", "feasible") or len(found) < len(first.assignments):
        first.status = f"heuristic (CP-SAT: {answer['status']})"
        first.solve_s = time.perf_counter() - began
        return first
    status = "optimal" if len(found) == len(sub.streams) else answer["status"]  # all placed: nothing better exists
    result = TimedSchedule("cpsat", problem, status=status)
    unit = int(instance["unit"])
    for stream, choices, choice in zip(sub.streams, paths, answer["choice"], strict=True):
        if choice is None:
            result.reasons[stream.id] = (
                f"left out: CP-SAT proved that no schedule on the {k_paths} shortest paths places more streams"
                if status == "optimal"
                else f"CP-SAT placed it on none of its {len(choices)} candidate path(s) within {time_limit_s:g} s")
            continue
        path, offset = choices[choice[0]], choice[1] * unit
        starts, _, _ = problem.timing(stream.size_bytes, path)
        result.assignments.append(TimedAssignment(stream.id, path, offset, tuple(offset + d for d in starts)))
    for name, reason in first.reasons.items():  # streams without a candidate path keep the heuristic's reason
        if name not in {s.id for s in sub.streams}:
            result.reasons[name] = reason
    position = {s.id: index for index, s in enumerate(problem.streams)}
    result.assignments.sort(key=lambda a: position[a.stream])
    result.solve_s = time.perf_counter() - began
    return result
