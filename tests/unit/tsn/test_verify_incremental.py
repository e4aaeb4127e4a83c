"""The verifier catches forged schedules; online admission never moves admitted streams."""

from __future__ import annotations

import pytest

from srfabric.errors import ModelError
from srfabric.tsn.model.network import Stream
from srfabric.tsn.model.schedule import Assignment, Schedule
from srfabric.tsn.model.slots import plan
from srfabric.tsn.schedulers.registry import schedule_slots as schedule
from srfabric.tsn.schedulers.slot.incremental import Admission
from srfabric.tsn.verify.slot import verify

from .cases import dumbbell, dumbbell_problem


def test_forged_collision_is_caught() -> None:
    problem = dumbbell_problem(2)
    forged = Schedule("forged", problem, [
        Assignment("F1", 0, ("A1", "S1", "S2", "B1")),
        Assignment("F2", 0, ("A2", "S1", "S2", "B2")),
    ])
    problems = verify(forged)
    assert len(problems) == 1 and "S1→S2 in slot 0, cycle 0 is already used by F1" in problems[0]


@pytest.mark.parametrize(
    ("assignment", "message"),
    [
        (Assignment("F1", 0, ("A1", "S2", "B1")), "no link A1→S2"),
        (Assignment("F1", 0, ("A1", "S1", "S2")), "does not run from A1 to B1"),
        (Assignment("F1", 7, ("A1", "S1", "S2", "B1")), "slot 7 is outside 0..1"),
        (Assignment("F1", 0, ("A1", "S1", "S2", "B1"), phase=1), "phase 1 is outside 0..0"),
        (Assignment("F1", 0, ("A1", "S1", "A2", "S1", "S2", "B1")), "visits a node twice"),
        (Assignment("ghost", 0, ("A1", "S1", "S2", "B1")), "not a stream"),
    ],
)
def test_each_kind_of_bad_assignment_is_named(assignment: Assignment, message: str) -> None:
    problems = verify(Schedule("forged", dumbbell_problem(2), [assignment]))
    assert any(message in problem for problem in problems), problems


def test_phase_collision_is_caught_only_when_cycles_meet() -> None:
    network = dumbbell(2)
    streams = [Stream("F1", "A1", "B1", period_ns=2_000_000), Stream("F2", "A2", "B2", period_ns=2_000_000)]
    problem = plan(network, streams, slots=1, base_period_ns=1_000_000)
    apart = [Assignment("F1", 0, ("A1", "S1", "S2", "B1"), 0), Assignment("F2", 0, ("A2", "S1", "S2", "B2"), 1)]
    assert verify(Schedule("ok", problem, apart)) == []
    together = [apart[0], Assignment("F2", 0, ("A2", "S1", "S2", "B2"), 0)]
    assert verify(Schedule("bad", problem, together))


def test_admission_keeps_admitted_streams_in_place() -> None:
    admission = Admission(dumbbell(5), slots=3)
    placed = [admission.admit(Stream(f"F{i}", f"A{i}", f"B{i}")) for i in range(1, 4)]
    assert all(placed) and len({a.slot for a in placed if a}) == 3
    assert admission.admit(Stream("F4", "A4", "B4")) is None
    before = {name: entry[0] for name, entry in admission.admitted.items()}
    admission.remove("F2")
    late = admission.admit(Stream("F4", "A4", "B4"))
    assert late is not None and late.slot == before["F2"].slot
    assert all(admission.admitted[name][0] == before[name] for name in ("F1", "F3"))


def test_admission_refuses_what_it_cannot_account_for() -> None:
    admission = Admission(dumbbell(2), slots=1)
    admission.admit(Stream("F1", "A1", "B1"))
    with pytest.raises(ModelError, match="already admitted"):
        admission.admit(Stream("F1", "A1", "B1"))
    with pytest.raises(ModelError, match="not admitted"):
        admission.remove("F9")
    with pytest.raises(ModelError, match="S1→S2 is already taken"):
        admission.place(Assignment("F2", 0, ("A2", "S1", "S2", "B2")))


def test_incremental_schedule_matches_one_by_one_admission() -> None:
    problem = dumbbell_problem(2)
    batch = schedule(problem, "incremental")
    assert [a.stream for a in batch.assignments] == ["F1", "F2"] and verify(batch) == []
