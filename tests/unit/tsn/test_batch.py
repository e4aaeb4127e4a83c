"""Batch admission: requests admitted together, in an order of the scheduler's choosing, keeping every
stream admitted before."""

from __future__ import annotations

import pytest

from srfabric.tsn.formats.generators import erdos_renyi, random_regular, random_streams
from srfabric.tsn.model.network import Network, Stream
from srfabric.tsn.model.schedule import Schedule
from srfabric.tsn.model.slots import Problem
from srfabric.tsn.schedulers.registry import schedule_slots as schedule
from srfabric.tsn.schedulers.slot.batch import admit_batch, batch_order, swap_for_more
from srfabric.tsn.schedulers.slot.incremental import Admission, schedule_incremental
from srfabric.tsn.verify.slot import verify


def star() -> Network:
    """Two talkers and two listeners on one switch."""
    return Network.build([("a", "host"), ("b", "host"), ("s", "switch"), ("c", "host"), ("d", "host")],
                         [("a", "s"), ("b", "s"), ("s", "c"), ("s", "d")])


def test_the_stream_on_the_contended_links_goes_last() -> None:
    admission = Admission(star(), slots=1)
    requests = [(Stream("ac", "a", "c"), 1, None), (Stream("ad", "a", "d"), 1, None),
                (Stream("bc", "b", "c"), 1, None)]
    assert batch_order(admission, requests) == [1, 2, 0]
    result = admit_batch(admission, requests)
    assert sorted(result.placed) == ["ad", "bc"] and result.refused == ["ac"] and result.moved == []
    given_order = Admission(star(), slots=1)
    assert [given_order.admit(stream) is not None for stream, _, _ in requests] == [True, False, False]


def test_a_stream_admitted_before_the_batch_is_never_refused() -> None:
    admission = Admission(star(), slots=1)
    assert admission.admit(Stream("ac", "a", "c")) is not None
    result = admit_batch(admission, [(Stream("ad", "a", "d"), 1, None), (Stream("bc", "b", "c"), 1, None)])
    assert "ac" in admission.admitted and result.placed == {} and result.refused == ["ad", "bc"]


def test_a_swap_lets_two_refused_streams_in_for_one() -> None:
    admission = Admission(star(), slots=1)
    requests = {s.id: (s, 1, None) for s in (Stream("ac", "a", "c"), Stream("bc", "b", "c"), Stream("ad", "a", "d"))}
    assert admission.admit(requests["ac"][0]) is not None  # as if the order had put it first
    admitted, refused = ["ac"], ["bc", "ad"]
    swap_for_more(admission, requests, admitted, refused)
    assert sorted(admitted) == ["ad", "bc"] and refused == ["ac"]
    assert sorted(admission.admitted) == ["ad", "bc"]


@pytest.mark.parametrize("seed", range(6))
def test_batches_verify_admit_at_least_one_at_a_time_and_keep_earlier_streams(seed: int) -> None:
    network = (erdos_renyi if seed % 2 else random_regular)(6, 24, 38 if seed % 2 else 3, seed=seed)
    streams = random_streams(network, 90, seed=seed)
    problem = Problem.slotted(network, streams, slots=3 + seed % 3)
    one_by_one = schedule_incremental(problem, max_moves=2)
    batch = schedule(problem, "batch")
    assert verify(batch) == []
    assert len(batch.assignments) >= len(one_by_one.assignments)
    # Half admitted first, the rest as a batch: every earlier stream is still admitted.
    admission = Admission(network, problem.slots, max_hops=problem.max_hops)
    earlier = {s.id for s in streams[:45] if admission.admit_with_repair(s) is not None}
    result = admit_batch(admission, [(s, 1, None) for s in streams[45:]])
    assert earlier <= set(admission.admitted)
    assert set(result.placed) | set(result.refused) == {s.id for s in streams[45:]}
    assert set(admission.admitted) == earlier | set(result.placed)
    assert {m.stream for m in result.moved} <= earlier
    whole = Schedule("batch", problem, [admission.admitted[name][0] for name in sorted(admission.admitted)])
    assert verify(whole) == []
