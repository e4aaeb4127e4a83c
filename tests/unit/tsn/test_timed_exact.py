"""Method ``cpsat``: CP-SAT (in its own process) places at least the heuristic's streams, more where the
heuristic's order loses some, every schedule verifies, and a failed or fruitless search keeps the heuristic's."""

from __future__ import annotations

import random
import subprocess
import sys
from typing import Any

import pytest

from srfabric.errors import ModelError
from srfabric.tsn.model.network import Network, Stream
from srfabric.tsn.model.timed import TimedProblem
from srfabric.tsn.schedulers.nowait.cpsat import schedule_cpsat
from srfabric.tsn.schedulers.nowait.heuristic import schedule_nowait
from srfabric.tsn.verify.timed import verify_timed


def ring_problem(seed: int, count: int = 14) -> TimedProblem:
    """Four switches in a ring, a host on each; streams of two periods and three sizes, more than fit."""
    nodes = [(f"s{i}", "switch") for i in range(4)] + [(f"h{i}", "host") for i in range(4)]
    links = [(f"s{i}", f"s{(i + 1) % 4}") for i in range(4)] + [(f"h{i}", f"s{i}") for i in range(4)]
    rng = random.Random(seed)
    streams = []
    for i in range(count):
        a, b = rng.sample(range(4), 2)
        streams.append(Stream(f"f{i}", f"h{a}", f"h{b}", period_ns=rng.choice([50_000, 100_000]),
                              size_bytes=rng.choice([500, 1000, 1500])))
    return TimedProblem.build(Network.build(nodes, links), streams, grid_ns=100, overhead_bytes=0)


@pytest.mark.parametrize("seed", [2, 30])
def test_cpsat_places_more_than_the_heuristic_and_verifies(seed: int) -> None:
    problem = ring_problem(seed)
    first = schedule_nowait(problem, 2)
    result = schedule_cpsat(problem, 2, time_limit_s=20.0)
    assert verify_timed(result) == []
    assert len(result.assignments) > len(first.assignments)
    assert result.status == "optimal"
    assert result.scheduled_ids | set(result.reasons) == {s.id for s in problem.streams}
    assert all("proved" in reason for reason in result.reasons.values())


def test_no_search_when_the_heuristic_places_everything() -> None:
    problem = ring_problem(1, count=4)

    def never(instance: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        raise AssertionError("the worker was started")

    result = schedule_cpsat(problem, 2, worker=never)
    assert len(result.assignments) == 4 and result.status == "optimal" and result.method == "cpsat"


def test_the_hint_is_the_heuristics_schedule_and_a_returned_choice_becomes_the_schedule() -> None:
    problem = ring_problem(2)
    first = schedule_nowait(problem, 2)
    seen: dict[str, Any] = {}

    def echo(instance: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        seen.update(instance)
        return {"status": "feasible", "choice": instance["hint"]}

    result = schedule_cpsat(problem, 2, time_limit_s=3, worker=echo)
    assert seen["time_limit_s"] == 3 and seen["unit"] == 100
    assert sum(h is not None for h in seen["hint"]) == len(first.assignments)
    assert [(a.stream, a.path, a.offset_ns) for a in result.assignments] == \
        [(a.stream, a.path, a.offset_ns) for a in first.assignments]
    assert verify_timed(result) == [] and result.status == "feasible"
    assert all("within 3 s" in reason for reason in result.reasons.values())


@pytest.mark.parametrize("answer", [{"status": "unknown", "choice": []},
                                    {"status": "feasible", "choice": [None] * 14}])
def test_a_fruitless_search_keeps_the_heuristics_schedule(answer: dict[str, Any]) -> None:
    problem = ring_problem(2)
    result = schedule_cpsat(problem, 2, worker=lambda instance, timeout: answer)
    assert len(result.assignments) == len(schedule_nowait(problem, 2).assignments)
    assert result.status.startswith("heuristic (CP-SAT: ") and verify_timed(result) == []


def test_bad_limits_and_a_failed_worker_name_the_field() -> None:
    problem = ring_problem(2)
    with pytest.raises(ModelError, match="time-limit: must be > 0"):
        schedule_cpsat(problem, time_limit_s=0)

    def broken(instance: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        raise ModelError("cpsat", "the CP-SAT worker failed (exit 1): boom")

    with pytest.raises(ModelError, match="cpsat: the CP-SAT worker failed"):
        schedule_cpsat(problem, 2, worker=broken)


def test_the_worker_process_loads_no_highs() -> None:
    """OR-Tools and HiGHS crash in one process: the worker must not pull in the slot methods' solver."""
    code = "import sys, srfabric.tsn.schedulers.nowait.cpsat_worker; print('highspy' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
