"""The no-wait placement loop in C gives the Python loop's answers, stream for stream."""

from __future__ import annotations

import random

import pytest

from srfabric.tsn.formats.generators import erdos_renyi, random_streams
from srfabric.tsn.model.network import Network, Stream
from srfabric.tsn.model.timed import TimedProblem
from srfabric.tsn.schedulers.nowait import native as nowait_native
from srfabric.tsn.schedulers.nowait.heuristic import schedule_nowait
from srfabric.tsn.verify.timed import verify_timed


def test_the_bootstrap_built_the_c_loop() -> None:
    assert nowait_native.available(), f"{nowait_native.MODULE} is missing: `make -C native` (the bootstrap) builds it"


def streams_of(network: Network, count: int, seed: int, periods: list[int]) -> list[Stream]:
    """Streams of several periods (some pairs with a gcd below both, so the views modulo a gcd are used),
    sizes from 64 to 1,500 bytes, some deadlines tighter than a long path."""
    rng = random.Random(seed)
    return [Stream(s.id, s.src, s.dst, period_ns=rng.choice(periods), size_bytes=rng.choice([64, 300, 1000, 1500]),
                   deadline_ns=rng.choice([None, None, 25_000, 60_000]))
            for s in random_streams(network, count, seed=seed)]


@pytest.mark.parametrize("seed", range(12))
def test_c_and_python_place_every_stream_alike(seed: int) -> None:
    periods = [[100_000], [100_000, 200_000, 400_000], [120_000, 200_000, 300_000], [250_000, 400_000, 1_000_000]]
    switches, hosts = 5 + seed % 4, 12 + seed
    network = erdos_renyi(switches, hosts, links=hosts + switches + seed % 3, seed=seed)
    streams = streams_of(network, 60 + 20 * (seed % 5), seed, periods[seed % len(periods)])
    problem = TimedProblem.build(network, streams, grid_ns=[1, 100, 40][seed % 3], overhead_bytes=0)
    in_c = schedule_nowait(problem, 3, native=True)
    in_python = schedule_nowait(problem, 3, native=False)
    assert in_c.assignments == in_python.assignments
    assert in_c.reasons == in_python.reasons
    assert verify_timed(in_c) == []
    assert in_c.reasons and in_c.assignments  # loaded enough that some are left out


def test_no_streams_with_a_path_and_idle_links() -> None:
    network = Network.build([("a", "host"), ("s", "switch"), ("b", "host")], [("a", "s"), ("s", "b")])
    too_tight = Stream("f", "a", "b", period_ns=100_000, size_bytes=1500, deadline_ns=100)
    problem = TimedProblem.build(network, [too_tight], grid_ns=100)
    result = schedule_nowait(problem, native=True)
    assert result.assignments == [] and "no path of at most" in result.reasons["f"]


@pytest.mark.parametrize("native", [True, False])
def test_windows_that_fill_the_gcd_exactly_fit_back_to_back(native: bool) -> None:
    """4,000 + 6,000 ns of windows on a link shared at a gcd of 10,000 ns: B goes right after A."""
    network = Network.build([("a", "host"), ("s", "switch"), ("b", "host"), ("c", "host")],
                            [("a", "s"), ("s", "b"), ("s", "c")])
    streams = [Stream("A", "a", "b", period_ns=20_000, size_bytes=500),
               Stream("B", "a", "c", period_ns=30_000, size_bytes=750)]
    result = schedule_nowait(TimedProblem.build(network, streams, grid_ns=1, overhead_bytes=0), native=native)
    assert [(a.stream, a.offset_ns) for a in result.assignments] == [("A", 0), ("B", 4000)]
    assert verify_timed(result) == []


def small_problem() -> TimedProblem:
    network = Network.build([("a", "host"), ("s", "switch"), ("b", "host")], [("a", "s"), ("s", "b")])
    return TimedProblem.build(network, [Stream("f", "a", "b", period_ns=100_000, size_bytes=1)], overhead_bytes=0)


def packed(problem: TimedProblem, block: bytes, block_at: int = 0) -> nowait_native.Packed:
    one = nowait_native.pack_problem(problem, [block])
    return one._replace(block_at=block_at.to_bytes(8, "little", signed=True))


@pytest.mark.parametrize("words", [
    [1, 0, 1, 0, 0, -5],  # a negative window would stall the search
    [1, -1, 1, 0, 0, 10],  # negative latency
    [1, 0, 1, 9, 0, 10],  # link 9 of 4
    [1, 0, 3, 0, 0, 10],  # three hops announced, one given
    [2, 0, 1, 0, 0, 10],  # two paths announced, one given
])
def test_a_malformed_block_is_refused_not_run(words: list[int]) -> None:
    block = b"".join(word.to_bytes(8, "little", signed=True) for word in words)
    problem = small_problem()
    with pytest.raises(ValueError, match="status -2"):
        nowait_native.place(problem, packed(problem, block))


def test_a_block_outside_the_words_and_a_period_off_the_grid_are_refused() -> None:
    problem = small_problem()
    block = nowait_native.pack(problem, 1, [("a", "s", "b")])
    assert nowait_native.place(problem, packed(problem, block)) == [(0, 0)]
    with pytest.raises(ValueError, match="status -2"):
        nowait_native.place(problem, packed(problem, block, block_at=len(block) // 8))
    object.__setattr__(problem, "grid_ns", 30_000)  # 100,000 is not a multiple of it
    with pytest.raises(ValueError, match="status -2"):
        nowait_native.place(problem, packed(problem, block))


def test_buffers_of_different_lengths_are_refused() -> None:
    problem = small_problem()
    block = nowait_native.pack(problem, 1, [("a", "s", "b")])
    with pytest.raises(ValueError, match="one int64 per stream"):
        nowait_native.place(problem, packed(problem, block)._replace(sizes=b""))
