"""The base tables kept between link cuts (``rules.base_tables``) are the tables worked out afresh: after every
cut, with dual-stack hosts and a gateway too, and the switches none of whose parts changed keep their very
tables."""

from __future__ import annotations

import dataclasses
import random

import pytest

from srfabric.model.topo import fat_tree
from srfabric.rules.base_tables import TopologyMemo, topology_tables

pytestmark = pytest.mark.timeout(120)


@pytest.mark.parametrize(("k", "codec", "seed", "dual"), [(4, "mac-nibble", 0, False), (4, "mac-vlan-mpls", 1, True),
                                                         (8, "mac-vlan-mpls", 2, False)])
def test_kept_tables_are_the_fresh_ones_after_every_cut(k: int, codec: str, seed: int, dual: bool) -> None:
    spec = fat_tree(k)
    if dual:  # every host dual-stack, the first one the gateway
        for index, name in enumerate(sorted(spec.hosts)):
            spec.hosts[name] = dataclasses.replace(spec.hosts[name], ip6=f"2001:db8::{index + 1:x}")
        spec.gateway = sorted(spec.hosts)[0]
    fabric = spec.to_fabric()
    memo, rng = TopologyMemo(), random.Random(seed)
    topology_tables(fabric, codec, [], memo=memo)
    for step in range(6):
        before = topology_tables(fabric, codec, [], memo=memo)
        link = rng.choice(sorted(fabric.links))
        if step % 3 == 2:
            fabric.remove_link(link)  # forgotten: its ports are host ports now
        else:
            fabric.suspend_link(link)  # down, as a port status says: its ports stay trusted
        problems: list[object] = []
        kept = topology_tables(fabric, codec, problems, memo=memo)  # type: ignore[arg-type]
        fresh_problems: list[object] = []
        fresh = topology_tables(fabric, codec, fresh_problems)  # type: ignore[arg-type]
        assert kept.entries == fresh.entries and kept.groups == fresh.groups
        assert [str(p) for p in problems] == [str(p) for p in fresh_problems]
        if not problems and step % 3 != 2:  # only stale routes' switches got new tables
            assert any(kept.entries[d] is before.entries[d] for d in fabric.switches)


def test_a_link_back_starts_again_and_gives_the_fresh_tables() -> None:
    fabric = fat_tree(4).to_fabric()
    memo = TopologyMemo()
    link = sorted(fabric.links.items())[0]
    topology_tables(fabric, "mac-nibble", [], memo=memo)
    fabric.suspend_link(link[0])
    topology_tables(fabric, "mac-nibble", [], memo=memo)
    fabric.add_link(*link)  # a link added: routes may be shorter again, nothing kept
    again = topology_tables(fabric, "mac-nibble", [], memo=memo)
    assert again.entries == topology_tables(fabric, "mac-nibble", []).entries
