"""taprio gets each new list started where it agrees with the old one, so that Linux 6.1's early switch-over opens
no gate early: checked against a model of 6.1's ``advance_sched``."""

from __future__ import annotations

import bisect

import pytest

from srfabric.tsn.gates.gcl import GateEntry, PortGcl, windows_to_entries
from srfabric.tsn.gates.switch_over import for_taprio, mask_at, rotated

CYCLE, TT, BE = 4_000_000, 0b10, 0b01


def _gcl(windows: list[tuple[int, int]], base: int) -> PortGcl:
    entries = windows_to_entries(windows, cycle_ns=CYCLE, guard_ns=12_336, tt_mask=TT, be_mask=BE)
    return PortGcl("s4", "l1", "s4-eth3", CYCLE, base, entries)


def linux61(old: PortGcl, new: PortGcl, until_ns: int) -> list[tuple[int, int]]:
    """The (instant, mask) steps of a port that runs ``old`` as given to taprio and gets ``new`` as its admin list:
    at the end of each entry, 6.1 switches when the running list's next entry would end at or after the new
    base time, and runs the new first entry from then until the new base time plus its interval."""
    entries, index, end = old.entries, 0, old.base_time_ns + old.entries[0].duration_ns
    cycle_end, switched = old.base_time_ns + old.cycle_ns, False
    steps = [(old.base_time_ns, entries[0].mask)]
    while end < until_ns:
        index = (index + 1) % len(entries)
        if index == 0:
            cycle_end += old.cycle_ns if not switched else new.cycle_ns
        next_end = min(end + entries[index].duration_ns, cycle_end)
        if not switched and new.base_time_ns <= next_end:
            entries, index, switched = new.entries, 0, True
            next_end, cycle_end = new.base_time_ns + entries[0].duration_ns, new.base_time_ns + new.cycle_ns
        steps.append((end, entries[index].mask))
        end = next_end
    return steps


def _mask(steps: list[tuple[int, int]], at_ns: int) -> int:
    return steps[bisect.bisect_right(steps, (at_ns, 1 << 8)) - 1][1]


def _early(old: PortGcl, new: PortGcl, given_old: PortGcl, given_new: PortGcl) -> list[int]:
    """Instants around the change where the modelled kernel's gates differ from old-then-new."""
    steps = linux61(given_old, given_new, new.base_time_ns + 2 * CYCLE)
    probes = range(new.base_time_ns - CYCLE, new.base_time_ns + CYCLE, 250)
    return [t for t in probes if _mask(steps, t) != mask_at(old if t < new.base_time_ns else new, t)]


PROBE = [(0, 27_036), (1_000_000, 1_027_036), (2_000_000, 2_027_036), (3_000_000, 3_027_036)]
OTHER = [(27_036, 54_072), (2_027_036, 2_054_072)]


@pytest.mark.parametrize(("before", "after"), [(PROBE, PROBE + OTHER), (PROBE + OTHER, PROBE), (PROBE, PROBE)])
def test_the_switch_over_opens_no_gate_early(before: list[tuple[int, int]], after: list[tuple[int, int]]) -> None:
    base_old, base = 397 * CYCLE, 400 * CYCLE
    old, new = _gcl(before, base_old), _gcl(after, base)
    assert _early(old, new, old, new)  # as committed, the guard band before the window at 0 is lost
    given_old = for_taprio(None, old)
    assert _early(old, new, given_old, for_taprio(old, new)) == []
    # And the next change, from a list that taprio got started elsewhere.
    newer = _gcl(before, base + 3 * CYCLE)
    assert _early(new, newer, for_taprio(old, new), for_taprio(new, newer)) == []


def test_a_rotated_list_is_the_same_periodic_list() -> None:
    gcl = _gcl(PROBE + OTHER, 7 * CYCLE)
    for at in (7 * CYCLE + 13_000, 9 * CYCLE - 1, 3 * CYCLE + 2_027_036):
        turned = rotated(gcl, at)
        assert turned.base_time_ns == at and sum(e.duration_ns for e in turned.entries) == CYCLE
        assert all(mask_at(turned, t) == mask_at(gcl, t) for t in range(at - CYCLE, at + CYCLE, 999))


def test_lists_that_disagree_at_the_base_time_keep_it() -> None:
    old = PortGcl("s1", "", "s1-eth1", 1000, 0, [GateEntry(2, 500), GateEntry(1, 500)])
    new = PortGcl("s1", "", "s1-eth1", 1000, 9000, [GateEntry(1, 500), GateEntry(2, 500)])
    assert for_taprio(old, new) == new
