"""The slot model: how long a time slot is and how many fit into the base period.

A slot must be long enough for one frame of the largest stream to cross the
longest allowed path (TSSDN section 3.1). With cut-through switches (the
default) the frame is serialised once and every hop adds its processing and
propagation delay; with store-and-forward every hop serialises it again.

Examples
--------
>>> model = SlotModel()
>>> model.frame_ns(1500, 1_000_000_000)
12336
>>> model.slot_ns(1500, 1_000_000_000, t_hop_ns=1050)
20736
>>> 1_000_000 // 20736
48
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from srfabric.errors import ModelError
from srfabric.tsn.model.network import SWITCH, Network, Stream, check_streams

# Ethernet header with an 802.1Q tag (18), FCS (4), preamble and SFD (8), inter-frame gap (12).
WIRE_OVERHEAD_BYTES = 42
DEFAULT_DIAMETER = 8
MAX_CYCLES = 64


@dataclass(frozen=True)
class SlotModel:
    """Parameters of the slot length; every one can be overridden from the CLI."""

    diameter: int = DEFAULT_DIAMETER
    overhead_bytes: int = WIRE_OVERHEAD_BYTES
    store_and_forward: bool = False
    grid_ns: int = 1  # every slot boundary on this grid (tsnkit's simulator steps in 100 ns)

    def frame_ns(self, size_bytes: int, rate_bps: int) -> int:
        """Serialisation time of one frame with ``size_bytes`` of payload."""
        return math.ceil((size_bytes + self.overhead_bytes) * 8 * 1_000_000_000 / rate_bps)

    def latency_ns(self, size_bytes: int, rate_bps: int, t_hop_ns: int, hops: int) -> int:
        """From a frame's release to its last bit at the far end of ``hops`` links: store-and-forward
        serialises it again at every hop, cut-through once."""
        frame = self.frame_ns(size_bytes, rate_bps)
        return hops * (frame + t_hop_ns) if self.store_and_forward else frame + hops * t_hop_ns

    def slot_ns(self, size_bytes: int, rate_bps: int, t_hop_ns: int) -> int:
        """Slot length for the given frame, slowest link and per-hop delay: the latency across the diameter,
        rounded up to the grid.

        >>> SlotModel(store_and_forward=True, grid_ns=100).slot_ns(1500, 1_000_000_000, t_hop_ns=2000)
        114700
        """
        needed = self.latency_ns(size_bytes, rate_bps, t_hop_ns, self.diameter)
        return -(-needed // self.grid_ns) * self.grid_ns


@dataclass(frozen=True)
class Problem:
    """Everything a scheduler needs; ``multiples[i]`` is stream i's period in base periods.

    With phases off every multiple is 1: each stream owns its slot in every
    cycle, as in the paper. With phases on, a stream of multiple m uses its
    slot only in cycles ``c ≡ phase (mod m)``, and ``cycles`` (the hyperperiod
    in base periods) is the least common multiple of the multiples.
    """

    network: Network
    streams: tuple[Stream, ...]
    slots: int
    slot_ns: int
    base_period_ns: int
    multiples: tuple[int, ...]
    max_hops: int = DEFAULT_DIAMETER
    # How long a frame takes over a path (from ``plan``): the slot model, the slowest link and the longest
    # per-hop delay. Without them (``Problem.slotted``) the problem has no timing and deadlines are not checked.
    timing: SlotModel | None = None
    rate_bps: int = 0
    t_hop_ns: int = 0

    def latency_ns(self, stream: Stream, hops: int) -> int:
        """The most a frame of ``stream`` may take from its slot's start to arrival over ``hops`` links; 0 without
        timing.

        >>> from srfabric.tsn.model.network import Network
        >>> problem = Problem(Network({}), (), 1, 1, 1, (), timing=SlotModel(store_and_forward=True),
        ...                   rate_bps=1_000_000_000, t_hop_ns=2000)
        >>> problem.latency_ns(Stream("f", "a", "b", size_bytes=458), 3)  # 3 x (4000 ns on the wire + 2000)
        18000
        """
        if self.timing is None:
            return 0
        return self.timing.latency_ns(stream.size_bytes, self.rate_bps, self.t_hop_ns, hops)

    def hops_allowed(self, index: int) -> int:
        """The longest path, in links, on which stream ``index`` still meets its deadline (``max_hops`` at most)."""
        stream = self.streams[index]
        if stream.deadline_ns is None or self.timing is None:
            return self.max_hops
        hops = self.max_hops
        while hops > 0 and self.latency_ns(stream, hops) > stream.deadline_ns:
            hops -= 1
        return hops

    @property
    def cycles(self) -> int:
        return math.lcm(*self.multiples) if self.multiples else 1

    def cycles_used(self, stream: int, phase: int) -> range:
        """The cycles of the hyperperiod in which stream index ``stream`` sends at ``phase``."""
        return range(phase, self.cycles, self.multiples[stream])

    @classmethod
    def slotted(
        cls, network: Network, streams: Sequence[Stream], slots: int, max_hops: int = DEFAULT_DIAMETER
    ) -> Problem:
        """A problem with a given number of slots and no timing, as in the paper's evaluation."""
        check_streams(network, streams)
        if slots < 1:
            raise ModelError("slots", f"must be >= 1, got {slots}")
        return cls(network, tuple(streams), slots, 1, slots, (1,) * len(streams), max_hops)


