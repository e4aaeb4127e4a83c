"""The fine-grained (no-wait) scheduler: its schedules verify, its offsets are the earliest that fit, its
gate control lists render, and bad input names the field."""

from __future__ import annotations

import random

import pytest

from srfabric.errors import ModelError
from srfabric.tsn.formats.generators import erdos_renyi, random_streams
from srfabric.tsn.gates.gcl import build_timed_gcls
from srfabric.tsn.gates.render import parse_taprio, to_taprio
from srfabric.tsn.model.network import Network, Stream
from srfabric.tsn.model.timed import TimedAssignment, TimedProblem, TimedSchedule
from srfabric.tsn.schedulers.nowait.busy import BusyLink
from srfabric.tsn.schedulers.nowait.heuristic import earliest_offset, path_checks, schedule_nowait
from srfabric.tsn.verify.timed import verify_timed


def mixed_streams(network: Network, count: int, seed: int) -> list[Stream]:
    rng = random.Random(seed)
    return [Stream(s.id, s.src, s.dst, period_ns=rng.choice([250_000, 500_000, 1_000_000]),
                   size_bytes=rng.choice([64, 300, 1000, 1500]),
                   deadline_ns=rng.choice([None, 30_000, 60_000]))
            for s in random_streams(network, count, seed=seed)]


@pytest.mark.parametrize("seed", range(5))
def test_schedules_verify_and_every_refusal_has_a_reason(seed: int) -> None:
    network = erdos_renyi(6, 24, links=38, seed=seed)
    problem = TimedProblem.build(network, mixed_streams(network, 150, seed), grid_ns=100)
    result = schedule_nowait(problem)
    assert verify_timed(result) == []
    assert result.scheduled_ids | set(result.reasons) == {s.id for s in problem.streams}
    assert not result.scheduled_ids & set(result.reasons)
    assert len(result.assignments) > 100


def brute_force_earliest(problem: TimedProblem, busy: TimedSchedule, stream: Stream, path: tuple[str, ...]) -> int:
    """The first grid offset whose frames clash with nothing, tried one by one."""
    starts = problem.hop_starts(stream, path)
    latest = stream.period_ns - problem.latency_ns(stream, path)
    for offset in range(0, latest + 1, problem.grid_ns):
        trial = TimedSchedule("trial", problem, [*busy.assignments, TimedAssignment(
            stream.id, path, offset, tuple(offset + d for d in starts))])
        if not any("overlap" in p for p in verify_timed(trial)):
            return offset
    return -1


def test_the_offset_taken_is_the_earliest_free_one() -> None:
    net = Network.build([("a", "host"), ("b", "host"), ("s", "switch"), ("c", "host")],
                        [("a", "s"), ("b", "s"), ("s", "c")])
    streams = [Stream("f1", "a", "c", 20_000, 300), Stream("f2", "b", "c", 40_000, 700),
               Stream("f3", "a", "c", 40_000, 1200), Stream("f4", "b", "c", 20_000, 64)]
    problem = TimedProblem.build(net, streams, grid_ns=100)
    result = schedule_nowait(problem)
    assert verify_timed(result) == [] and len(result.assignments) == 3 and list(result.reasons) == ["f3"]
    order = sorted(streams, key=lambda s: (s.period_ns, -s.size_bytes))  # the order they are placed in
    placed = {a.stream: a for a in result.assignments}
    for rank, stream in enumerate(order):
        if stream.id in placed:  # given the ones placed before it, it took the first free offset
            before = TimedSchedule("before", problem, [placed[s.id] for s in order[:rank] if s.id in placed])
            assert placed[stream.id].offset_ns == brute_force_earliest(problem, before, stream, placed[stream.id].path)


def earliest(windows: list[tuple[int, int, int]], delta: int, window: int, period: int, latest: int,
             grid: int = 1) -> int | None:
    """The first offset at which a frame of ``period``, starting ``delta`` after it and holding one link for
    ``window``, meets none of the link's windows (start, end, their period)."""
    link = BusyLink()
    for start, end, other in windows:
        link.add(other, start, end - start)
    checks = path_checks([link], (0,), (delta,), (window,), period)
    return None if checks is None else earliest_offset(checks, latest, grid)


