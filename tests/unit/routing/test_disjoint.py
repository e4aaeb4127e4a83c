"""Two ways for a redundant stream: no shared switch where the topology allows, else no shared link with the
shared switches named, else refused by name."""

from __future__ import annotations

import pytest

from srfabric.errors import RoutingError
from srfabric.model.fabric import Fabric, Switch
from srfabric.model.topo import fat_tree, tsn_fig1
from srfabric.routing.disjoint import disjoint_pair


def fabric_of(links: list[tuple[str, str]]) -> Fabric:
    fabric = Fabric()
    names = sorted({name for link in links for name in link})
    dpid = {name: index + 1 for index, name in enumerate(names)}
    for name in names:
        fabric.add_switch(Switch(dpid[name], name))
    ports: dict[str, int] = {}
    for a, b in links:
        ports[a], ports[b] = ports.get(a, 0) + 1, ports.get(b, 0) + 1
        fabric.add_link((dpid[a], ports[a]), (dpid[b], ports[b]))
    return fabric


def crossed(path: tuple[str, ...]) -> set[frozenset[str]]:
    return {frozenset(pair) for pair in zip(path, path[1:], strict=False)}


@pytest.mark.parametrize(("source", "target"), [("e1", "e8"), ("e1", "e2"), ("e3", "e6")])
def test_in_a_fat_tree_the_two_paths_share_nothing_but_their_ends(source: str, target: str) -> None:
    first, second = disjoint_pair(fat_tree(4).to_fabric(), source, target).paths
    assert first[0] == second[0] == source and first[-1] == second[-1] == target
    assert not set(first[1:-1]) & set(second[1:-1]) and not crossed(first) & crossed(second)


def test_the_pair_is_as_short_as_a_disjoint_pair_can_be() -> None:
    pair = disjoint_pair(tsn_fig1().to_fabric(), "s1", "s5")
    assert sorted(len(path) for path in pair.paths) == [3, 4]


def test_a_switch_every_way_crosses_is_shared_and_named_but_no_link_is() -> None:
    # Two ways s -> m (through a or b), one switch m, two ways m -> t (through c or d).
    fabric = fabric_of([("s", "a"), ("s", "b"), ("a", "m"), ("b", "m"), ("m", "c"), ("m", "d"), ("c", "t"),
                        ("d", "t")])
    pair = disjoint_pair(fabric, "s", "t")
    assert pair.shared_switches == ("m",) and not crossed(pair.paths[0]) & crossed(pair.paths[1])


def test_a_link_every_way_crosses_is_refused_by_name() -> None:
    fabric = fabric_of([("s", "a"), ("s", "b"), ("a", "m"), ("b", "m"), ("m", "n"), ("n", "t")])
    with pytest.raises(RoutingError, match="no two paths from s to t share no link"):
        disjoint_pair(fabric, "s", "t")


def test_unknown_or_identical_ends_are_refused_by_name() -> None:
    fabric = tsn_fig1().to_fabric()
    with pytest.raises(RoutingError, match="source: 'x' is not a switch"):
        disjoint_pair(fabric, "x", "s5")
    with pytest.raises(RoutingError, match="both on s1"):
        disjoint_pair(fabric, "s1", "s1")
