"""802.1CB's vector recovery algorithm: each number passes once, duplicates and rogue numbers are eliminated,
lost and out-of-order frames are counted, and a silent stream is taken afresh after the reset time."""

from __future__ import annotations

import pytest

from srfabric.tsn.model.frer import SEQ_SPACE, VectorRecovery


def run(recovery: VectorRecovery, numbers: list[int], now_ns: int = 0) -> list[int]:
    return [n for n in numbers if recovery.accept(n, now_ns)]


def test_two_paths_copies_pass_once_each_in_any_interleaving() -> None:
    recovery = VectorRecovery(history_length=16)
    first, second = list(range(100)), list(range(100))
    interleaved = [n for pair in zip(first, second, strict=True) for n in pair]
    assert run(recovery, interleaved) == list(range(100))
    counters = recovery.counters()
    assert counters["rx-passed-pkts"] == 100
    assert counters["rx-discarded-pkts"] == 100
    assert counters["rx-lost-pkts"] == counters["rx-rogue-pkts"] == 0


def test_one_path_late_the_other_cut_nothing_is_lost_or_doubled() -> None:
    recovery = VectorRecovery(history_length=8)
    fast, slow = list(range(0, 20)), list(range(0, 10))  # the slow path is cut after frame 9
    arrivals = fast[:5] + slow[:3] + fast[5:] + slow[3:]
    assert sorted(run(recovery, arrivals)) == list(range(20)) and recovery.counts["lost"] == 0


def test_numbers_never_seen_count_as_lost_once_they_leave_the_window() -> None:
    recovery = VectorRecovery(history_length=4)
    assert run(recovery, [1, 3, 4, 5, 6, 7]) == [1, 3, 4, 5, 6, 7]
    assert (recovery.counts["lost"], recovery.counts["out_of_order"]) == (1, 1)  # 2 never came; 3 came after a gap


def test_a_late_frame_inside_the_window_passes_as_out_of_order() -> None:
    recovery = VectorRecovery(history_length=8)
    assert run(recovery, [10, 12, 11, 11]) == [10, 12, 11]
    assert (recovery.counts["out_of_order"], recovery.counts["discarded"]) == (2, 1)


def test_replayed_or_forged_numbers_are_rogue_and_never_delivered_twice() -> None:
    recovery = VectorRecovery(history_length=8)
    run(recovery, list(range(50)))
    assert run(recovery, [49, 48, 10, 40000, 30]) == []  # duplicates in the window, and numbers far off
    assert (recovery.counts["rogue"], recovery.counts["discarded"]) == (3, 5)


def test_numbers_wrap_around_the_16_bit_space() -> None:
    recovery = VectorRecovery(history_length=8)
    numbers = [SEQ_SPACE - 3, SEQ_SPACE - 2, SEQ_SPACE - 1, 0, 1, 0, SEQ_SPACE - 1]
    assert run(recovery, numbers) == numbers[:5]
    assert (recovery.counts["rogue"], recovery.counts["lost"]) == (0, 0)


def test_a_stream_silent_for_the_reset_time_is_taken_afresh() -> None:
    recovery = VectorRecovery(history_length=8, reset_ns=1_000)
    assert run(recovery, [100, 101], now_ns=0) == [100, 101]
    assert run(recovery, [5], now_ns=500) == []  # rogue: far before 101, and not yet reset
    assert run(recovery, [5, 6], now_ns=2_000) == [5, 6]  # the talker restarted its numbers
    assert recovery.counts["resets"] == 1


@pytest.mark.parametrize(("field", "value"), [("history_length", 1), ("history_length", 1 << 16), ("reset_ns", 0)])
def test_bad_parameters_are_refused_by_name(field: str, value: int) -> None:
    with pytest.raises(ValueError, match=field):
        VectorRecovery(**{field: value})


def test_a_number_outside_the_tag_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="sequence: 65536 is outside 0..65535"):
        VectorRecovery().accept(SEQ_SPACE, 0)
