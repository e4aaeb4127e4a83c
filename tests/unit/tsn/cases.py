"""Small hand-made networks whose optimum is known."""

from __future__ import annotations

from srfabric.tsn.model.network import Network, Stream
from srfabric.tsn.model.slots import Problem


def dumbbell(flows: int = 5) -> Network:
    """The TSSDN benchmark (Fig. 2): hosts A1..An on S1, B1..Bn on S2, one S1-S2 link."""
    nodes = [("S1", "switch"), ("S2", "switch")]
    nodes += [(f"A{i}", "host") for i in range(1, flows + 1)] + [(f"B{i}", "host") for i in range(1, flows + 1)]
    links = [("S1", "S2")] + [(f"A{i}", "S1") for i in range(1, flows + 1)]
    links += [(f"B{i}", "S2") for i in range(1, flows + 1)]
    return Network.build(nodes, links)


def dumbbell_problem(slots: int, flows: int = 5) -> Problem:
    streams = [Stream(f"F{i}", f"A{i}", f"B{i}") for i in range(1, flows + 1)]
    return Problem.slotted(dumbbell(flows), streams, slots)


def detour() -> Network:
    """S1 and S2 joined directly and through S3: the second flow needs the longer way."""
    nodes = [("S1", "switch"), ("S2", "switch"), ("S3", "switch"), ("a1", "host"), ("a2", "host"),
             ("b1", "host"), ("b2", "host")]
    links = [("S1", "S2"), ("S1", "S3"), ("S3", "S2"), ("a1", "S1"), ("a2", "S1"), ("b1", "S2"), ("b2", "S2")]
    return Network.build(nodes, links)


def detour_problem() -> Problem:
    return Problem.slotted(detour(), [Stream("f1", "a1", "b1"), Stream("f2", "a2", "b2")], slots=1)
