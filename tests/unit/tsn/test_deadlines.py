"""Per-stream deadlines and jitter: a stream whose deadline no path meets is unscheduled with the reason,
the others are still scheduled on paths that meet theirs, and the verifier checks both."""

from __future__ import annotations

import pytest

from srfabric.tsn.model.network import Network, Stream
from srfabric.tsn.model.schedule import Assignment, Schedule
from srfabric.tsn.model.slots import SlotModel, plan
from srfabric.tsn.schedulers.registry import methods_of
from srfabric.tsn.schedulers.registry import schedule_slots as schedule
from srfabric.tsn.verify.slot import verify


def two_ways() -> Network:
    """h1 (and h3) - s1 - s2 - h2 (and h4) directly, or around s1 - s3 - s4 - s2."""
    nodes = [("h1", "host"), ("h2", "host"), ("h3", "host"), ("h4", "host"),
             *((f"s{i}", "switch") for i in range(1, 5))]
    return Network.build(nodes, [("h1", "s1"), ("s1", "s2"), ("s2", "h2"), ("s1", "s3"), ("s3", "s4"),
                                 ("s4", "s2"), ("h3", "s1"), ("s2", "h4")])


MODEL = SlotModel(diameter=5, store_and_forward=True)


@pytest.mark.parametrize("method", methods_of("slot"))
def test_a_deadline_no_path_meets_leaves_that_stream_out_with_the_reason(method: str) -> None:
    network = two_ways()
    # 3 links store-and-forward: 3 x (4000 + 1050) ns = 15150 ns for 458 bytes at 1 Gbit/s.
    streams = [Stream("tight", "h1", "h2", 1_000_000, 458, deadline_ns=15_000),
               Stream("fine", "h1", "h2", 1_000_000, 458, deadline_ns=15_150)]
    problem = plan(network, streams, slots=4, model=MODEL)
    result = schedule(problem, method)
    assert [a.stream for a in result.assignments] == ["fine"]
    assert result.unscheduled == ["tight"]
    assert result.reasons["tight"] == ("deadline_ns: 15000 ns is below the 15150 ns a frame needs on its "
                                       "shortest path (3 links)")
    assert result.to_json()["unscheduled_reasons"] == {"tight": result.reasons["tight"]}
    assert verify(result) == []


def test_streams_keep_to_paths_that_meet_their_deadline() -> None:
    network = two_ways()
    # One slot: h3's streams can only go around (5 links), which the deadline of one allows, not the other's.
    streams = [Stream("first", "h1", "h2", 1_000_000, 458),
               Stream("short", "h3", "h4", 1_000_000, 458, deadline_ns=4 * 5050),
               Stream("around", "h3", "h4", 1_000_000, 458, deadline_ns=5 * 5050)]
    problem = plan(network, streams, slots=1, model=MODEL)
    result = schedule(problem, "incremental")
    paths = {a.stream: len(a.path) - 1 for a in result.assignments}
    assert paths == {"first": 3, "around": 5}
    assert "short" not in paths and verify(result) == []


def test_the_verifier_finds_a_missed_deadline_and_jitter() -> None:
    network = two_ways()
    late = Stream("late", "h1", "h2", 1_000_000, 458, deadline_ns=15_149)
    problem = plan(network, [late], slots=4, model=MODEL)
    missed = Schedule("file", problem, [Assignment("late", 0, ("h1", "s1", "s2", "h2"))])
    assert verify(missed) == ["late: arrives 15150 ns after its slot starts, over its deadline of 15149 ns"]
    # Two base periods per period: the stream's frames leave every other cycle, always at the same offset.
    slow = Stream("slow", "h1", "h2", 2_000_000, 458, jitter_ns=0)
    problem = plan(network, [slow, Stream("fast", "h1", "h2", 1_000_000, 458)], slots=4, model=MODEL)
    steady = Schedule("file", problem, [Assignment("slow", 1, ("h1", "s1", "s2", "h2"), phase=1)])
    assert verify(steady) == []
