"""The live planner's lists, kept per port between changes, are the lists ``build_gcls`` makes from scratch for the
same streams, after every admission, removal and move, and with redundant streams' second trees."""

from __future__ import annotations

import contextlib
import random

import pytest

from srfabric.model.topo import fat_tree, tsn_fig7
from srfabric.tsn.gates.gcl import PortGcl, build_gcls
from srfabric.tsn.model.network import Stream
from srfabric.tsn.runtime.live import LivePlanner, Refused, network_from_fabric

pytestmark = pytest.mark.timeout(60)


def from_scratch(planner: LivePlanner, base_time_ns: int) -> list[PortGcl]:
    """What the planner gave before it kept lists: every port's list built again."""
    if not planner.streams:
        return []
    schedule = planner.schedule()
    extra = [(piece, planner.streams[name][1]) for name, plan in planner.redundant.items() for piece in plan.extra]
    gcls = build_gcls(schedule, planner.config.guard_bytes, base_time_ns=base_time_ns,
                      slot_model=planner.config.slot_model, extra=extra)
    hyper, cycle = planner.config.cycle_ns, schedule.problem.cycles * planner.config.base_period_ns
    for gcl in gcls:
        if cycle != hyper:
            gcl.entries, gcl.cycle_ns = gcl.entries * (hyper // cycle), hyper
    return gcls


@pytest.mark.parametrize("seed", range(4))
def test_kept_lists_are_the_lists_built_from_scratch_after_every_change(seed: int) -> None:
    fabric = fat_tree(4).to_fabric()
    planner = LivePlanner(network_from_fabric(fabric))
    hosts, rng = sorted(fabric.hosts), random.Random(seed)
    for step in range(120):
        if planner.streams and rng.random() < 0.3:
            name = rng.choice(sorted(planner.streams))
            if rng.random() < 0.5:
                planner.remove(name)
            else:
                stream = planner.streams[name][0]
                paths = planner.admission.finder.k_shortest(stream.src, stream.dst, 4)
                with contextlib.suppress(Refused):
                    planner.move(name, tuple(rng.choice(paths)))
        else:
            talker, listener = rng.sample(hosts, 2)
            period = rng.choice((1, 2, 4)) * 1_000_000
            with contextlib.suppress(Refused):
                planner.admit_with_repair(Stream(f"f{step}", talker, listener, period_ns=period, size_bytes=200))
        assert planner.gcls(step) == from_scratch(planner, step), f"after step {step}"


def test_a_redundant_streams_second_tree_is_kept_like_any_position() -> None:
    fabric = tsn_fig7(pairs=2).to_fabric()
    planner = LivePlanner(network_from_fabric(fabric))
    first = ("t1", "s1", "s2", "s4", "l1")
    second = ("t1", "s1", "s3", "s4", "l1")
    planner.admit_redundant(Stream("r", "t1", "l1", period_ns=1_000_000, size_bytes=200), first, second, (0, 0))
    assert planner.gcls(0) == from_scratch(planner, 0)
    planner.admit(Stream("p", "t2", "l2", period_ns=2_000_000, size_bytes=200))
    assert planner.gcls(5) == from_scratch(planner, 5)
    planner.remove("r")
    assert planner.gcls(7) == from_scratch(planner, 7)