def plan(
    network: Network,
    streams: Sequence[Stream],
    slots: int | None = None,
    base_period_ns: int | None = None,
    model: SlotModel | None = None,
    phases: bool = True,
    max_cycles: int = MAX_CYCLES,
) -> Problem:
    """Work out slot length, slot count and period multiples; errors name the field at fault."""
    model = model or SlotModel()
    network.validate()
    check_streams(network, streams)
    if not streams:
        raise ModelError("flows", "there are no flows to schedule")
    if model.diameter < 1:
        raise ModelError("diameter", f"must be >= 1, got {model.diameter}")
    if model.grid_ns < 1:
        raise ModelError("grid_ns", f"must be >= 1, got {model.grid_ns}")
    base_period_ns = _base_period(streams, base_period_ns, model)
    if not network.links:
        raise ModelError("links", "the topology has no links")
    rate = min(link.rate_bps for link in network.links)
    t_hop = max(link.t_proc_ns + link.t_prop_ns for link in network.links)
    needed_ns = model.slot_ns(max(stream.size_bytes for stream in streams), rate, t_hop)
    slots, slot_ns = _slot_grid(slots, base_period_ns, needed_ns, model)
    multiples = tuple(stream.period_ns // base_period_ns if phases else 1 for stream in streams)
    # A deadline its path cannot meet leaves that stream unscheduled, with the reason (``scheduler.schedule``).
    problem = Problem(network, tuple(streams), slots, slot_ns, base_period_ns, multiples, model.diameter, model, rate,
                      t_hop)
    if problem.cycles > max_cycles:
        raise ModelError(
            "flows",
            f"the periods make a hyperperiod of {problem.cycles} base periods, over the limit of {max_cycles}; "
            "turn phases off or raise max_cycles",
        )
    return problem


def _base_period(streams: Sequence[Stream], base_period_ns: int | None, model: SlotModel) -> int:
    """The base period asked for (else the gcd of the periods), on the grid, dividing every period."""
    if base_period_ns is None:
        base_period_ns = math.gcd(*(stream.period_ns for stream in streams))
    elif base_period_ns <= 0:
        raise ModelError("base_period_ns", f"must be > 0, got {base_period_ns}")
    if base_period_ns % model.grid_ns:
        raise ModelError("base_period_ns", f"{base_period_ns} ns is not a multiple of the {model.grid_ns} ns grid")
    for index, stream in enumerate(streams):
        if stream.period_ns % base_period_ns:
            raise ModelError(
                f"flows[{index}].period_ns", f"{stream.period_ns} is not a multiple of the base period {base_period_ns}"
            )
    return base_period_ns


def _slot_grid(slots: int | None, base_period_ns: int, needed_ns: int, model: SlotModel) -> tuple[int, int]:
    """(slots, slot length): as many slots of the needed length as fit, or the count asked for if each still
    holds a frame across the diameter."""
    if slots is None:
        if base_period_ns // needed_ns < 1:
            raise ModelError(
                "base_period_ns",
                f"{base_period_ns} ns is shorter than one slot ({needed_ns} ns for {model.diameter} hops)",
            )
        return base_period_ns // needed_ns, needed_ns
    if slots < 1:
        raise ModelError("slots", f"must be >= 1, got {slots}")
    slot_ns = base_period_ns // slots // model.grid_ns * model.grid_ns
    if slot_ns < needed_ns:
        raise ModelError(
            "slots",
            f"{slots} slots of {slot_ns} ns do not fit a frame across {model.diameter} hops "
            f"({needed_ns} ns on the {model.grid_ns} ns grid); at most {base_period_ns // needed_ns} slots fit in "
            f"{base_period_ns} ns",
        )
    return slots, slot_ns


def shortest_diameter(network: Network, streams: Sequence[Stream]) -> int:
    """The longest of the streams' shortest paths, in links (hosts never transit): the least diameter that
    lets every stream be routed, and what sizes the slot unless the user gives one.

    >>> net = Network.build([("h1", "host"), ("s1", "switch"), ("s2", "switch"), ("h2", "host")],
    ...                     [("h1", "s1"), ("s1", "s2"), ("s2", "h2")])
    >>> shortest_diameter(net, [Stream("f", "h1", "h2", 1_000_000, 100)])
    3
    """
    import networkx as nx

    check_streams(network, streams)
    graph, kinds = network.digraph(), network.kinds
    longest = 1
    for index, stream in enumerate(streams):
        ends = (stream.src, stream.dst)
        view = nx.subgraph_view(graph, filter_node=lambda n, ends=ends: n in ends or kinds[n] == SWITCH)
        try:
            longest = max(longest, nx.shortest_path_length(view, stream.src, stream.dst))
        except nx.NetworkXNoPath:
            raise ModelError(f"flows[{index}].dst", f"{stream.dst} cannot be reached from {stream.src}") from None
    return longest
