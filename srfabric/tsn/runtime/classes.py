"""The SR class streams (802.1Qav classes A and B) admitted beside a time-triggered schedule, each on one of its
shortest paths, and what every port reserves for them. Pure: the gate control lists come in, decisions go out.

A request takes the first of its ``k`` shortest paths on which every bound holds (``cbs_admission``); nothing is
kept when none does. The time-triggered schedule changes the windows the classes wait out, so a change of it is
checked here first (``check``): one that would break a bound already promised is to be refused.

Examples
--------
>>> from srfabric.tsn.model.network import Network
>>> net = Network.build([("h1", "host"), ("s1", "switch"), ("s2", "switch"), ("h2", "host")],
...                     [("h1", "s1"), ("s1", "s2"), ("s2", "h2")])
>>> planner = ClassPlanner(net)
>>> stream = planner.admit(ClassRequest("cam", "A", "h1", "h2", 125_000, 200, max_latency_ns=2_000_000), [])
>>> stream.route, round(planner.bounds([])["cam"])
(('h1', 's1', 's2', 'h2'), 977054)
>>> planner.admit(ClassRequest("cam2", "A", "h1", "h2", 125_000, 200, max_latency_ns=100_000), [])
Traceback (most recent call last):
...
srfabric.tsn.protect.cbs_classes.Refusal: max_latency_ns: cam2: its class A bound is 977.1 us, over the 100 us \
asked for; failure code 21
>>> sorted(planner.streams)
['cam']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from srfabric.errors import ModelError
from srfabric.tsn.gates.gcl import PortGcl
from srfabric.tsn.model.network import HOST, Network
from srfabric.tsn.model.paths import PathFinder
from srfabric.tsn.protect.cbs_admission import admit, keep_promises
from srfabric.tsn.protect.cbs_bound import Analysis, Edge, PortShare, analyse
from srfabric.tsn.protect.cbs_classes import (
    LATENCY_CHANGED,
    SR_CLASSES,
    ClassStream,
    PortWindows,
    Refusal,
    ShaperLimits,
    port_windows,
)
from srfabric.tsn.protect.cbs_settings import TRAFFIC_CLASS

MAX_HOPS = 16


@dataclass(frozen=True)
class ClassRequest:
    """What a talker asks for: one frame of at most ``max_frame_bytes`` every ``interval_ns`` to its listener."""

    id: str
    sr_class: str
    talker: str
    listener: str
    interval_ns: int
    max_frame_bytes: int
    max_latency_ns: int | None = None


class ClassPlanner:
    """SR class streams of one network; ``traffic_classes``: the traffic class each SR class queues in."""

    def __init__(self, network: Network, k_paths: int = 4, limits: ShaperLimits | None = None,
                 traffic_classes: Mapping[str, int] | None = None) -> None:
        self.network, self.k_paths, self.limits = network, k_paths, limits or ShaperLimits()
        self.traffic_classes = dict(traffic_classes or TRAFFIC_CLASS)
        self.finder = PathFinder(network, MAX_HOPS)
        self.streams: dict[str, ClassStream] = {}

    def windows(self, gcls: Sequence[PortGcl]) -> dict[Edge, PortWindows]:
        """Each gated port's windows: the longer closed time of the two classes' gates (the bound uses one)."""
        out = {}
        for gcl in gcls:
            both = [port_windows(gcl, self.traffic_classes[cls]) for cls in SR_CLASSES]
            out[gcl.node, gcl.peer] = max(both, key=lambda windows: windows.closed_ns)
        return out

    def admit(self, request: ClassRequest, gcls: Sequence[PortGcl],
              routes: Sequence[tuple[str, ...]] | None = None) -> ClassStream:
        """``request`` on the first of its shortest paths (or of ``routes``, talker to listener) where every
        bound holds, kept; or the refusal on the first (nothing kept)."""
        for role in ("talker", "listener"):
            if self.network.kinds.get(getattr(request, role)) != HOST:
                raise ModelError(role, f"{getattr(request, role)!r} is not a host of the network")
        if request.id in self.streams:
            raise Refusal("stream_id", f"{request.id} is admitted already", LATENCY_CHANGED)
        paths = list(routes) if routes is not None else \
            self.finder.k_shortest(request.talker, request.listener, self.k_paths)
        if not paths:
            raise ModelError("path", f"no path from {request.talker} to {request.listener}")
        windows, first = self.windows(gcls), None
        for path in paths:
            stream = ClassStream(request.id, request.sr_class, path, request.interval_ns, request.max_frame_bytes,
                                 request.max_latency_ns)
            try:
                admit(self.network, list(self.streams.values()), stream, windows, self.limits)
            except Refusal as refused:
                first = first or refused
                continue
            self.streams[stream.id] = stream
            return stream
        assert first is not None
        raise first

    def remove(self, stream_id: str) -> None:
        self.streams.pop(stream_id, None)

    def check(self, gcls: Sequence[PortGcl], what: str = "the new gate lists") -> None:
        """Whether the admitted streams keep their promises under these gate lists (a time-triggered change to
        be made, named by ``what``): ``Refusal`` (code 7) naming the first that would not."""
        keep_promises(self.streams.values(), self.bounds(gcls), what)

    def bounds(self, gcls: Sequence[PortGcl]) -> dict[str, float]:
        """Each admitted stream's bound (ns) under these gate lists."""
        return self.analysis(gcls).bound_ns

    def shares(self, gcls: Sequence[PortGcl]) -> dict[Edge, PortShare]:
        """Each port's reserved slopes and shaper settings (the schedule view's, the bridges')."""
        return self.analysis(gcls).ports

    def analysis(self, gcls: Sequence[PortGcl]) -> Analysis:
        """Bounds and shares at once, from one analysis (a view that shows both)."""
        return analyse(self.network, list(self.streams.values()), self.windows(gcls), self.limits)
