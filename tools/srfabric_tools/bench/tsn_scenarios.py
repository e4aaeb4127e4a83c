"""The scenario sets of the TSSDN evaluation (section 5.2, Fig. 4c-4f), seeded and reproducible."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from srfabric.tsn.formats.generators import barabasi_albert, erdos_renyi, random_regular, random_streams, waxman
from srfabric.tsn.model.network import Network
from srfabric.tsn.model.slots import Problem

FLOW_COUNTS = tuple(range(20, 111, 10))


@dataclass(frozen=True)
class Scenario:
    figure: str
    topology: str
    flows: int
    slots: int
    links: int
    problem: Problem


def quality_topologies(seed: int = 0) -> list[tuple[str, Network]]:
    """Eight 24-host, 6-switch topologies: 3 random regular, 2 Erdős–Rényi, 3 Barabási–Albert."""
    return [
        ("rrg-3", random_regular(6, 24, degree=3, seed=seed)),
        ("rrg-3b", random_regular(6, 24, degree=3, seed=seed + 1)),
        ("rrg-4", random_regular(6, 24, degree=4, seed=seed)),
        ("er-38", erdos_renyi(6, 24, links=38, seed=seed)),
        ("er-36", erdos_renyi(6, 24, links=36, seed=seed)),
        ("ba-1", barabasi_albert(6, 24, attach=1, seed=seed)),
        ("ba-2", barabasi_albert(6, 24, attach=2, seed=seed)),
        ("ba-3", barabasi_albert(6, 24, attach=3, seed=seed)),
    ]


def fig4c(seed: int = 0, flow_counts: tuple[int, ...] = FLOW_COUNTS, per_count: int = 2) -> Iterator[Scenario]:
    """160 scenarios: 8 topologies x 10 flow counts (20..110) x 2 draws, with 3, 4 or 5 slots in turn."""
    index = 0
    for name, network in quality_topologies(seed):
        for flows in flow_counts:
            for draw in range(per_count):
                slots = 3 + index % 3
                streams = random_streams(network, flows, seed=seed * 100_000 + index)
                yield Scenario("4c", name, flows, slots, len(network.links), Problem.slotted(network, streams, slots))
                index += 1
                del draw


def fig4d(seed: int = 0, flow_counts: tuple[int, ...] = FLOW_COUNTS) -> Iterator[Scenario]:
    """Runtime vs flows: the ER topology with 24 hosts, 6 switches and 38 links, 5 slots."""
    network = erdos_renyi(6, 24, links=38, seed=seed)
    for flows in flow_counts:
        streams = random_streams(network, flows, seed=seed + flows)
        yield Scenario("4d", "er-38", flows, 5, len(network.links), Problem.slotted(network, streams, 5))


def fig4e(
    seed: int = 0, slot_counts: tuple[int, ...] = (5, 10, 20, 30, 40, 50), flows: int = 300
) -> Iterator[Scenario]:
    """Runtime vs slots: Waxman, 200 hosts, 10 switches, 256 links, 300 flows."""
    network = waxman(10, 200, links=256, seed=seed)
    streams = random_streams(network, flows, seed=seed)
    for slots in slot_counts:
        yield Scenario("4e", "waxman-256", flows, slots, len(network.links), Problem.slotted(network, streams, slots))


FIG4F_SIZES = ((4, 24, 30), (6, 50, 64), (8, 100, 128), (10, 150, 192), (10, 200, 256))


def fig4f(seed: int = 0, sizes: tuple[tuple[int, int, int], ...] = FIG4F_SIZES, flows: int = 100) -> Iterator[Scenario]:
    """Runtime vs links: Waxman topologies of 30..256 links, 100 flows, 50 slots."""
    for switches, hosts, links in sizes:
        network = waxman(switches, hosts, links=links, seed=seed)
        streams = random_streams(network, flows, seed=seed)
        yield Scenario("4f", f"waxman-{links}", flows, 50, links, Problem.slotted(network, streams, 50))
