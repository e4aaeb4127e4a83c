"""Re-optimisation with S/PR: every admitted stream stays, on no more links than before."""

from __future__ import annotations

import pytest

from srfabric.errors import ModelError
from srfabric.tsn.formats.generators import erdos_renyi, random_streams
from srfabric.tsn.model.schedule import Assignment, Schedule
from srfabric.tsn.model.slots import Problem
from srfabric.tsn.schedulers.slot.incremental import Admission
from srfabric.tsn.schedulers.slot.reoptimise import admit_and_reoptimise, reoptimise, with_path
from srfabric.tsn.verify.slot import verify


def links(assignments: list[Assignment]) -> int:
    return sum(len(a.path) - 1 for a in assignments)


def test_every_stream_stays_on_no_more_links_and_the_schedule_verifies() -> None:
    for seed in range(4):
        network = erdos_renyi(6, 24, links=38, seed=seed)
        admission = Admission(network, slots=4)
        kept = [s for s in random_streams(network, 70, seed=seed) if admission.admit_with_repair(s) is not None]
        problem = Problem.slotted(network, kept, slots=4)
        current = [admission.admitted[s.id][0] for s in kept]
        candidates = [with_path(admission.finder.k_shortest(s.src, s.dst, 4), a.path)
                      for s, a in zip(kept, current, strict=True)]
        better = reoptimise(problem, candidates, current)
        assert [a.stream for a in better] == [s.id for s in kept]
        assert verify(Schedule("incremental", problem, better)) == []
        assert links(better) <= links(current)


def test_a_start_off_its_candidates_is_refused_by_name() -> None:
    network = erdos_renyi(6, 24, links=38, seed=0)
    stream = random_streams(network, 1, seed=0)[0]
    problem = Problem.slotted(network, [stream], slots=2)
    with pytest.raises(ModelError, match="current"):
        reoptimise(problem, [[]], [Assignment(stream.id, 0, (stream.src, stream.dst))])


def test_periodic_re_optimisation_admits_no_fewer_than_repair_alone_here() -> None:
    network = erdos_renyi(6, 24, links=38, seed=1)
    problem = Problem.slotted(network, random_streams(network, 80, seed=1), slots=3)
    admission = Admission(network, slots=3)
    alone = sum(admission.admit_with_repair(s) is not None for s in problem.streams)
    periodic = admit_and_reoptimise(problem, every=10)
    assert verify(periodic) == []
    assert len(periodic.assignments) >= alone
