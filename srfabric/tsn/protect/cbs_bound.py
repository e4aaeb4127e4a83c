"""Worst-case latency bounds of credit-based-shaped streams beside time-triggered windows (802.1Qav with 802.1Qbv).
Pure.

The analysis is network calculus's total flow analysis with rate-latency service curves (Le Boudec and Thiran,
*Network Calculus*, 2001, ch. 1-2). At each egress port a class's queue is served at its idle slope after a
latency of its highest credit over that slope: the credit-based shaper's rate-latency service curve (Mohammadpour,
Stai, Mohiuddin and Le Boudec, "Latency and backlog bounds in time-sensitive networking with credit based shapers
and asynchronous traffic shaping", ITC 30, 2018), with the highest credit of 802.1Q Annex L (hiCredit: what the
class earns while a lower frame, and for class B class A's frames, hold the port). The time-triggered windows are
worked in as 802.1Q 8.6.8.2 has the shaper behave beside gates: no credit is earned while the class's gate is
closed, and the idle slope is scaled by the cycle over the time the gates stay open. A window also costs a guard
band (the longest frame that may not start before it). Where the windows sit in the cycle is not used: any span of the
cycle's length holds them all, so a span of ``t`` has at least ``t * open / cycle - closed`` open time; that makes
the bound safe for every arrangement, and looser than one that follows the schedule.

Per port p and class X, with ``R`` the class's reserved rate there (the sum of its streams' rates) and ``B`` the
sum of their bursts on arrival: delay ``D = theta + B / R``, ``theta = (closed + T) * cycle / open``,
``T = hiCredit / idleSlope``. A stream's burst grows by its rate times ``D`` at each port it crosses; ports that
feed each other are iterated to the fixed point, which bounds the delays when it exists (Thomas, Le Boudec and
Mifdaoui, "On cyclic dependencies and regulators in time-sensitive networking", RTSS 2019: fixed-point total
flow analysis). With each class served at exactly its reserved rate, that is
what makes the bound loose on long routes, each port adding about what the ones before it added. A stream's
bound is the sum over its route of ``D``, each link's propagation and each switch's processing time (the TSN
model's ``t_prop_ns`` and ``t_proc_ns``).

Examples
--------
>>> from srfabric.tsn.model.network import Network
>>> net = Network.build([("h1", "host"), ("s1", "switch"), ("h2", "host")], [("h1", "s1"), ("s1", "h2")])
>>> cam = ClassStream("cam", "A", ("h1", "s1", "h2"), interval_ns=125_000, max_frame_bytes=200)
>>> result = analyse(net, [cam])
>>> round(result.bound_ns["cam"])  # talker's port, then s1's (its burst grown), and s1's processing
418916
>>> round(result.ports[("s1", "h2")].idle_slope_bps["A"])
15488000
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from srfabric.errors import ModelError
from srfabric.tsn.model.network import Link, Network
from srfabric.tsn.protect.cbs_classes import (
    INSUFFICIENT_CLASS_BANDWIDTH,
    MAX_LATENCY_EXCEEDED,
    OPEN,
    SR_CLASSES,
    ClassStream,
    PortWindows,
    Refusal,
    ShaperLimits,
    wire_bits,
)

ROUNDS = 200  # fixed-point rounds for ports that feed each other; a load that has not settled by then is refused
SETTLED_NS = 0.01
NO_BOUND_NS = 1e12  # a delay past this (1000 s) is taken as none: the load does not fit
Edge = tuple[str, str]


@dataclass
class PortShare:
    """One egress port's share for the classes: reserved rates, the shaper's settings and the class delays."""

    rate_bps: float
    reserved_bps: dict[str, float]  # operIdleSlope per class: the sum of its streams' rates
    idle_slope_bps: dict[str, float]  # as the shaper runs it while the gates are open (scaled to the open time)
    hi_credit_bits: dict[str, float]
    lo_credit_bits: dict[str, float]
    latency_ns: dict[str, float]  # theta: the service curve's latency, windows included
    cycle_ns: int = 1
    windows_ns: int = 0  # the time-triggered windows per cycle, guard bands left out
    delay_ns: dict[str, float] = field(default_factory=dict)  # D, once the bursts are known


@dataclass
class Analysis:
    """Each port's share and each stream's bound (ns)."""

    ports: dict[Edge, PortShare]
    bound_ns: dict[str, float]


def _links(net: Network) -> dict[Edge, Link]:
    out: dict[Edge, Link] = {}
    for link in net.links:
        out[link.a, link.b] = out[link.b, link.a] = link
    return out


def port_share(edge: Edge, link: Link, streams: Sequence[ClassStream], windows: PortWindows,
               limits: ShaperLimits, name: str) -> PortShare:
    """The shaper of ``edge`` for ``streams`` (those that cross it); ``Refusal`` when they do not fit."""
    rate = float(link.rate_bps)
    reserved = {cls: sum(s.rate_bps for s in streams if s.sr_class == cls) for cls in SR_CLASSES}
    longest = {cls: max((s.wire_bits for s in streams if s.sr_class == cls), default=0) for cls in SR_CLASSES}
    best_effort = wire_bits(limits.best_effort_frame_bytes)
    guard_ns = max(best_effort, *longest.values()) * 1e9 / rate
    closed_ns = min(float(windows.cycle_ns), windows.closed_ns + windows.windows * guard_ns) if windows.windows \
        else 0.0
    open_ns = windows.cycle_ns - closed_ns
    if open_ns <= 0:
        raise Refusal("path", f"{name}: its time-triggered windows and their guard bands leave no time for SR "
                              "classes", INSUFFICIENT_CLASS_BANDWIDTH)
    scale = windows.cycle_ns / open_ns if windows.windows else 1.0
    slope = {cls: reserved[cls] * scale for cls in SR_CLASSES}
    if sum(slope.values()) > limits.reserved_fraction * rate:
        raise Refusal("path", f"{name}: SR classes would need {sum(slope.values()) / 1e6:.3f} Mbit/s while its "
                              f"gates are open, over {limits.reserved_fraction:.0%} of {rate / 1e6:g} Mbit/s",
                      INSUFFICIENT_CLASS_BANDWIDTH)
    # 802.1Q Annex L: A may wait for one lower frame (B's or best effort's); B for best effort's, and for A's
    # sending at line rate until A's credit is spent. Each may also wait, earning credit, for a frame of its own
    # that cannot end before the next window (as much as its longest frame takes), and A's credit earned so
    # lengthens B's wait for A in turn.
    lower_a = max(longest["B"], best_effort)
    hi = {"A": slope["A"] * (lower_a + longest["A"]) / rate,
          "B": slope["B"] * ((best_effort + longest["B"] + longest["A"]) / (rate - slope["A"]) + longest["A"] / rate)}
    lo = {cls: longest[cls] * (rate - slope[cls]) / rate for cls in SR_CLASSES}  # |loCredit|, for the shaper's settings
    latency = {cls: ((closed_ns + hi[cls] * 1e9 / slope[cls]) * scale if slope[cls] else 0.0) for cls in SR_CLASSES}
    return PortShare(rate, reserved, slope, hi, {cls: -lo[cls] for cls in SR_CLASSES}, latency,
                     cycle_ns=windows.cycle_ns, windows_ns=windows.closed_ns if windows.windows else 0)


def analyse(net: Network, streams: Sequence[ClassStream], windows: Mapping[Edge, PortWindows] | None = None,
            limits: ShaperLimits | None = None) -> Analysis:
    """Every port's share and every stream's bound; ``Refusal`` naming the port or stream that does not fit,
    ``ModelError`` for a route that leaves the network."""
    limits, windows = limits or ShaperLimits(), windows or {}
    links = _links(net)
    crossing: dict[Edge, list[ClassStream]] = {}
    for stream in streams:
        for index, edge in enumerate(stream.edges()):
            if edge not in links:
                raise ModelError(f"streams[{stream.id}].route[{index}]", f"{edge[0]} and {edge[1]} are not linked")
            crossing.setdefault(edge, []).append(stream)
    ports = {edge: port_share(edge, links[edge], crossing[edge], windows.get(edge, OPEN), limits,
                              net.interface(*edge)) for edge in crossing}
    _settle(ports, streams)
    bound = {s.id: sum(ports[e].delay_ns[s.sr_class] + links[e].t_prop_ns for e in s.edges())
             + sum(links[e].t_proc_ns for e in s.edges()[1:]) for s in streams}
    return Analysis(ports, bound)


def _settle(ports: dict[Edge, PortShare], streams: Sequence[ClassStream]) -> None:
    """Each port's class delays at the fixed point of bursts and delays (bursts grow along each route)."""
    delays: dict[Edge, dict[str, float]] = {edge: dict.fromkeys(SR_CLASSES, 0.0) for edge in ports}
    for _ in range(ROUNDS):
        bursts: dict[tuple[Edge, str], float] = {}
        for stream in streams:
            burst = float(stream.wire_bits)
            for edge in stream.edges():
                key = (edge, stream.sr_class)
                bursts[key] = bursts.get(key, 0.0) + burst
                burst += stream.rate_bps * delays[edge][stream.sr_class] / 1e9
        moved = 0.0
        for edge, share in ports.items():
            for cls in SR_CLASSES:
                if not share.reserved_bps[cls]:
                    continue
                delay = share.latency_ns[cls] + bursts[edge, cls] * 1e9 / share.reserved_bps[cls]
                moved = max(moved, abs(delay - delays[edge][cls]))
                delays[edge][cls] = delay
        if max((d for per in delays.values() for d in per.values()), default=0.0) > NO_BOUND_NS:
            break
        if moved < SETTLED_NS:
            for edge, share in ports.items():
                share.delay_ns = delays[edge]
            return
    raise Refusal("path", "the SR classes' bursts grow without bound around a cycle of ports", MAX_LATENCY_EXCEEDED)
