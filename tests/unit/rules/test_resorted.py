"""A switch's entry list kept in order from the list before a change is the list sorting them all gives, and what it
remembers of that change is what comparing the two finds."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from srfabric.rules.entries import FlowEntry, match
from srfabric.rules.tables import came_and_went, entry_order, resorted


def entry(number: int, version: int = 0) -> FlowEntry:
    """One of a switch's entries; ``version`` changes its actions, not its key."""
    return FlowEntry(number % 3, 100 + number % 7, match(udp_dst=number), goto=version or None)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32), st.integers(1, 300), st.integers(0, 80))
def test_kept_in_order_as_a_full_sort(seed: int, size: int, changes: int) -> None:
    rng = random.Random(seed)
    entries = {e.key: e for e in (entry(n) for n in rng.sample(range(1000), size))}
    before = sorted(entries.values(), key=entry_order)
    for _ in range(changes):
        kind = rng.choice(["add", "remove", "replace"])
        if kind == "add":
            new = entry(rng.randrange(1000, 2000))
            entries[new.key] = new
        elif entries:
            old = rng.choice(list(entries.values()))
            if kind == "remove":
                del entries[old.key]
            else:
                entries[old.key] = entry(int(dict((f[0], f[1]) for f in old.match)["udp_dst"]), rng.randrange(1, 9))
    after = resorted(before, entries)
    assert after == sorted(entries.values(), key=entry_order)
    assert resorted(None, entries) == sorted(entries.values(), key=entry_order)
    # What the list remembers of its making is what comparing the two lists finds.
    assert came_and_went(before, after) == came_and_went(before, list(after))
    again = resorted(after, entries)
    assert came_and_went(before, again) == came_and_went(before, list(again))  # not made from before: compared