def test_a_links_windows_are_kept_modulo_each_gcd() -> None:
    link = BusyLink()
    link.add(1000, 900, 200)  # passes the period: split at 1000
    link.add(1000, 100, 50)  # touches the wrapped part: merged with it
    assert link.view(1000, 1000) == ([0, 900], [150, 1000])
    assert link.view(1000, 500) == ([0, 400], [150, 500])  # the same residues modulo a divisor
    link.add(1000, 300, 100)
    assert link.view(1000, 500) == ([0, 300], [150, 500]) and link.longest(1000) == 200  # 300-400 joins 400-500
    assert link.clash(1000, 1000, 150, 200) == 250  # 150-350 meets 300-400: start at 400
    assert link.clash(1000, 1000, 850, 100) == 150 and link.clash(1000, 1000, 500, 100) == 0


def test_the_earliest_offset_jumps_past_busy_windows_and_their_wraps() -> None:
    # A window at [900, 1000) of a 1000 ns period: a 200 ns frame fits from 0 to 700, not from 701 to 999.
    assert earliest([(900, 1000, 1000)], delta=0, window=200, period=1000, latest=999) == 0
    assert earliest([(0, 100, 1000), (900, 1000, 1000)], delta=0, window=200, period=1000, latest=999) == 100
    # 100 ns after the offset on the path: released at 550, the frame holds the link from 650 to 850.
    assert earliest([(0, 650, 1000), (900, 1000, 1000)], delta=100, window=200, period=1000, latest=999) == 550
    # A 1000 ns stream's window seen by a 2000 ns one: modulo their gcd, every 1000 ns.
    assert earliest([(0, 300, 1000), (0, 100, 4000)], delta=0, window=100, period=2000, latest=1999) == 300
    assert earliest([(0, 300, 1000), (300, 500, 4000)], delta=0, window=100, period=2000, latest=1999) == 500
    # The grid: a start between grid points goes up to the next one.
    assert earliest([(0, 350, 1000)], delta=0, window=100, period=1000, latest=999, grid=100) == 400
    assert earliest([(0, 900, 1000)], delta=0, window=100, period=1000, latest=999) == 900  # fits exactly
    assert earliest([(0, 900, 1000)], delta=0, window=101, period=1000, latest=999) is None  # never free for 101
    assert earliest([(0, 850, 1000)], delta=0, window=100, period=1000, latest=800) is None  # free only at 850
    assert earliest([(0, 350, 1000)], delta=0, window=100, period=1000, latest=350) == 350


def test_gcls_open_the_frames_windows_and_render_for_taprio() -> None:
    net = Network.build([("a", "host"), ("s", "switch"), ("b", "host")], [("a", "s"), ("s", "b")])
    problem = TimedProblem.build(net, [Stream("f", "a", "b", 500_000, 1000), Stream("g", "a", "b", 1_000_000, 200)],
                                 grid_ns=100)
    result = schedule_nowait(problem)
    gcls = build_timed_gcls(result)
    assert [(g.node, g.peer, g.cycle_ns) for g in gcls] == [("s", "b", 1_000_000)]
    open_ns = sum(e.duration_ns for e in gcls[0].entries if e.mask & (1 << gcls[0].tt_class))
    assert open_ns == 2 * problem.window_ns(problem.streams[0], "s", "b") + problem.window_ns(problem.streams[1], "s",
                                                                                                "b")
    assert parse_taprio(to_taprio(gcls[0])).entries == gcls[0].entries


@pytest.mark.parametrize(("streams", "grid", "message"), [
    ([], 100, "flows: there are no flows to schedule"),
    ([Stream("f", "a", "b", 1_050, 100)], 100, "flows[0].period_ns: 1050 is not a multiple of the 100 ns grid"),
    ([Stream("f", "a", "b", 1_000, 100), Stream("g", "a", "b", 4_099_000, 100)], 100,
     "flows: the periods make a hyperperiod of"),
])
def test_bad_input_names_the_field(streams: list[Stream], grid: int, message: str) -> None:
    net = Network.build([("a", "host"), ("s", "switch"), ("b", "host")], [("a", "s"), ("s", "b")])
    with pytest.raises(ModelError) as error:
        TimedProblem.build(net, streams, grid_ns=grid)
    assert str(error.value).startswith(message)
