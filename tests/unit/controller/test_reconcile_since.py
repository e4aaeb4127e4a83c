"""A switch that holds what it last confirmed is planned from the entries that changed since, with the same
result as comparing every entry it holds."""

from __future__ import annotations

import random

from srfabric.controller.reconcile import Reconciler
from srfabric.rules.entries import FlowEntry, match


def _entry(port: int, out: int = 0) -> FlowEntry:
    return FlowEntry(0, 100, match(udp_dst=port), cookie=out)


def test_plans_from_the_changes_give_what_a_full_comparison_gives() -> None:
    rng = random.Random(7)
    quick, full = Reconciler(), Reconciler()
    entries = [_entry(port) for port in range(40)]
    for _ in range(60):
        entries = [e for e in entries if rng.random() > 0.1]  # some go
        entries += [_entry(rng.randrange(100, 200), rng.randrange(3)) for _ in range(rng.randrange(4))]  # some come
        entries = list({e.key: e for e in entries}.values())  # one entry per key, as compiled tables hold
        if rng.random() < 0.3:  # an equal entry, but another object: nothing to send for it
            at = rng.randrange(len(entries))
            entries[at] = _entry(entries[at].match[0][1], entries[at].cookie)
        pushes = quick.plan(1, list(entries), []), full.plan(1, list(entries), [])
        full.last.clear()  # the reference compares every entry every time
        assert (pushes[0] is None) == (pushes[1] is None)
        if pushes[0] is not None and pushes[1] is not None:
            assert sorted(bytes(m.buf) for m in pushes[0].messages) == sorted(bytes(m.buf) for m in pushes[1].messages)
            assert pushes[0].wanted == pushes[1].wanted
            quick.confirmed(pushes[0])
            full.confirmed(pushes[1])
        assert quick.installed[1] == full.installed[1]
