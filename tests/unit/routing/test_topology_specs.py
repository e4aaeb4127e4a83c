"""Topology specs give every switch a dpid of its own: a fabric with two switches under one dpid would never be
discovered whole (its links and hosts flap between them), so a spec refuses it by name."""

from __future__ import annotations

import pytest

from srfabric.errors import ModelError
from srfabric.model.topo import MAX_FAT_TREE_K, TopoSpec, fat_tree


@pytest.mark.parametrize("k", [4, 16, 22, 24, 48])
def test_every_switch_of_a_fat_tree_has_a_dpid_of_its_own(k: int) -> None:
    spec = fat_tree(k)
    assert len({sw.dpid for sw in spec.switches.values()}) == len(spec.switches) == 5 * k * k // 4


def test_a_second_switch_with_a_dpid_taken_is_refused_naming_both() -> None:
    spec = TopoSpec()
    spec.add_switch("s1", dpid=0x101)
    with pytest.raises(ModelError) as refused:
        spec.add_switch("s2", dpid=0x101)
    assert refused.value.field == "dpid" and "'s1'" in refused.value.message and "'s2'" in refused.value.message
    assert list(spec.switches) == ["s1"]


def test_a_fat_tree_too_large_for_its_dpids_is_refused() -> None:
    with pytest.raises(ModelError) as refused:
        fat_tree(MAX_FAT_TREE_K + 2)
    assert refused.value.field == "k"
