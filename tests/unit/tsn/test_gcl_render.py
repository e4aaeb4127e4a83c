"""Gate control lists from schedules, and their taprio and YANG forms both ways."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from srfabric.errors import ModelError
from srfabric.tsn.gates.gcl import GateEntry, build_gcls, windows_to_entries
from srfabric.tsn.gates.render import parse_taprio, parse_yang, to_taprio, to_yang
from srfabric.tsn.model.network import Stream
from srfabric.tsn.model.slots import plan
from srfabric.tsn.schedulers.registry import schedule_slots as schedule

from .cases import dumbbell


def _schedule(slots: int = 4):
    network = dumbbell(3)
    streams = [Stream(f"F{i}", f"A{i}", f"B{i}") for i in range(1, 4)]
    problem = plan(network, streams, slots=slots, base_period_ns=1_000_000)
    return schedule(problem, "sur")


def test_every_list_covers_the_cycle_and_opens_each_used_slot() -> None:
    result = _schedule()
    gcls = build_gcls(result)
    ports = {(g.node, g.peer) for g in gcls}
    assert ("S1", "S2") in ports and all(g.node.startswith("S") for g in gcls)
    slot_ns = result.problem.slot_ns
    for gcl in gcls:
        assert sum(e.duration_ns for e in gcl.entries) == gcl.cycle_ns == 1_000_000
        assert all(a.mask != b.mask for a, b in zip(gcl.entries, gcl.entries[1:], strict=False))
    trunk = next(g for g in gcls if (g.node, g.peer) == ("S1", "S2"))
    open_tt = sum(e.duration_ns for e in trunk.entries if e.mask == 0b10)
    assert open_tt == 3 * slot_ns


def test_guard_band_precedes_each_window_and_wraps_around() -> None:
    entries = windows_to_entries([(0, 100), (500, 600)], cycle_ns=1000, guard_ns=50, tt_mask=2, be_mask=1)
    assert entries == [
        GateEntry(2, 100), GateEntry(1, 350), GateEntry(0, 50), GateEntry(2, 100), GateEntry(1, 350), GateEntry(0, 50)
    ]


def test_adjacent_windows_merge_without_a_guard_between() -> None:
    entries = windows_to_entries([(100, 200), (200, 300)], cycle_ns=1000, guard_ns=50, tt_mask=2, be_mask=1)
    assert entries == [GateEntry(1, 50), GateEntry(0, 50), GateEntry(2, 200), GateEntry(1, 700)]


def test_taprio_round_trip() -> None:
    for gcl in build_gcls(_schedule(), base_time_ns=1_500_000_000):
        command = to_taprio(gcl)
        back = parse_taprio(command)
        assert back.entries == gcl.entries and back.base_time_ns == gcl.base_time_ns
        assert back.interface == gcl.interface and back.cycle_ns == gcl.cycle_ns
        assert to_taprio(back) == command
        assert " map 0 0 0 0 0 0 0 1 0 0 0 0 0 0 0 0 " in command and "clockid CLOCK_TAI" in command


def test_yang_round_trip_and_shape() -> None:
    gcls = build_gcls(_schedule(), base_time_ns=2_000_000_123)
    document = to_yang(gcls)
    first = document["ietf-interfaces:interfaces"]["interface"][0]
    table = first["ieee802-dot1q-bridge:bridge-port"]["ieee802-dot1q-sched-bridge:gate-parameter-table"]
    assert table["admin-cycle-time"] == {"numerator": 1, "denominator": 1000}
    assert table["admin-base-time"] == {"seconds": "2", "nanoseconds": 123}
    entry = table["admin-control-list"]["gate-control-entry"][0]
    assert entry["operation-name"] == "ieee802-dot1q-sched:set-gate-states"
    back = parse_yang(document)
    assert [(g.interface, g.entries, g.cycle_ns, g.base_time_ns) for g in back] == [
        (g.interface, g.entries, g.cycle_ns, g.base_time_ns) for g in gcls
    ]


def test_malformed_inputs_name_what_is_wrong() -> None:
    with pytest.raises(ModelError, match="command:"):
        parse_taprio("tc qdisc add dev x root fq")
    with pytest.raises(ModelError, match="yang: missing or malformed node"):
        parse_yang({"ietf-interfaces:interfaces": {"interface": [{"name": "x"}]}})


def test_phased_streams_get_a_hyperperiod_long_list() -> None:
    network = dumbbell(2)
    streams = [Stream("F1", "A1", "B1", period_ns=2_000_000), Stream("F2", "A2", "B2", period_ns=2_000_000)]
    problem = plan(network, streams, slots=2, base_period_ns=1_000_000)
    result = schedule(problem, "spr")
    trunk = next(g for g in build_gcls(result) if (g.node, g.peer) == ("S1", "S2"))
    assert trunk.cycle_ns == 2_000_000
    assert sum(e.duration_ns for e in trunk.entries if e.mask == 0b10) == 2 * problem.slot_ns


def _mask_at(point: int, windows: list[tuple[int, int]], guards: list[tuple[int, int]]) -> int:
    """The gate at one instant by definition: open in a window, closed in a guard band, best effort else."""
    if any(start <= point < end for start, end in windows):
        return 2
    return 0 if any(start <= point < end for start, end in guards) else 1


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 999), st.integers(0, 120)), max_size=12), st.integers(0, 80))
def test_entries_gate_every_instant_as_defined(spans: list[tuple[int, int]], guard: int) -> None:
    """The one-sweep list agrees, instant by instant, with the definition: windows (even overlapping, touching
    or empty ones), a guard band before each window's start that wraps around the cycle's start."""
    cycle = 1000
    windows = [(start, min(start + length, cycle)) for start, length in spans]
    guards = []
    for start, _ in windows:
        guards += [(start - guard, start)] if start >= guard else [(0, start), (cycle + start - guard, cycle)]
    entries = windows_to_entries(windows, cycle_ns=cycle, guard_ns=guard, tt_mask=2, be_mask=1)
    assert sum(entry.duration_ns for entry in entries) == cycle
    assert all(a.mask != b.mask for a, b in zip(entries, entries[1:], strict=False))  # runs joined
    at = 0
    for entry in entries:
        assert entry.duration_ns > 0
        assert {_mask_at(point, windows, guards) for point in range(at, at + entry.duration_ns)} == {entry.mask}
        at += entry.duration_ns
