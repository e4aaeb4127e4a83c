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
from srfabric.tsn.model import Network, Stream, check_streams

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

    def frame_ns(self, size_bytes: int, rate_bps: int) -> int:
        """Serialisation time of one frame with ``size_bytes`` of payload."""
        return math.ceil((size_bytes + self.overhead_bytes) * 8 * 1_000_000_000 / rate_bps)

    def slot_ns(self, size_bytes: int, rate_bps: int, t_hop_ns: int) -> int:
        """Slot length for the given frame, slowest link and per-hop delay."""
        frame = self.frame_ns(size_bytes, rate_bps)
        if self.store_and_forward:
            return self.diameter * (frame + t_hop_ns)
        return frame + self.diameter * t_hop_ns


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
    if base_period_ns is None:
        base_period_ns = math.gcd(*(stream.period_ns for stream in streams))
    elif base_period_ns <= 0:
        raise ModelError("base_period_ns", f"must be > 0, got {base_period_ns}")
    for index, stream in enumerate(streams):
        if stream.period_ns % base_period_ns:
            raise ModelError(
                f"flows[{index}].period_ns", f"{stream.period_ns} is not a multiple of the base period {base_period_ns}"
            )
    if not network.links:
        raise ModelError("links", "the topology has no links")
    rate = min(link.rate_bps for link in network.links)
    t_hop = max(link.t_proc_ns + link.t_prop_ns for link in network.links)
    needed_ns = model.slot_ns(max(stream.size_bytes for stream in streams), rate, t_hop)
    if slots is None:
        slots = base_period_ns // needed_ns
        if slots < 1:
            raise ModelError(
                "base_period_ns",
                f"{base_period_ns} ns is shorter than one slot ({needed_ns} ns for {model.diameter} hops)",
            )
        slot_ns = needed_ns
    else:
        if slots < 1:
            raise ModelError("slots", f"must be >= 1, got {slots}")
        slot_ns = base_period_ns // slots
        if slot_ns < needed_ns:
            raise ModelError(
                "slots",
                f"{slots} slots of {slot_ns} ns do not fit a frame across {model.diameter} hops "
                f"({needed_ns} ns); at most {base_period_ns // needed_ns} slots fit in {base_period_ns} ns",
            )
    for index, stream in enumerate(streams):
        # Within its slot a frame may take up to the slot model's worst case to arrive.
        if stream.deadline_ns is not None and stream.deadline_ns < needed_ns:
            raise ModelError(
                f"flows[{index}].deadline_ns",
                f"{stream.deadline_ns} ns is shorter than the {needed_ns} ns a frame may need across "
                f"{model.diameter} hops",
            )
    multiples = tuple(stream.period_ns // base_period_ns if phases else 1 for stream in streams)
    problem = Problem(network, tuple(streams), slots, slot_ns, base_period_ns, multiples, model.diameter)
    if problem.cycles > max_cycles:
        raise ModelError(
            "flows",
            f"the periods make a hyperperiod of {problem.cycles} base periods, over the limit of {max_cycles}; "
            "turn phases off or raise max_cycles",
        )
    return problem
