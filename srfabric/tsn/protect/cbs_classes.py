"""Streams of the credit-based shaper's classes (802.1Qav, "SR classes" A and B) and what each port's schedule
leaves them: the input of ``cbs_bound``. Pure data.

A class stream asks for no slot: its frames wait in its class's queue at each egress port, which the
credit-based shaper drains at the class's reserved rate (its idle slope), between the time-triggered windows.

Examples
--------
>>> stream = ClassStream("cam1", "A", ("h1", "s1", "h2"), interval_ns=125_000, max_frame_bytes=200)
>>> stream.wire_bits, round(stream.rate_bps)
(1936, 15488000)
>>> ClassStream("x", "C", ("h1", "s1", "h2"), 125_000, 200)
Traceback (most recent call last):
...
srfabric.tsn.protect.cbs_classes.Refusal: priority: class 'C' is not an SR class (A or B); failure code 13
"""

from __future__ import annotations

from dataclasses import dataclass

from srfabric.errors import ModelError
from srfabric.model.stream import SR_CLASS_PRIORITY
from srfabric.tsn.gates.gcl import PortGcl

SR_CLASSES = ("A", "B")  # A ranks above B; both above best effort, below the time-triggered windows
CLASS_PRIORITY = dict(SR_CLASS_PRIORITY)
# What a frame costs on the wire beyond its MaxFrameSize (802.1Qcc's: the MAC client data): MAC header 14,
# VLAN tag 4, FCS 4, preamble and start delimiter 8, interframe gap 12 (802.1Q 34.4's per-frame overhead).
FRAME_OVERHEAD_BYTES = 42
MIN_FRAME_BYTES = 42  # the shortest MAC client data of a tagged frame (padding)
MAX_FRAME_BYTES = 1500  # Ethernet's MTU: a longer frame does not fit the medium

# Qcc's failure codes (802.1Q-2022 Table 46-15) that a refused class stream carries.
INSUFFICIENT_BANDWIDTH = 1
INSUFFICIENT_CLASS_BANDWIDTH = 3
LATENCY_CHANGED = 7  # admitting it would break a bound already promised to another stream
NOT_AN_SR_CLASS = 13
FRAME_TOO_LARGE = 14
MAX_LATENCY_EXCEEDED = 21


class Refusal(ModelError):
    """A class stream that cannot be admitted: the field, why, and Qcc's failure code."""

    def __init__(self, field: str, message: str, code: int) -> None:
        super().__init__(field, f"{message}; failure code {code}")
        self.code = code


def wire_bits(max_frame_bytes: int) -> int:
    """A frame of ``max_frame_bytes`` of client data as the link sends it, overhead and padding included.

    >>> wire_bits(1500), wire_bits(10)
    (12336, 672)
    """
    return (max(max_frame_bytes, MIN_FRAME_BYTES) + FRAME_OVERHEAD_BYTES) * 8


@dataclass(frozen=True)
class ClassStream:
    """One frame of at most ``max_frame_bytes`` every ``interval_ns`` along ``route`` (nodes, talker first), in SR
    class ``sr_class``; ``max_latency_ns``: what its listener may wait at most (None: any bound will do)."""

    id: str
    sr_class: str
    route: tuple[str, ...]
    interval_ns: int
    max_frame_bytes: int
    max_latency_ns: int | None = None

    def __post_init__(self) -> None:
        if self.sr_class not in SR_CLASSES:
            raise Refusal("priority", f"class {self.sr_class!r} is not an SR class (A or B)", NOT_AN_SR_CLASS)
        if not 0 < self.max_frame_bytes <= MAX_FRAME_BYTES:
            raise Refusal("size_bytes", f"{self.max_frame_bytes} bytes: a frame holds 1..{MAX_FRAME_BYTES}",
                          FRAME_TOO_LARGE)
        if self.interval_ns <= 0:
            raise ModelError("period_ns", f"must be > 0, got {self.interval_ns}")
        if len(self.route) < 2:
            raise ModelError("route", f"needs the talker and the listener at least, got {list(self.route)}")
        if self.max_latency_ns is not None and self.max_latency_ns <= 0:
            raise ModelError("max_latency_ns", f"must be > 0, got {self.max_latency_ns}")

    @property
    def wire_bits(self) -> int:
        return wire_bits(self.max_frame_bytes)

    @property
    def rate_bps(self) -> float:
        """What it reserves: one frame, overhead included, per interval."""
        return self.wire_bits * 1e9 / self.interval_ns

    def edges(self) -> list[tuple[str, str]]:
        """The directed links it crosses, each an egress port of the first node."""
        return list(zip(self.route, self.route[1:], strict=False))


@dataclass(frozen=True)
class PortWindows:
    """What the time-triggered schedule takes of one egress port: in every ``cycle_ns``, ``windows`` windows of
    ``closed_ns`` in all during which the classes' gates are closed (scheduled traffic alone may send)."""

    cycle_ns: int
    closed_ns: int
    windows: int

    def __post_init__(self) -> None:
        if self.cycle_ns <= 0 or not 0 <= self.closed_ns <= self.cycle_ns or self.windows < 0 \
                or (self.closed_ns > 0) != (self.windows > 0):
            raise ModelError("windows", f"a cycle of {self.cycle_ns} ns cannot hold {self.windows} windows of "
                                        f"{self.closed_ns} ns")


OPEN = PortWindows(1, 0, 0)  # a port without time-triggered windows


def port_windows(gcl: PortGcl, traffic_class: int) -> PortWindows:
    """What a port's gate control list takes from the SR class queued in ``traffic_class``: the entries that do
    not open its gate, counted as windows where they run on (a run across the cycle's end is one window).

    >>> from srfabric.tsn.gates.gcl import GateEntry
    >>> gcl = PortGcl("s1", "s2", "s1-eth2", 1000, 0, [GateEntry(2, 100), GateEntry(9, 700), GateEntry(0, 30),
    ...                                                  GateEntry(2, 70), GateEntry(2, 100)])
    >>> port_windows(gcl, 3)  # class 3's gate (bit 3) is open in the second entry only
    PortWindows(cycle_ns=1000, closed_ns=300, windows=1)
    """
    gate = 1 << traffic_class
    shut = [not entry.mask & gate for entry in gcl.entries]
    closed = sum(entry.duration_ns for entry, held in zip(gcl.entries, shut, strict=True) if held)
    runs = sum(1 for index, held in enumerate(shut) if held and not (index and shut[index - 1]))
    if runs > 1 and shut[0] and shut[-1]:
        runs -= 1
    return PortWindows(gcl.cycle_ns, closed, runs)


@dataclass(frozen=True)
class ShaperLimits:
    """``reserved_fraction``: the share of a port the SR classes may reserve, once scaled to the time the gates
    leave open (802.1Q's deltaBandwidth; 75 % by default, 34.3.1); ``best_effort_frame_bytes``: the longest
    frame of lower priority, which a class frame may have to wait for."""

    reserved_fraction: float = 0.75
    best_effort_frame_bytes: int = MAX_FRAME_BYTES
