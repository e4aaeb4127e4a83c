"""Per-stream filtering and policing (IEEE 802.1Qci) for the admitted streams, decided at their ingress edge.

Every admitted stream gets, on the edge switch port its talker sends into, one stream filter (its frames picked
by 802.1CB IP stream identification: addresses, UDP ports, the time-triggered priority), one stream gate and one
flow meter, all under the stream's handle:

- the gate opens only in the stream's own slots of the schedule, with the same base time and cycle as the port
  gates (plus ``tolerance_ns`` either side for the clocks' disagreement), so a talker that sends at other times is
  cut at the edge and not in every queue it shares;
- the meter lets through the stream's reserved rate: one frame of its size per period, counted as the meter counts
  it (MAC header with its tag and FCS, MEF 10.3's service frame), with a bucket of ``burst_frames`` frames so a
  frame sent late followed by one on time is not taken for an excess;
- the filter's maximum SDU is the stream's frame size: a larger frame is dropped and counted.

Pure: the plan is data for the renderers (the YANG document a bridge takes, Linux ``tc``'s actions, the XDP edge's
map entries).

Examples
--------
>>> from srfabric.tsn.model.network import Stream
>>> from srfabric.tsn.model.schedule import Assignment
>>> cam = Stream("cam", "h1", "h3", period_ns=2_000_000, size_bytes=200)
>>> plan = protection(7, cam, Assignment("cam", 3, ("h1", "s1", "s2", "h3"), phase=1),
...                   Timing(slot_ns=27_036, base_period_ns=1_000_000, cycles=4, base_time_ns=0),
...                   Identity("10.0.0.1", "10.0.0.3", udp_dst=5001))
>>> plan.bridge, plan.talker, plan.max_sdu_bytes
('s1', 'h1', 200)
>>> plan.gate.open_windows()  # slot 3 of cycles 1 and 3 of the four-period hyperperiod
[(1081108, 1108144), (3081108, 3108144)]
>>> plan.meter  # 222 octets every 2 ms: 888 kbit/s, a bucket of two frames
FlowMeter(cir_bps=888000, cbs_bytes=444)
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from srfabric.errors import ModelError
from srfabric.tsn.model.network import Stream
from srfabric.tsn.model.schedule import Assignment

METERED_OVERHEAD_BYTES = 22  # MAC addresses, 802.1Q tag and EtherType (18) and FCS (4): what a meter counts
DEFAULT_BURST_FRAMES = 2
TT_PRIORITY = 7  # the PCP of time-triggered frames (as the port gates' priority map)
MAX_TOLERANCE_NS = 1_000_000  # a wider margin than 1 ms would open most cycles: refused, not guessed
U32 = 2**32 - 1


@dataclass(frozen=True)
class Identity:
    """How the edge picks a stream's frames (802.1CB IP stream identification, 6.8)."""

    ipv4_source: str
    ipv4_destination: str
    udp_src: int | None = None
    udp_dst: int | None = None
    destination_mac: str | None = None

    def __post_init__(self) -> None:
        for name in ("udp_src", "udp_dst"):
            port = getattr(self, name)
            if port is not None and not 0 <= port <= 65535:
                raise ModelError(name, f"must be in 0..65535, got {port}")


@dataclass(frozen=True)
class GateInterval:
    """One entry of a stream gate's list: open or closed for ``duration_ns``."""

    open: bool
    duration_ns: int


@dataclass(frozen=True)
class StreamGate:
    """A stream gate's list over its cycle, from ``base_time_ns`` (TAI)."""

    cycle_ns: int
    base_time_ns: int
    intervals: tuple[GateInterval, ...]

    def open_windows(self) -> list[tuple[int, int]]:
        """The open spans (start, end) within one cycle."""
        spans, at = [], 0
        for interval in self.intervals:
            if interval.open:
                spans.append((at, at + interval.duration_ns))
            at += interval.duration_ns
        return spans

    def is_open(self, time_ns: int) -> bool:
        """Whether the gate is open at TAI ``time_ns`` (closed before the base time, as a list not yet begun).

        >>> gate = StreamGate(1000, 5000, (GateInterval(False, 100), GateInterval(True, 50), GateInterval(False, 850)))
        >>> [gate.is_open(t) for t in (4120, 5099, 5100, 6149, 6150)]
        [False, False, True, True, False]
        """
        if time_ns < self.base_time_ns:
            return False
        at = (time_ns - self.base_time_ns) % self.cycle_ns
        return any(start <= at < end for start, end in self.open_windows())


@dataclass(frozen=True)
class FlowMeter:
    """A single-rate meter: ``cir_bps`` committed, ``cbs_bytes`` of bucket; anything over is dropped (red)."""

    cir_bps: int
    cbs_bytes: int


