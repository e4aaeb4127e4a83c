"""Every method on cases with a known optimum, and every result checked by the verifier."""

from __future__ import annotations

import pytest

from srfabric.errors import ModelError
from srfabric.tsn.formats.generators import erdos_renyi, random_streams
from srfabric.tsn.model.network import Stream
from srfabric.tsn.model.slots import Problem, plan
from srfabric.tsn.schedulers.options import SchedulerOptions
from srfabric.tsn.schedulers.registry import schedule_slots as schedule
from srfabric.tsn.schedulers.slot.mip import SolveOptions
from srfabric.tsn.verify.slot import verify

from .cases import detour_problem, dumbbell, dumbbell_problem

METHODS = ("sur", "spr", "sfr", "incremental")
WHOLE_ILP = SchedulerOptions(bound_first=False, warm_start=False)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize(("slots", "expected"), [(5, 5), (3, 3), (1, 1)])
def test_bottleneck_link_takes_one_flow_per_slot(method: str, slots: int, expected: int) -> None:
    result = schedule(dumbbell_problem(slots), method)
    assert len(result.assignments) == expected
    assert verify(result) == []
    assert len({a.slot for a in result.assignments}) == expected


@pytest.mark.parametrize("method", ("sur", "spr", "sfr"))
def test_whole_ilps_reach_the_same_optimum(method: str) -> None:
    result = schedule(dumbbell_problem(3), method, WHOLE_ILP)
    assert len(result.assignments) == 3 and result.status == "optimal" and verify(result) == []


def test_routing_freedom_schedules_the_flow_that_shortest_paths_cannot() -> None:
    problem = detour_problem()
    counts = {method: len(schedule(problem, method).assignments) for method in METHODS}
    assert counts == {"sur": 2, "spr": 1, "sfr": 1, "incremental": 2}
    sur = schedule(problem, "sur")
    assert sorted(len(a.path) for a in sur.assignments) == [4, 5]


@pytest.mark.parametrize("form", ("flow", "product"))
def test_both_sur_formulations_find_the_detour(form: str) -> None:
    options = SchedulerOptions(sur_form=form, bound_first=False, warm_start=False)
    result = schedule(detour_problem(), "sur", options)
    assert len(result.assignments) == 2 and verify(result) == []


@pytest.mark.parametrize("seed", range(4))
def test_sur_forms_and_decomposition_agree_on_random_cases(seed: int) -> None:
    network = erdos_renyi(4, 10, links=14, seed=seed)
    problem = Problem.slotted(network, random_streams(network, 14, seed=seed), slots=2)
    counts = set()
    for options in (SchedulerOptions(), WHOLE_ILP, SchedulerOptions(sur_form="product", bound_first=False)):
        result = schedule(problem, "sur", options)
        assert verify(result) == []
        counts.add(len(result.assignments))
    assert len(counts) == 1


@pytest.mark.parametrize("seed", range(3))
def test_restricted_methods_never_beat_sur(seed: int) -> None:
    network = erdos_renyi(5, 16, links=22, seed=seed)
    problem = Problem.slotted(network, random_streams(network, 30, seed=seed), slots=3)
    best = len(schedule(problem, "sur").assignments)
    for method in ("spr", "sfr", "incremental"):
        result = schedule(problem, method)
        assert verify(result) == []
        assert len(result.assignments) <= best


def test_sfr_draw_depends_on_the_seed_only() -> None:
    network = erdos_renyi(6, 24, links=38, seed=1)
    problem = Problem.slotted(network, random_streams(network, 40, seed=1), slots=4)
    one = schedule(problem, "sfr", SchedulerOptions(solve=SolveOptions(seed=7)))
    two = schedule(problem, "sfr", SchedulerOptions(solve=SolveOptions(seed=7)))
    assert [a.path for a in one.assignments] == [a.path for a in two.assignments]


def test_phases_let_slower_streams_share_a_slot() -> None:
    network = dumbbell(2)
    streams = [Stream("F1", "A1", "B1", period_ns=2_000_000), Stream("F2", "A2", "B2", period_ns=2_000_000)]
    with_phases = plan(network, streams, slots=1, base_period_ns=1_000_000)
    without = plan(network, streams, slots=1, base_period_ns=1_000_000, phases=False)
    assert with_phases.cycles == 2 and without.cycles == 1
    for method in METHODS:
        shared = schedule(with_phases, method)
        assert len(shared.assignments) == 2 and verify(shared) == []
        assert {a.phase for a in shared.assignments} == {0, 1}
        assert len(schedule(without, method).assignments) == 1


def test_a_timed_out_solve_returns_its_start_and_says_so() -> None:
    network = erdos_renyi(6, 24, links=38, seed=3)
    problem = Problem.slotted(network, random_streams(network, 100, seed=3), slots=5)
    options = SchedulerOptions(solve=SolveOptions(time_limit_s=0.05), bound_first=False, warm_start=True)
    result = schedule(problem, "spr", options)
    assert result.status == "time limit"
    assert len(result.assignments) > 50 and verify(result) == []
    assert result.to_json()["status"] == "time limit"


def test_unreachable_or_too_long_paths_are_left_unscheduled() -> None:
    problem = dumbbell_problem(2)
    short = Problem(problem.network, problem.streams, 2, 1, 2, problem.multiples, max_hops=2)
    for method in METHODS:
        result = schedule(short, method)
        assert result.assignments == [] and len(result.unscheduled) == 5


def test_bad_options_name_the_field() -> None:
    with pytest.raises(ModelError, match="method: must be one of"):
        schedule(dumbbell_problem(1), "fastest")
    with pytest.raises(ModelError, match="path_cap: must be >= 1"):
        schedule(dumbbell_problem(1), "spr", SchedulerOptions(path_cap=0))


def test_a_loop_beside_a_route_is_ignored_when_reading_paths() -> None:
    import numpy as np

    from srfabric.tsn.model.paths import PathFinder
    from srfabric.tsn.schedulers.slot.sur import SurModel

    problem = detour_problem()
    finder = PathFinder(problem.network, problem.max_hops)
    model = SurModel(problem, [finder.usable_edges(s.src, s.dst) for s in problem.streams])
    usable = model.usable[0]
    net = problem.network
    hot_edges = [("a1", "S1"), ("S1", "S3"), ("S3", "S1"), ("S1", "S2"), ("S2", "b1")]
    hot = np.array([usable.index(net.edge_index[e]) for e in hot_edges])
    assert model.trace(0, hot) == ("a1", "S1", "S2", "b1")
    assert model.trace(0, hot[:3]) == ()


def test_the_relaxation_bound_is_a_proven_upper_bound() -> None:
    from srfabric.tsn.schedulers.slot.spr_sfr import PathOptions, load_bound

    problem = dumbbell_problem(3)
    options = PathOptions.enumerate(problem, [[(f"A{i}", "S1", "S2", f"B{i}")] for i in range(1, 6)])
    bound, picked, status = load_bound(problem, options, SolveOptions())
    assert (bound, len(picked), status) == (3, 3, "optimal")
    # A user's optimality gap must not loosen the bound.
    assert load_bound(problem, options, SolveOptions(mip_gap=0.5))[0] == 3
