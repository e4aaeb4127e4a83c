"""End-system elimination (``bpf/frer_eliminate.c``) under BPF_PROG_TEST_RUN, held to the model
(``tsn/frer.VectorRecovery``) frame by frame: two copies of a stream with losses on each path, reordering, a
replayed and a forged sequence number; passed frames leave without their R-TAG, untagged frames pass untouched,
and the counters carry the ``ieee802-dot1cb-frer`` names."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from srfabric.errors import SrfabricError
from srfabric.tsn.model.frer import COUNTERS, VectorRecovery
from srfabric.xdp import frames
from srfabric.xdp.bpf_syscall import prog_test_run
from srfabric.xdp.frer import FrerEliminator, check_settings, rtag
from srfabric.xdp.loader import build

XDP_DROP, XDP_PASS = 1, 2
TALKER = 0x0A0000000001
HISTORY = 16


@pytest.fixture
def eliminator() -> Iterator[FrerEliminator]:
    build()
    made = FrerEliminator.load("test-frer", history_length=HISTORY, reset_ms=600_000)
    try:
        yield made
    finally:
        made.unload()


def inner(sequence: int) -> bytes:
    frame = frames.udp_frame(dst_mac=0x0A0000000002, src_mac=TALKER, src="10.0.0.1", dst="10.0.0.2",
                             dport=5001, size=96)
    return frame[:-2] + sequence.to_bytes(2, "big")


def arrivals(count: int, rng: random.Random) -> list[int]:
    """Both paths' copies of ``count`` frames, each path losing some, the two interleaved with some reordering;
    then a replay of an old number and a forged one far ahead."""
    first = [n for n in range(count) if rng.random() > 0.1]
    second = [n for n in range(count) if rng.random() > 0.1]
    merged = sorted([(n + rng.random() * 3, n) for n in first] + [(n + rng.random() * 3, n) for n in second])
    return [n for _, n in merged] + [count - 40, (count + 5000) % 65536, count + 1]


@pytest.mark.parametrize("program", ["frer_eliminate", "frer_eliminate_one_queue"])
def test_the_program_eliminates_as_the_model_does(eliminator: FrerEliminator, program: str) -> None:
    fd = eliminator.loaded.program_fd(program)
    model = VectorRecovery(history_length=HISTORY, reset_ns=600 * 10**9)
    for sequence in arrivals(2000, random.Random(7)):
        run = prog_test_run(fd, rtag(sequence % 65536, inner(sequence % 65536)))
        wanted = model.accept(sequence % 65536, now_ns=0)
        assert run.retval == (XDP_PASS if wanted else XDP_DROP), sequence
        if wanted:
            assert run.data == inner(sequence % 65536)  # the R-TAG is gone
    (counted,) = eliminator.counters().values()
    assert counted == model.counters()
    assert counted[COUNTERS["rogue"]] >= 1 and counted[COUNTERS["discarded"]] > 1000


def test_untagged_and_short_frames_pass_untouched(eliminator: FrerEliminator) -> None:
    fd = eliminator.loaded.program_fd("frer_eliminate")
    for frame in (inner(1), rtag(1, inner(1))[:16]):
        run = prog_test_run(fd, frame)
        assert (run.retval, run.data) == (XDP_PASS, frame)
    assert eliminator.counters() == {}


def slot(frame: bytes) -> int:
    """The program's slot for a frame's stream (its IPv4 addresses and UDP ports, read as the program reads them)."""
    ip = frame[14:]
    words = [int.from_bytes(ip[12:16], "little"), int.from_bytes(ip[16:20], "little"),
             int.from_bytes(ip[20:22], "little") << 16, int.from_bytes(ip[22:24], "little")]
    return ((words[0] ^ words[1] ^ words[2] ^ words[3]) * 2654435761 % 2**32) >> 20


def test_a_stream_whose_slot_is_held_passes_untouched_and_is_counted(eliminator: FrerEliminator) -> None:
    fd = eliminator.loaded.program_fd("frer_eliminate_one_queue")
    first = inner(1)
    other = next(frame for port in range(5002, 70000)
                 if slot(frame := frames.udp_frame(dst_mac=0x0A0000000002, src_mac=TALKER, src="10.0.0.1",
                                                   dst="10.0.0.2", dport=port % 65536, size=96)) == slot(first))
    assert prog_test_run(fd, rtag(1, first)).retval == XDP_PASS
    for _ in range(2):  # the held slot's stream is not this one: no elimination, but the tag taken out
        run = prog_test_run(fd, rtag(7, other))
        assert (run.retval, run.data) == (XDP_PASS, other)
    assert eliminator.unmatched() == 2 and len(eliminator.counters()) == 1


def test_sequence_numbers_wrap_around_as_the_model_says(eliminator: FrerEliminator) -> None:
    fd = eliminator.loaded.program_fd("frer_eliminate_one_queue")
    model = VectorRecovery(history_length=HISTORY, reset_ns=600 * 10**9)
    for sequence in [65530, 65531, 65533, 65535, 0, 1, 65534, 1, 3, 2, 65532, 40000]:
        wanted = model.accept(sequence, now_ns=0)
        assert prog_test_run(fd, rtag(sequence, inner(sequence))).retval == (XDP_PASS if wanted else XDP_DROP)
    (counted,) = eliminator.counters().values()
    assert counted == model.counters()


def test_settings_out_of_range_are_refused_by_name() -> None:
    with pytest.raises(SrfabricError, match="history-length: must be in 2..64"):
        check_settings(65, 100)
    with pytest.raises(SrfabricError, match="reset-ms"):
        check_settings(8, 0)