@dataclass(frozen=True)
class Timing:
    """The schedule's time grid, as the port gates run it."""

    slot_ns: int
    base_period_ns: int
    cycles: int  # base periods in one gate cycle (the hyperperiod)
    base_time_ns: int
    tolerance_ns: int = 0
    burst_frames: int = DEFAULT_BURST_FRAMES

    def __post_init__(self) -> None:
        if not 0 <= self.tolerance_ns <= MAX_TOLERANCE_NS:
            raise ModelError("tolerance_ns", f"must be in 0..{MAX_TOLERANCE_NS}, got {self.tolerance_ns}")
        if not 1 <= self.burst_frames <= 64:
            raise ModelError("burst_frames", f"must be in 1..64, got {self.burst_frames}")
        if self.cycles * self.base_period_ns > U32:
            raise ModelError("cycle_ns", f"{self.cycles * self.base_period_ns} is over the 32-bit interval a stream "
                                         f"gate's list holds")

    @property
    def cycle_ns(self) -> int:
        return self.cycles * self.base_period_ns


@dataclass(frozen=True)
class StreamProtection:
    """What the ingress edge holds for one admitted stream, under one handle (filter, gate and meter alike)."""

    handle: int
    stream: str
    bridge: str  # the edge switch
    talker: str  # the node on the port the frames come in by
    identity: Identity
    priority: int | None  # None: any priority (the wildcard)
    max_sdu_bytes: int
    gate: StreamGate
    meter: FlowMeter


def flow_meter(stream: Stream, burst_frames: int = DEFAULT_BURST_FRAMES) -> FlowMeter:
    """The stream's reservation as a meter: one frame per period, rounded up to a whole bit per second.

    >>> flow_meter(Stream("f", "a", "b", period_ns=1_000_000, size_bytes=1478))
    FlowMeter(cir_bps=12000000, cbs_bytes=3000)
    """
    frame = stream.size_bytes + METERED_OVERHEAD_BYTES
    return FlowMeter(math.ceil(frame * 8 * 1_000_000_000 / stream.period_ns), frame * burst_frames)


def stream_gate(windows: Iterable[tuple[int, int]], cycle_ns: int, base_time_ns: int) -> StreamGate:
    """A gate open in ``windows`` (start, end; taken modulo the cycle, so a margin may wrap round) and closed
    elsewhere, adjacent spans merged.

    >>> stream_gate([(-10, 20), (500, 600), (590, 650)], 1000, 0).intervals  # doctest: +NORMALIZE_WHITESPACE
    (GateInterval(open=True, duration_ns=20), GateInterval(open=False, duration_ns=480),
     GateInterval(open=True, duration_ns=150), GateInterval(open=False, duration_ns=340),
     GateInterval(open=True, duration_ns=10))
    """
    spans: list[tuple[int, int]] = []
    for start, end in windows:
        if end - start >= cycle_ns:
            return StreamGate(cycle_ns, base_time_ns, (GateInterval(True, cycle_ns),))
        start, end = start % cycle_ns, start % cycle_ns + (end - start)
        spans += [(start, min(end, cycle_ns))] + ([(0, end - cycle_ns)] if end > cycle_ns else [])
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    intervals, at = [], 0
    for start, end in merged:
        if start > at:
            intervals.append(GateInterval(False, start - at))
        intervals.append(GateInterval(True, end - start))
        at = end
    if at < cycle_ns:
        intervals.append(GateInterval(False, cycle_ns - at))
    return StreamGate(cycle_ns, base_time_ns, tuple(intervals))


def protection(handle: int, stream: Stream, assignment: Assignment, timing: Timing, identity: Identity,
               priority: int | None = TT_PRIORITY) -> StreamProtection:
    """The filter, gate and meter of one admitted stream, at the first switch of its path (talker, switches...)."""
    if not 0 <= handle <= U32:
        raise ModelError("handle", f"must be in 0..{U32}, got {handle}")
    if len(assignment.path) < 2:
        raise ModelError("path", f"stream {stream.id}: needs the talker and its edge switch")
    multiple = stream.period_ns // timing.base_period_ns
    if multiple < 1 or timing.cycles % multiple:
        raise ModelError("period_ns", f"stream {stream.id}: {stream.period_ns} does not divide the "
                                      f"{timing.cycle_ns} ns cycle in whole base periods")
    margin = timing.tolerance_ns
    windows = []
    for cycle in range(assignment.phase, timing.cycles, multiple):
        start = cycle * timing.base_period_ns + assignment.slot * timing.slot_ns
        windows.append((start - margin, start + timing.slot_ns + margin))
    return StreamProtection(handle, stream.id, assignment.path[1], assignment.path[0], identity, priority,
                            stream.size_bytes, stream_gate(windows, timing.cycle_ns, timing.base_time_ns),
                            flow_meter(stream, timing.burst_frames))
