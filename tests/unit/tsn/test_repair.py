"""Admission with bounded repair: a request that finds no room may move up to two admitted streams."""

from __future__ import annotations

from srfabric.tsn.formats.generators import erdos_renyi, random_streams
from srfabric.tsn.model.network import Network, Stream
from srfabric.tsn.model.paths import PathFinder
from srfabric.tsn.model.schedule import Schedule
from srfabric.tsn.model.slots import Problem
from srfabric.tsn.schedulers.slot.incremental import Admission, schedule_incremental
from srfabric.tsn.verify.slot import verify


def diamond() -> Network:
    return Network.build(
        [("h1", "host"), ("h2", "host"), ("h3", "host"), ("h4", "host"),
         ("s1", "switch"), ("s2", "switch"), ("s3", "switch"), ("s4", "switch")],
        [("h1", "s1"), ("h2", "s1"), ("s1", "s2"), ("s1", "s3"), ("s2", "s4"), ("s3", "s4"), ("h3", "s4"),
         ("h4", "s2")],
    )


def test_a_blocking_stream_is_moved_to_its_other_path() -> None:
    admission = Admission(diamond(), slots=1, max_hops=4)
    first = admission.admit(Stream("f1", "h1", "h3"))
    assert first is not None and first.path == ("h1", "s1", "s2", "s4", "h3")
    assert admission.admit(Stream("f2", "h2", "h4")) is None
    placed, moved = admission.admit_with_repair(Stream("f2", "h2", "h4"))  # type: ignore[misc]
    assert placed.path == ("h2", "s1", "s2", "h4")
    assert [(m.stream, m.path) for m in moved] == [("f1", ("h1", "s1", "s3", "s4", "h3"))]
    assert set(admission.admitted) == {"f1", "f2"}


def test_a_failed_repair_changes_nothing() -> None:
    admission = Admission(diamond(), slots=1, max_hops=4)
    admission.admit(Stream("f1", "h1", "h3"))
    before = (dict(admission.admitted), list(admission.busy))
    assert admission.admit_with_repair(Stream("f2", "h2", "h4"), max_moves=0) is None
    assert (dict(admission.admitted), list(admission.busy)) == before


def test_repair_never_schedules_fewer_and_every_schedule_verifies() -> None:
    for seed in range(6):
        network = erdos_renyi(6, 24, links=38, seed=seed)
        streams = random_streams(network, 70, seed=seed)
        problem = Problem.slotted(network, streams, slots=4)
        plain = schedule_incremental(problem)
        repaired = schedule_incremental(problem, max_moves=2)
        assert verify(repaired) == []
        assert len(repaired.assignments) >= len(plain.assignments)


def test_a_moved_stream_may_displace_one_more_within_two_moves() -> None:
    # f2 fits only on s1→s2, held by f1; f1's other path needs s3→s4, held by f3; f3 can go round via s5.
    network = Network.build(
        [*((h, "host") for h in ("h1", "h2", "h3", "h4", "h5", "h6")), *((s, "switch") for s in ("s1", "s2", "s3",
                                                                                                  "s4", "s5"))],
        [("h1", "s1"), ("h2", "s1"), ("s1", "s2"), ("s1", "s3"), ("s2", "s4"), ("s3", "s4"), ("s3", "s5"),
         ("s5", "s4"), ("h3", "s4"), ("h4", "s2"), ("h5", "s3"), ("h6", "s4")],
    )
    admission = Admission(network, slots=1, max_hops=4)
    first = admission.admit(Stream("f1", "h1", "h3"))
    assert first is not None and first.path == ("h1", "s1", "s2", "s4", "h3")
    third = admission.admit(Stream("f3", "h5", "h6"))
    assert third is not None and third.path == ("h5", "s3", "s4", "h6")
    assert admission.admit_with_repair(Stream("f2", "h2", "h4"), max_moves=1) is None
    placed, moved = admission.admit_with_repair(Stream("f2", "h2", "h4"))  # type: ignore[misc]
    assert placed.path == ("h2", "s1", "s2", "h4")
    assert sorted((m.stream, m.path) for m in moved) == [
        ("f1", ("h1", "s1", "s3", "s4", "h3")), ("f3", ("h5", "s3", "s5", "s4", "h6"))]
    schedule = Schedule("incremental", Problem.slotted(network, [Stream("f1", "h1", "h3"), Stream("f2", "h2", "h4"),
                                                                 Stream("f3", "h5", "h6")], slots=1),
                        [admission.admitted[name][0] for name in ("f1", "f2", "f3")])
    assert verify(schedule) == []


def test_hosts_with_one_link_get_the_same_paths_as_a_search_through_the_hosts() -> None:
    network = erdos_renyi(6, 24, links=38, seed=3)
    finder = PathFinder(network, max_hops=8)
    hosts = network.hosts
    for src, dst in [(hosts[0], hosts[5]), (hosts[3], hosts[17]), (hosts[9], hosts[10])]:
        through_hosts = list(finder._iter_view(finder._view(src, dst), src, dst, 0))[:12]
        assert [len(p) for p in finder.k_shortest(src, dst, 12)] == [len(p) for p in through_hosts]
        assert set(finder.k_shortest(src, dst, 12)) <= set(finder.k_shortest(src, dst, 100))
        assert finder.k_shortest(src, dst, 3) == finder.k_shortest(src, dst, 12)[:3]
