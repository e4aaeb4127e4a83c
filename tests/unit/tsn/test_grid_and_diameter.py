"""tsnkit's timing model: slot boundaries on its 100 ns grid, rounded up, and a diameter from the topology."""

from __future__ import annotations

import pytest

from srfabric.errors import ModelError
from srfabric.tsn.model.network import Link, Network, Stream
from srfabric.tsn.model.slots import SlotModel, plan, shortest_diameter


def line_network(switches: int) -> Network:
    nodes = [("h1", "host"), *((f"s{i}", "switch") for i in range(switches)), ("h2", "host")]
    names = [name for name, _ in nodes]
    return Network.build(nodes, list(zip(names, names[1:], strict=False)))


def test_every_slot_boundary_is_on_the_grid_and_never_shorter_than_needed() -> None:
    network, streams = line_network(3), [Stream("f", "h1", "h2", 1_000_000, 1500)]
    exact = plan(network, streams, model=SlotModel(diameter=4, store_and_forward=True))
    gridded = plan(network, streams, model=SlotModel(diameter=4, store_and_forward=True, grid_ns=100))
    assert gridded.slot_ns % 100 == 0 and exact.slot_ns <= gridded.slot_ns < exact.slot_ns + 100
    # With the number of slots given, the slot is cut down to the grid (and refused if too short then).
    given = plan(network, streams, slots=3, model=SlotModel(diameter=4, grid_ns=100))
    assert given.slot_ns == 333_300
    with pytest.raises(ModelError, match="base_period_ns: 1000050 ns is not a multiple of the 100 ns grid"):
        plan(network, streams, base_period_ns=1_000_050, model=SlotModel(diameter=4, grid_ns=100))


def test_diameter_is_the_longest_shortest_path_of_the_streams() -> None:
    network = line_network(5)  # h1 - s0 - ... - s4 - h2: 6 links end to end
    assert shortest_diameter(network, [Stream("f", "h1", "h2")]) == 6
    network.kinds["h3"] = "host"
    network.add_link(Link("h3", "s1"))  # a host beside the second switch
    network.validate()
    assert shortest_diameter(network, [Stream("f", "h1", "h3"), Stream("g", "h3", "h2")]) == 5
    with pytest.raises(ModelError, match=r"flows\[0\]"):
        shortest_diameter(network, [Stream("f", "h1", "nowhere")])
